import Decant
import DecantTestSupport
import Foundation
import Testing

/// Transformable values as data in JSON and NDJSON (issue 39, point 2: `convert --decode-transformables`): written as
/// `{"archived": V}` when their keyed archive holds only Foundation's plain values, kept as base64 with a warning
/// otherwise, and archived again as `NSKeyedArchiver` lays them out when JSON is read into a store.
///
/// Corpus stores used: BookMigration `Model1.sqlite` (strings, with its model: decoded and round-tripped), CoreDataPlus
/// `SampleModel2_V1.sqlite` (app classes `Cover`, `Content`: kept as base64 with the warning), apptentive
/// `ATDataModelv3.sqlite` (Binary attributes holding archived dictionaries: left base64; their archives, written by
/// Foundation, decode and archive again to the same tree). A small model of our own (``TransformableFixtures``)
/// holds the shapes the corpus lacks: a nested dictionary of every plain class, mutable classes, app classes.
@Suite("Transformable values as JSON")
struct TransformableJSONTests {
    static let bookFolder = "\(Fixtures.appsPrefix)hwaxxer__BookMigration/BookMigration/"
    static let coreDataPlus = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"
    static let apptentive = "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/"

    // MARK: The value and its archive

    @Test("every shape archives as Foundation lays it out and decodes back to the same value; plistlib agrees")
    func everyShapeRoundTrips() throws {
        let value = TransformableFixtures.everyShape
        let data = try value.archivedData()
        #expect(try FoundationValue(archivedData: data) == value)
        // Foundation's layout: `$null` first, the root right after, class dictionaries after what their object holds.
        let list = try KeyedArchive(data: data)
        #expect(list.topKeys == ["root"])
        let tree = try TransformableFixtures.pythonTree(of: data)
        #expect(tree.contains(#""$classes": ["NSMutableDictionary", "NSDictionary", "NSObject"]"#), "\(tree)")
        #expect(tree.contains(#""$classname": "NSMutableString""#) && tree.contains(#""NS.string": "grows""#))
        #expect(tree.contains(#""NS.relative": "https://example.com/a?b=c""#) && tree.contains(#""NS.base": null"#))
        let python = try PythonOracle.text(
            """
            import plistlib, sys
            p = plistlib.load(open(sys.argv[1], 'rb'))
            o = p['$objects']
            root = o[p['$top']['root'].data]
            print(o[0], p['$top']['root'].data, o[root['$class'].data]['$classname'], root['$class'].data > 2,
                  p['$archiver'], p['$version'])
            """, input: data)
        #expect(python == "$null 1 NSDictionary True NSKeyedArchiver 100000")
    }

    @Test("a Foundation-written archive (the fixture's nested dictionary) archives again to the same tree")
    func fixtureArchiveRoundTrips() throws {
        let original = try TransformableFixtures.nestedDictionary()
        let value = try FoundationValue(archivedData: original)
        let again = try value.archivedData()
        #expect(try TransformableFixtures.pythonTree(of: again) == TransformableFixtures.pythonTree(of: original))
    }

    @Test("what is not Foundation's plain values is refused, saying why")
    func refusals() throws {
        func reason(_ data: Data) -> String {
            do {
                _ = try FoundationValue(archivedData: data)
                return "decoded"
            } catch {
                return error.reason
            }
        }
        #expect(reason(try TransformableFixtures.object("MyApp.Cover")).contains("class MyApp.Cover"))
        #expect(reason(try TransformableFixtures.object("NSOrderedSet")).contains("NSOrderedSet"))
        #expect(reason(try TransformableFixtures.cyclic()).contains("reference cycle"))
        #expect(reason(try TransformableFixtures.deep(100)).contains("deeper than 64"))
        #expect(reason(Data("hello".utf8)) == "not a keyed archive")
        let good = try TransformableFixtures.nestedDictionary()
        #expect(reason(good.prefix(good.count - 10)).hasPrefix("damaged archive"))
    }

    // MARK: Small stores of the shapes the corpus lacks

    /// A store of ``TransformableFixtures/model`` whose `payload`s are: 1 the fixture's nested dictionary, 2 every
    /// shape, 3 an app class, 4 nil, 5 bytes that are no archive, 6 an `NSOrderedSet`; SpecialItem 100 every shape.
    static func smallStore(in folder: URL) throws -> (URL, [Int64: Data?]) {
        let payloads: [Int64: Data?] = [
            1: try TransformableFixtures.nestedDictionary(), 2: try TransformableFixtures.everyShape.archivedData(),
            3: try TransformableFixtures.object("MyApp.Cover"), 4: nil, 5: Data("not an archive".utf8),
            6: try TransformableFixtures.object("NSOrderedSet"), 100: try TransformableFixtures.everyShape.archivedData(),
        ]
        let url = try TransformableReportTests.store(
            payloads: payloads, blobs: [1: try TransformableFixtures.nestedDictionary()], in: folder)
        return (url, payloads)
    }

    /// The `payload` and `blob` bytes of every object of a store of ``TransformableFixtures/model``, by primary key.
    static func payloads(of store: URL) throws -> (payload: [Int64: Data], blob: [Int64: Data]) {
        var reader = try SQLiteStoreReader(store: SQLiteStore(contentsOf: store), model: TransformableFixtures.model)
        var payload: [Int64: Data] = [:]
        var blob: [Int64: Data] = [:]
        for record in try RecordDump.records(of: &reader).values.flatMap({ $0 }) {
            guard case .primaryKey(let key) = record.id else { continue }
            if case .transformable(let data) = record.values[1] { payload[key] = data }
            if case .data(let data) = record.values[0] { blob[key] = data }
        }
        return (payload, blob)
    }

    @Test("store → NDJSON and JSON with --decode-transformables → store: decoded values equal, the rest byte for byte",
        arguments: ["ndjson", "json"])
    func smallStoreRoundTrip(format: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, payloads) = try Self.smallStore(in: folder)
        var options = FormatOptions(bundle: TransformableFixtures.bundle)
        options.json.decodesTransformables = true
        let json = folder.appendingPathComponent("items.\(format)")
        let out = try StoreConversion.convert(from: store, to: json, options: options)
        #expect(try DocumentSchema.validate(json, lines: format == "ndjson") == "valid")
        let text = try String(contentsOf: json, encoding: .utf8)
        #expect(text.contains(#""payload":{"archived":{"name":"n","info":{"$class":"NSMutableDictionary","tags":"#))
        #expect(text.contains(#""$$class":"a key, not a tag""#) && text.contains(#""odd":{"$real":"NaN"}"#))
        #expect(text.contains(#""ratio":2.0,"#) && text.contains(#""when":{"$date":"#))
        // The Binary attribute holds the same archive and stays base64.
        #expect(text.contains(#""blob":"YnBsaXN0MDD"#))
        // Item: 3 of 5 values kept (an app class, no archive, NSOrderedSet); SpecialItem: its one value decoded.
        #expect(out.warnings.map(\.kind) == [.transformableKeptAsData])
        let warning = try #require(out.warnings.first)
        #expect(warning.location?.entity == "Item" && warning.location?.keyPath == "payload")
        #expect(warning.location?.object == "Item/p3")
        #expect(
            warning.message.hasPrefix(
                "3 of 5 transformable values kept as base64, not Foundation's plain values; the first, Item/p3, holds "
                    + "an object of class MyApp.Cover"), "\(warning.message)")

        let back = folder.appendingPathComponent("back.sqlite")
        _ = try StoreConversion.convert(from: json, to: back, options: FormatOptions(bundle: TransformableFixtures.bundle))
        let (read, blobs) = try Self.payloads(of: back)
        #expect(Set(read.keys) == [1, 2, 3, 5, 6, 100])
        for (key, original) in payloads {
            guard let original else { continue }
            let again = try #require(read[key])
            if [3, 5, 6].contains(key) {
                #expect(again == original, "Item/p\(key) kept byte for byte")
            } else {
                #expect(try FoundationValue(archivedData: again) == FoundationValue(archivedData: original))
                #expect(try TransformableFixtures.pythonTree(of: again) == TransformableFixtures.pythonTree(of: original))
            }
        }
        #expect(blobs[1] == (payloads[1] ?? nil))
    }

    @Test("a Transformable value's {\"archived\": V} that breaks the spelling stops the run, naming the place")
    func badArchivedValues() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, _) = try Self.smallStore(in: folder)
        let json = folder.appendingPathComponent("items.ndjson")
        var options = FormatOptions(bundle: TransformableFixtures.bundle)
        options.json.decodesTransformables = true
        _ = try StoreConversion.convert(from: store, to: json, options: options)
        let lines = try String(contentsOf: json, encoding: .utf8).split(separator: "\n").map(String.init)
        let cases = [
            (#"{"$date":"yesterday"}"#, "$date at archived"),
            (#"{"$mystery":1}"#, "found $mystery"),
            (#"{"$class":"NSMutableArray","$set":[]}"#, "NSSet or NSMutableSet"),
            (#"{"$url":"a","b":1}"#, "$url alone"),
            (#"{"a":{"$uuid":"nope"}}"#, "in $uuid at archived.a"),
        ]
        for (bad, expected) in cases {
            let edited = [lines[0], #"{"@id":"Item/p9","blob":null,"payload":{"archived":"# + bad + #"},"secure":null}"#]
            let input = folder.appendingPathComponent("bad.ndjson")
            try? FileManager.default.removeItem(at: input)
            try Data((edited.joined(separator: "\n") + "\n").utf8).write(to: input)
            let error = #expect(throws: DecantError.self) {
                try StoreConversion.convert(
                    from: input, to: folder.appendingPathComponent("bad.sqlite"),
                    options: FormatOptions(bundle: TransformableFixtures.bundle))
            }
            #expect(error?.code == .malformedInput)
            #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
            #expect(error?.location?.line == 2, "\(bad)")
        }
    }

    // MARK: Corpus

    @Test("BookMigration: the strings of fileURL decode, and come back as archives of the same strings")
    func bookMigration() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(from: Fixtures.corpus(Self.bookFolder + "Model.xcdatamodeld"))
        let store = Fixtures.corpus(Self.bookFolder + "Model1.sqlite")
        var options = FormatOptions(bundle: bundle)
        options.json.decodesTransformables = true
        let json = folder.appendingPathComponent("books.ndjson")
        let out = try StoreConversion.convert(from: store, to: json, options: options)
        #expect(out.warnings.isEmpty)
        let text = try String(contentsOf: json, encoding: .utf8)
        #expect(text.contains(#""fileURL":{"archived":"The Trial.file"}"#))
        let back = folder.appendingPathComponent("back.sqlite")
        _ = try StoreConversion.convert(from: json, to: back, options: FormatOptions(bundle: bundle))
        let model = try SQLiteStore(contentsOf: store).resolveModel(bundle: bundle)
        let before = try Self.fileURLs(of: store, model: model)
        let after = try Self.fileURLs(of: back, model: model)
        #expect(before.count == 4 && Set(before.keys) == Set(after.keys))
        for (key, original) in before {
            let again = try #require(after[key])
            #expect(try FoundationValue(archivedData: again) == FoundationValue(archivedData: original))
            #expect(try TransformableFixtures.pythonTree(of: again) == TransformableFixtures.pythonTree(of: original))
            // Same bytes but for the order of the top-level keys, which Foundation's versions lay out differently.
            #expect(again.count == original.count)
        }
    }

    static func fileURLs(of store: URL, model: ObjectModel) throws -> [Int64: Data] {
        var reader = try SQLiteStoreReader(store: SQLiteStore(contentsOf: store), model: model)
        var found: [Int64: Data] = [:]
        for record in try RecordDump.records(of: &reader)["Book"] ?? [] {
            guard case .primaryKey(let key) = record.id,
                let index = RecordLayout(entity: "Book", in: model)?.attributes.firstIndex(where: { $0.name == "fileURL" }),
                case .transformable(let data) = record.values[index]
            else { continue }
            found[key] = data
        }
        return found
    }

    @Test("CoreDataPlus: app classes stay base64, one warning per attribute with the count and the first object")
    func coreDataPlus() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = FormatOptions()
        options.json.decodesTransformables = true
        let json = folder.appendingPathComponent("sample.ndjson")
        let out = try StoreConversion.convert(from: Fixtures.corpus(Self.coreDataPlus), to: json, options: options)
        let kept = out.warnings.filter { $0.kind == .transformableKeptAsData }
        #expect(kept.map { "\($0.location?.entity ?? "").\($0.location?.keyPath ?? "")" }
            == ["Book.cover", "GraphicNovel.cover", "Page.content"])
        #expect(kept.first?.message.hasPrefix("51 of 51 transformable values kept as base64") == true)
        #expect(kept.first?.message.contains("class CoreDataPlus_Tests.Cover") == true)
        #expect(kept.last?.message.hasPrefix("4970 of 4970") == true && kept.last?.location?.object == "Page/p1")
        let text = try String(contentsOf: json, encoding: .utf8)
        #expect(!text.contains(#"{"archived":"#))
        // Back into a store: the same bytes.
        let back = folder.appendingPathComponent("back.sqlite")
        let model = try SQLiteStore(contentsOf: Fixtures.corpus(Self.coreDataPlus)).resolveModel(bundle: nil)
        let bundle = ModelBundle(name: "S", versions: [model], currentVersionName: model.versionName, sourceKind: .storeCache)
        _ = try StoreConversion.convert(from: json, to: back, options: FormatOptions(bundle: bundle), validation: .none)
        let before = try JSONStoreRoundTripTests.cells(ofStoreAt: Fixtures.corpus(Self.coreDataPlus), model: model)
        let after = try JSONStoreRoundTripTests.cells(ofStoreAt: back, model: model)
        #expect(before == after)
    }

    @Test("apptentive: Binary attributes stay base64; the dictionaries Foundation archived in them archive again alike")
    func apptentive() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(
            from: Fixtures.corpus(Self.apptentive + "Apptentive/Model/ATDataModel.xcdatamodeld"))
        let store = Fixtures.corpus(Self.apptentive + "ApptentiveTests/data/ATDataModelv3.sqlite")
        var options = FormatOptions(bundle: bundle)
        options.json.decodesTransformables = true
        let json = folder.appendingPathComponent("events.ndjson")
        let out = try StoreConversion.convert(from: store, to: json, options: options)
        #expect(out.warnings.filter { $0.kind == .transformableKeptAsData }.isEmpty)
        let text = try String(contentsOf: json, encoding: .utf8)
        #expect(!text.contains(#"{"archived":"#))
        // Foundation's own archives (NSMutableDictionary of strings and numbers) decode and archive again to the
        // same tree.
        let model = try SQLiteStore(contentsOf: store).resolveModel(bundle: bundle)
        var reader = try SQLiteStoreReader(store: SQLiteStore(contentsOf: store), model: model)
        var archives = 0
        for record in try RecordDump.records(of: &reader).values.flatMap({ $0 }) {
            for case .data(let data) in record.values where KeyedArchive.looksLikeKeyedArchive(data) {
                let value = try FoundationValue(archivedData: data)
                #expect(
                    try TransformableFixtures.pythonTree(of: value.archivedData())
                        == TransformableFixtures.pythonTree(of: data))
                archives += 1
            }
        }
        #expect(archives >= 1)
    }
}
