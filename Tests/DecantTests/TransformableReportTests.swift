import Decant
import DecantTestSupport
import Foundation
import Testing

/// The Transformable audit of `inspect` (issue 39, points 1 and 4): on the corpus stores that hold archives, and on
/// small stores of a model of its own for the shapes the corpus lacks (Foundation classes outside the secure list, a
/// nested dictionary, values that are no archive, and hostile archives: truncated, damaged, too deep, cyclic).
///
/// Corpus stores used: CoreDataPlus `SampleModel2_V1.sqlite` (custom transformers, app classes `Cover` and `Content`;
/// its own Z_MODELCACHE), BookMigration `Model1.sqlite` (default transformer, strings), apptentive
/// `ATDataModelv3.sqlite` and `ATDataModelv4.sqlite` (Binary attributes the SDK filled with its own archives of
/// dictionaries; read with the model source beside them).
@Suite("Transformable values audit")
struct TransformableReportTests {
    // MARK: Corpus

    @Test("CoreDataPlus: custom transformers holding app classes fail NSSecureUnarchiveFromData, named per object")
    func coreDataPlus() throws {
        let store = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let report = try StoreReport(store: store, bundle: nil)
        let audits = try #require(report.transformables).attributes
        #expect(audits.map { "\($0.entity).\($0.attribute)" } == ["Book.cover", "Page.content"])
        let cover = try #require(audits.first)
        #expect(cover.transformer == "CoverTransformer" && cover.valueTransformerName == "CoverTransformer")
        // Book's 51 objects and its sub-entity GraphicNovel's one.
        #expect((cover.values, cover.nilValues, cover.archives, cover.notArchives, cover.unreadable) == (52, 0, 52, 0, 0))
        #expect(cover.classes.map(\.name) == ["CoreDataPlus_Tests.Cover", "NSString"])
        #expect(cover.classes.map(\.objects) == [52, 52])
        #expect(!cover.decodesSecurely && cover.failingValues == 52)
        #expect(cover.failingClasses.map(\.name) == ["CoreDataPlus_Tests.Cover"])
        #expect(cover.failingClasses.first?.objects == ["Book/p1", "Book/p2", "Book/p3", "Book/p4", "Book/p5"])
        let content = try #require(audits.last)
        #expect((content.values, content.archives, content.failingValues) == (4970, 4970, 4970))
        #expect(content.failingClasses.map(\.name) == ["Content"])
        #expect(report.transformables?.warnings.isEmpty == true)
        #expect(report.text.contains("CoreDataPlus_Tests.Cover not allowed: 52 values (Book/p1, Book/p2"))
    }

    @Test("BookMigration: the default transformer (NSKeyedUnarchiveFromData) over strings decodes securely")
    func bookMigration() throws {
        let folder = "\(Fixtures.appsPrefix)hwaxxer__BookMigration/BookMigration/"
        let bundle = try ModelBundle.load(from: Fixtures.corpus(folder + "Model.xcdatamodeld"))
        let report = try StoreReport(store: Fixtures.corpus(folder + "Model1.sqlite"), bundle: bundle)
        let audit = try #require(report.transformables?.attributes.first)
        #expect(report.transformables?.attributes.count == 1)
        #expect(audit.entity == "Book" && audit.attribute == "fileURL" && audit.attributeType == "Transformable")
        #expect(audit.valueTransformerName == nil && audit.transformer == "NSKeyedUnarchiveFromData")
        #expect((audit.values, audit.archives) == (4, 4))
        #expect(audit.classes.map(\.name) == ["NSString"] && audit.decodesSecurely)
        #expect(report.text.contains("Book.fileURL  transformer: default (NSKeyedUnarchiveFromData)"))
    }

    @Test("apptentive: Binary attributes the SDK archived dictionaries into are listed; images and nils are not archives")
    func apptentive() throws {
        let data = "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/"
        let bundle = try ModelBundle.load(
            from: Fixtures.corpus(
                "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld"))
        let v4 = try StoreReport(store: Fixtures.corpus(data + "ATDataModelv4.sqlite"), bundle: bundle)
        let events = try #require(v4.transformables?.attributes)
        #expect(events.map { "\($0.entity).\($0.attribute)" } == ["ATEvent.dictionaryData"])
        #expect(events.first?.attributeType == "Binary" && events.first?.transformer == nil)
        #expect(events.first?.archives == 7 && events.first?.decodesSecurely == true)
        #expect(events.first?.classes.map(\.name) == ["NSMutableDictionary"])

        let v3 = try StoreReport(store: Fixtures.corpus(data + "ATDataModelv3.sqlite"), bundle: bundle)
        let custom = try #require(v3.transformables?.attributes.first { $0.attribute == "customData" })
        #expect((custom.values, custom.nilValues, custom.archives) == (3, 2, 1))
        #expect(Set(custom.classes.map(\.name)) == ["NSMutableDictionary", "NSString", "NSNumber"])
        #expect(custom.decodesSecurely)
    }

    @Test("Moody: a custom transformer that writes bytes of its own is said to hold no archive")
    func moody() throws {
        let store = Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 3.moody")
        let report = try StoreReport(store: store, bundle: nil)
        let colors = try #require(report.transformables?.attributes.first)
        #expect(colors.transformer == "ColorsTransformer")
        #expect((colors.values, colors.archives, colors.notArchives, colors.unreadable) == (4, 0, 4, 0))
        #expect(colors.notArchiveObjects == ["Mood/p1", "Mood/p2", "Mood/p3", "Mood/p4"])
        #expect(!colors.decodesSecurely && colors.classes.isEmpty)
        #expect(report.text.contains("no value is a keyed archive: ColorsTransformer writes bytes of its own"))
    }

    @Test("the README and docs/USAGE.md show the audit as the tool prints it")
    func documentedOutput() throws {
        let readme = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let usage = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/USAGE.md"), encoding: .utf8)
        let coreDataPlus = try StoreReport(
            store: Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"),
            bundle: nil)
        let section = try #require(coreDataPlus.transformables).lines.joined(separator: "\n")
        #expect(readme.contains(section), "README.md differs from:\n\(section)")
        #expect(usage.contains(section), "docs/USAGE.md differs from:\n\(section)")
        let moody = try StoreReport(
            store: Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 3.moody"), path: "Moody 3.moody",
            bundle: nil)
        #expect(usage.contains(moody.text), "docs/USAGE.md differs from:\n\(moody.text)")
    }

    // MARK: Small stores of the shapes the corpus lacks

    /// Writes ``TransformableFixtures/batches(payloads:secure:blobs:)`` into a new store in `folder`.
    static func store(
        payloads: [Int64: Data?], secure: [Int64: Data] = [:], blobs: [Int64: Data] = [:], in folder: URL
    ) throws -> URL {
        let url = folder.appendingPathComponent("Items.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: TransformableFixtures.model)
        for batch in TransformableFixtures.batches(payloads: payloads, secure: secure, blobs: blobs) {
            try writer.write(batch)
        }
        try writer.finish()
        return url
    }

    @Test("secure classes pass, nested or not; NSOrderedSet, NSAttributedString and app classes fail, named per object")
    func secureDecoding() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let payloads: [Int64: Data?] = [
            1: try TransformableFixtures.nestedDictionary(),
            2: try TransformableFixtures.object("NSOrderedSet"),
            3: try TransformableFixtures.object("MyApp.Cover"),
            4: nil,
            5: try TransformableFixtures.object("NSMutableString", classes: ["NSMutableString", "NSString", "NSObject"]),
            6: try TransformableFixtures.object("MyApp.Cover"),
            100: try TransformableFixtures.object("NSAttributedString"),
        ]
        let url = try Self.store(
            payloads: payloads, secure: [1: try TransformableFixtures.nestedDictionary()],
            blobs: [1: try TransformableFixtures.nestedDictionary(), 2: Data([0x89, 0x50, 0x4E, 0x47])], in: folder)
        let report = try StoreReport(store: url, bundle: TransformableFixtures.bundle)
        #expect(report.model?.matchedVersion == "Items")
        let audits = try #require(report.transformables?.attributes)
        #expect(audits.map(\.attribute) == ["payload", "secure", "blob"])
        let payload = audits[0]
        #expect((payload.values, payload.nilValues, payload.archives) == (7, 1, 6))
        #expect(payload.transformer == "NSKeyedUnarchiveFromData" && payload.valueTransformerName == nil)
        #expect(!payload.decodesSecurely && payload.failingValues == 4)
        #expect(payload.failingClasses.map(\.name) == ["MyApp.Cover", "NSAttributedString", "NSOrderedSet"])
        #expect(payload.failingClasses.map(\.objects) == [["Item/p3", "Item/p6"], ["SpecialItem/p100"], ["Item/p2"]])
        let classes = Dictionary(uniqueKeysWithValues: payload.classes.map { ($0.name, $0) })
        #expect(classes["NSMutableDictionary"]?.isSecurelyDecodable == true)
        #expect(classes["NSMutableString"]?.isSecurelyDecodable == true)
        #expect(classes["NSOrderedSet"]?.isSecurelyDecodable == false)
        #expect(classes["NSString"]?.values == 6)
        for name in ["NSDictionary", "NSMutableArray", "NSDate", "NSUUID", "NSURL", "NSNull", "NSNumber"] {
            #expect(classes[name]?.objects == 1, "\(name)")
        }

        let secure = audits[1]
        #expect(secure.transformer == "NSSecureUnarchiveFromData" && secure.decodesSecurely)
        #expect((secure.values, secure.nilValues, secure.archives) == (7, 6, 1))
        // The Binary attribute: one archive of secure classes, an image that is no archive and does not count against.
        let blob = audits[2]
        #expect(blob.attributeType == "Binary" && blob.transformer == nil)
        #expect((blob.archives, blob.notArchives, blob.decodesSecurely) == (1, 1, true))

        let text = report.text
        #expect(text.contains("Item.payload  transformer: default (NSKeyedUnarchiveFromData)"))
        #expect(text.contains("NSSecureUnarchiveFromData: would fail on 4 values of 7"))
        #expect(text.contains("MyApp.Cover not allowed: 2 values (Item/p3, Item/p6)"))
        #expect(text.contains("Item.secure  transformer: NSSecureUnarchiveFromData"))
    }

    @Test("hostile values are unreadable with a warning naming entity, object and attribute; the audit goes on")
    func hostileValues() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = try TransformableFixtures.nestedDictionary()
        var flipped = good
        // The trailer's offset-table position, pointed past the end.
        flipped[flipped.count - 1] ^= 0xFF
        flipped[flipped.count - 2] ^= 0xFF
        let payloads: [Int64: Data?] = [
            1: good,
            2: good.prefix(good.count - 10),
            3: flipped,
            4: try TransformableFixtures.deep(200),
            5: try TransformableFixtures.cyclic(),
            6: Data(#"{"json": true}"#.utf8),
            7: good,
        ]
        let url = try Self.store(payloads: payloads, in: folder)
        let report = try StoreReport(store: url, path: "Items.sqlite", bundle: TransformableFixtures.bundle)
        let transformables = try #require(report.transformables)
        let payload = try #require(transformables.attributes.first)
        #expect((payload.values, payload.archives, payload.notArchives, payload.unreadable) == (7, 2, 1, 4))
        #expect(payload.unreadableObjects == ["Item/p2", "Item/p3", "Item/p4", "Item/p5"])
        #expect(payload.notArchiveObjects == ["Item/p6"])
        #expect(!payload.decodesSecurely && payload.failingValues == 0)
        let warnings = transformables.warnings
        #expect(warnings.count == 4)
        #expect(warnings.allSatisfy { $0.kind == .unreadableTransformable })
        #expect(warnings.map(\.location?.object) == ["Item/p2", "Item/p3", "Item/p4", "Item/p5"])
        #expect(warnings.allSatisfy { $0.location?.entity == "Item" && $0.location?.keyPath == "payload" })
        #expect(warnings.allSatisfy { $0.location?.path == "Items.sqlite" })
        #expect(warnings[2].message.contains("deeper than 64"))
        #expect(warnings[3].message.contains("cycle"))
        #expect(report.text.contains("unreadable: 4 values (Item/p2, Item/p3, Item/p4, Item/p5)"))
        #expect(report.text.contains("not a keyed archive: 1 value (Item/p6)"))
    }

    @Test("a hostile store naming many classes and many unreadable values keeps bounded lists")
    func boundedLists() throws {
        var audit = TransformableAudit(model: TransformableFixtures.model, path: "Items.sqlite")
        guard let layout = RecordLayout(entity: "Item", in: TransformableFixtures.model) else { return }
        var batch = RecordBatch(layout: layout)
        let broken = Data("bplist00 $archiver".utf8)
        for key in Int64(1)...450 {
            let payload = key <= 300 ? try TransformableFixtures.object("Hostile\(key)") : broken
            batch.append(Record(entity: "Item", id: .primaryKey(key), values: [nil, .transformable(payload), nil]))
        }
        audit.add(batch)
        let report = audit.report
        let payload = try #require(report.attributes.first)
        #expect(payload.values == 450 && payload.unreadable == 150)
        #expect(payload.classes.count == TransformableAudit.classLimit)
        #expect(payload.unlistedClassObjects > 0)
        #expect(payload.unreadableObjects.count == TransformableAudit.namedObjectLimit)
        #expect(payload.failingClasses.allSatisfy { $0.objects.count <= TransformableAudit.namedObjectLimit })
        #expect(payload.failingValues == 300)
        #expect(report.warnings.count == TransformableAudit.warningLimit && report.omittedWarnings == 50)
        #expect(report.lines.count < 300)
    }

    @Test("XML and binary stores get the same audit through their readers")
    func xmlAndBinaryStores() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let payloads: [Int64: Data?] = [
            1: try TransformableFixtures.nestedDictionary(), 2: try TransformableFixtures.object("MyApp.Cover"), 3: nil,
            100: try TransformableFixtures.object("NSOrderedSet"),
        ]
        let batches = TransformableFixtures.batches(payloads: payloads)
        let model = TransformableFixtures.model
        let xml = folder.appendingPathComponent("Items.xml")
        let xmlWriter = try XMLStoreWriter(creating: xml, model: model)
        for batch in batches { try xmlWriter.write(batch) }
        try xmlWriter.finish()
        let binary = folder.appendingPathComponent("Items.binarystore")
        let binaryWriter = try BinaryStoreWriter(creating: binary, model: model)
        for batch in batches { try binaryWriter.write(batch) }
        try binaryWriter.finish()

        let records = try RecordsReport(input: xml, options: FormatOptions(bundle: TransformableFixtures.bundle))
        let fromBinary = try StoreReport(store: binary, bundle: TransformableFixtures.bundle)
        for report in [records.transformables, fromBinary.transformables] {
            let payload = try #require(report?.attributes.first)
            #expect((payload.values, payload.nilValues, payload.archives, payload.failingValues) == (4, 1, 3, 2))
            #expect(payload.failingClasses.map(\.name) == ["MyApp.Cover", "NSOrderedSet"])
            // Each store names its objects its own way (an XML store by its ids, a binary store renumbers).
            #expect(payload.failingClasses.map { $0.objects.map { $0.prefix { $0 != "/" } } } == [["Item"], ["SpecialItem"]])
            #expect(payload.classes.contains { $0.name == "NSMutableDictionary" && $0.isSecurelyDecodable })
        }
        #expect(records.text.contains("MyApp.Cover not allowed: 1 value (Item/"))
        #expect(fromBinary.text.contains("NSOrderedSet not allowed: 1 value (SpecialItem/"))
    }

    @Test("a model without Transformable or Binary attributes adds nothing to the store report")
    func nothingToAudit() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
        let model = ObjectModel(versionName: "Notes", entities: [note], versionIdentifiers: [])
        let url = folder.appendingPathComponent("Notes.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: model)
        try writer.finish()
        let bundle = ModelBundle(name: "Notes", versions: [model], currentVersionName: "Notes", sourceKind: .xcdatamodeld)
        #expect(try StoreReport(store: url, bundle: bundle).transformables == nil)
        #expect(TransformableAudit(model: model, path: "x").isEmpty)
    }
}
