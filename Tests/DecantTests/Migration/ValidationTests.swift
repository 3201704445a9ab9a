import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant validate` and the same checks before `migrate` writes.
@Suite("Validation")
struct ValidationTests {
    /// `Folder{name (unique), notes (to-many, no inverse, at most 2)}`, `Note{title (required, 2–10 chars, a
    /// capital first), rank (0–5), due (in 2001), folder (to-one)}`.
    static func model() -> ObjectModel {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.uniquenessConstraints = [["name"]]
        var notes = Relationship(name: "notes", destination: "Note", toMany: true)
        notes.maxCount = 2
        folder.relationships = [notes]
        var title = Attribute(name: "title", type: .string)
        title.minValue = "2"
        title.maxValue = "10"
        title.regularExpression = "[A-Z].*"
        var rank = Attribute(name: "rank", type: .integer16, isOptional: true)
        rank.minValue = "0"
        rank.maxValue = "5"
        var due = Attribute(name: "due", type: .date, isOptional: true)
        due.minDate = 0
        due.maxDate = 365 * 86400
        var note = Entity(name: "Note")
        note.attributes = [title, rank, due]
        note.relationships = [Relationship(name: "folder", destination: "Folder")]
        return ObjectModel(versionName: "Rules", entities: [folder, note])
    }

    static func store(in folder: URL) throws -> (URL, ModelBundle) {
        let model = Self.model()
        let url = folder.appendingPathComponent("rules.sqlite")
        let day = Date(timeIntervalSinceReferenceDate: 86400)
        try MigrationFixtures.writeStore(
            at: url,
            model: model,
            records: [
                MigrationFixtures.record(
                    "Folder",
                    1,
                    in: model,
                    ["name": "home"],
                    relationships: ["notes": .toMany([.pk("Note", 1)])]
                ),
                MigrationFixtures.record("Folder", 2, in: model, ["name": "elsewhere"]),
                MigrationFixtures.record(
                    "Folder",
                    3,
                    in: model,
                    ["name": "work"],
                    relationships: ["notes": .toMany([.pk("Note", 2), .pk("Note", 3), .pk("Note", 4)])]
                ),
                MigrationFixtures.record("Note", 1, in: model, ["title": "Fine", "rank": 3, "due": .date(day)]),
                MigrationFixtures.record("Note", 2, in: model, ["rank": 1]),
                MigrationFixtures.record("Note", 3, in: model, ["title": "lowercase"]),
                MigrationFixtures.record("Note", 4, in: model, ["title": "Far too long a title"]),
                MigrationFixtures.record("Note", 5, in: model, ["title": "Ranked", "rank": 9]),
                MigrationFixtures.record(
                    "Note",
                    6,
                    in: model,
                    ["title": "Late", "due": .date(day.addingTimeInterval(400 * 86400))]
                ),
                MigrationFixtures.record(
                    "Note",
                    7,
                    in: model,
                    ["title": "Lost"],
                    relationships: ["folder": .toOne(.pk("Folder", 99))]
                ),
            ]
        )
        return (url, MigrationFixtures.bundle("Rules", [model]))
    }

    @Test func everyRuleIsCheckedAndListed() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        var options = StoreValidation.Options(bundle: bundle)
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        options.rejects = rejects
        let report = try StoreValidation.validate(store: store, options: options)
        #expect(report.objects == ["Folder": 3, "Note": 7])
        #expect(
            report.failures == [
                "Folder.notes maxCount": 1, "Note.title optional": 1, "Note.title regex": 1,
                "Note.title max": 1, "Note.rank max": 1, "Note.due max": 1, "Note.folder dangling": 1,
            ]
        )
        let lines = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(
            lines.contains(
                #"{"entity":"Note","object":"Note/p7","property":"folder","rule":"dangling","value":"Folder/p99"}"#
            )
        )
        #expect(lines.contains(#"{"entity":"Note","object":"Note/p5","property":"rank","rule":"max","value":"9"}"#))
    }

    @Test func withoutRejectsTheFirstFailureStopsTheRun() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        let error = try #require(throws: DecantError.self) {
            try StoreValidation.validate(store: store, options: StoreValidation.Options(bundle: bundle))
        }
        #expect(error.code == .validationFailed)
        #expect(error.location?.object == "Folder/p3")
        #expect(
            error.message
                == "Folder/p3: notes (3) breaks the rule maxCount; give --rejects FILE to list such objects and go on"
        )
    }

    /// Core Data checks a to-many's count only against its minimum and maximum: an empty non-optional to-many with no
    /// minimum is valid (it was reported as "is nil, but the model requires a value"), an optional one may be empty
    /// whatever its minimum, a non-optional one with a minimum must reach it.
    @Test func anEmptyToManyIsNotNil() throws {
        func shelf(_ name: String, optional: Bool, minCount: Int) -> Relationship {
            var books = Relationship(name: name, destination: "Book", toMany: true)
            books.isOptional = optional
            books.minCount = minCount
            return books
        }
        var library = Entity(name: "Shelf")
        library.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        library.relationships = [
            shelf("required", optional: false, minCount: 0), shelf("optionalTwo", optional: true, minCount: 2),
            shelf("requiredTwo", optional: false, minCount: 2),
        ]
        let model = ObjectModel(versionName: "Shelves", entities: [library, Entity(name: "Book")])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("shelves.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: model,
            records: [
                // Without an inverse, a book belongs to one shelf per relationship (its hidden key names the shelf).
                MigrationFixtures.record("Book", 1, in: model), MigrationFixtures.record("Book", 2, in: model),
                MigrationFixtures.record("Book", 3, in: model), MigrationFixtures.record("Book", 4, in: model),
                MigrationFixtures.record("Book", 5, in: model),
                MigrationFixtures.record(
                    "Shelf", 1, in: model, relationships: ["requiredTwo": .toMany([.pk("Book", 1), .pk("Book", 2)])]),
                MigrationFixtures.record(
                    "Shelf", 2, in: model,
                    relationships: [
                        "optionalTwo": .toMany([.pk("Book", 3)]), "requiredTwo": .toMany([.pk("Book", 4), .pk("Book", 5)]),
                    ]),
                MigrationFixtures.record("Shelf", 3, in: model),
            ])
        var options = StoreValidation.Options(bundle: MigrationFixtures.bundle("Shelves", [model]))
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        options.rejects = rejects
        let report = try StoreValidation.validate(store: store, options: options)
        #expect(report.failures == ["Shelf.optionalTwo minCount": 1, "Shelf.requiredTwo minCount": 1])
        let lines = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.sorted() == [
            #"{"entity":"Shelf","object":"Shelf/p2","property":"optionalTwo","rule":"minCount","value":"1"}"#,
            #"{"entity":"Shelf","object":"Shelf/p3","property":"requiredTwo","rule":"minCount","value":"0"}"#,
        ])
    }

    /// The corpus's shape: Sync's model 233 has `Presentation.slides`, an ordered many-to-many that is not optional
    /// and has no minimum. A presentation with no slides is valid (it was refused as "slides is nil").
    @Test func aPresentationWithNoSlidesIsValid() throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus("3lvis__Sync/Tests/Sync/Models/233.xcdatamodeld"))
        let model = try #require(bundle.versions.first)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("233.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: model,
            records: [
                MigrationFixtures.record("Presentation", 1, in: model, ["id": 1]),
                MigrationFixtures.record(
                    "Presentation", 2, in: model, ["id": 2], relationships: ["slides": .toMany([.pk("Slide", 1)])]),
                MigrationFixtures.record(
                    "Slide", 1, in: model, ["id": 1], relationships: ["presentation": .toMany([.pk("Presentation", 2)])]),
            ])
        var options = StoreValidation.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreValidation.validate(store: store, options: options)
        #expect(report.objects == ["Presentation": 2, "Slide": 1])
        #expect(report.failures == [:])
    }

    /// Core Data measures a string's length as NSString does, in UTF-16 code units: an emoji is 2 long, and so is an é
    /// written as e and a combining accent (Swift's character count made both 1).
    @Test func aStringsLengthIsCountedAsNSStringCountsIt() throws {
        var word = Attribute(name: "word", type: .string, isOptional: true)
        word.minValue = "2"
        word.maxValue = "3"
        var entry = Entity(name: "Entry")
        entry.attributes = [word]
        let model = ObjectModel(versionName: "Words", entities: [entry])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("words.sqlite")
        let words: [Value] = ["e\u{301}", "👍", "👍👍", "a", "abcd", "abc"]
        try MigrationFixtures.writeStore(
            at: store, model: model,
            records: words.enumerated().map { MigrationFixtures.record("Entry", Int64($0 + 1), in: model, ["word": $1]) })
        var options = StoreValidation.Options(bundle: MigrationFixtures.bundle("Words", [model]))
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        options.rejects = rejects
        let report = try StoreValidation.validate(store: store, options: options)
        #expect(report.failures == ["Entry.word max": 2, "Entry.word min": 1])
        let failing = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n")
            .compactMap { $0.split(separator: ",").first { $0.contains("object") } }
        #expect(failing.sorted() == [#""object":"Entry/p3""#, #""object":"Entry/p4""#, #""object":"Entry/p5""#])
    }

    /// Tags in two versions: `T1` with `attributes`, `T2` adding the uniqueness constraints `unique`.
    static func tags(_ attributes: [Attribute], unique: [[String]]) -> ModelBundle {
        var tag = Entity(name: "Tag")
        tag.attributes = attributes
        var constrained = tag
        constrained.uniquenessConstraints = unique
        return MigrationFixtures.bundle(
            "Tags",
            [ObjectModel(versionName: "T1", entities: [tag]), ObjectModel(versionName: "T2", entities: [constrained])]
        )
    }

    @Test func uniquenessIsCheckedBeforeTheWriter() throws {
        let bundle = Self.tags([Attribute(name: "name", type: .string, isOptional: true)], unique: [["name"]])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("t1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: ["a", "b", "a"].enumerated().map {
                MigrationFixtures.record("Tag", Int64($0 + 1), in: v1, ["name": .string($1)])
            }
        )
        let output = folder.appendingPathComponent("t2.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.message.hasPrefix("Tag/p3: another Tag has the same name (uniqueness constraint)"))
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.first?.rows["Tag"] == MigrationLedger.Row(read: 3, written: 2, rejected: 1))
        #expect(try MigrationFixtures.read(output, bundle: bundle)["Tag"]?.count == 2)
    }

    @Test func uniquenessComparesTextsAndBytesExactly() throws {
        // As a SQLite store's unique index compares them: canonically equivalent texts (é and e + U+0301, K and the
        // Kelvin sign) are different names, and bytes of the same length are different icons. Both engines agree.
        let bundle = Self.tags(
            [
                Attribute(name: "name", type: .string, isOptional: true),
                Attribute(name: "icon", type: .binary, isOptional: true),
            ], unique: [["name"], ["icon"]])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("t1.sqlite")
        let names = ["\u{E9}", "e\u{301}", "K", "\u{212A}"]
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: names.enumerated().map {
                MigrationFixtures.record(
                    "Tag", Int64($0 + 1), in: v1, ["name": .string($1), "icon": .data(Data([UInt8($0), 7]))])
            }
        )
        for inStore in [true, false] {
            let output = folder.appendingPathComponent("t2-\(inStore).sqlite")
            var options = StoreMigration.Options(bundle: bundle)
            options.environment.runsInStoreWhenPossible = inStore
            let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
            #expect(report.ledgers.first?.rows["Tag"] == MigrationLedger.Row(read: 4, written: 4, rejected: 0))
        }
    }

    @Test func aReferenceToAFilteredObjectBecomesNil() throws {
        // A `where` filter drops a note that a kept folder lists (to-many without inverse): Nullify.
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var folderEntity = Entity(name: "Folder")
        folderEntity.relationships = [Relationship(name: "notes", destination: "Note", toMany: true)]
        let v1 = ObjectModel(versionName: "F1", entities: [folderEntity, note])
        var note2 = note
        note2.attributes.append(Attribute(name: "pinned", type: .boolean, isOptional: true))
        let v2 = ObjectModel(versionName: "F2", entities: [folderEntity, note2])
        let bundle = MigrationFixtures.bundle("Filter", [v1, v2])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("f1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: [
                MigrationFixtures.record(
                    "Folder",
                    1,
                    in: v1,
                    relationships: ["notes": .toMany([.pk("Note", 1), .pk("Note", 2)])]
                ),
                MigrationFixtures.record("Note", 1, in: v1, ["title": "keep"]),
                MigrationFixtures.record("Note", 2, in: v1, ["title": "drop"]),
            ]
        )
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                "source: F1\ndestination: F2\nentities:\n  Note:\n    where: \"$source.title != 'drop'\"\n",
                path: "filter.yaml"
            )
        ]
        let output = folder.appendingPathComponent("f2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.dangling == 0)
        #expect(report.ledgers.first?.rows["Note"] == MigrationLedger.Row(read: 2, written: 1, removed: 1))
        let records = try MigrationFixtures.read(output, bundle: bundle)
        #expect(records["Note"]?.count == 1)
        #expect(
            records["Folder"]?.first.map { MigrationFixtures.relationship($0, "notes", model: v2) }
                == .toMany([.pk("Note", 1)])
        )
    }

    /// D1 → D2: `Folder{name, notes}` ⇄ `Note{title, folder}`; D2 adds Note.pinned. A mapping file drops the
    /// folders
    /// named "trash"; `Folder.notes` has the delete rule `rule`.
    static func trash(rule: DeleteRule, in folder: URL) throws -> (URL, ModelBundle, StoreMigration.Options) {
        var folderEntity = Entity(name: "Folder")
        folderEntity.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var notes = Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)
        notes.deleteRule = rule
        folderEntity.relationships = [notes]
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        var note2 = note
        note2.attributes.append(Attribute(name: "pinned", type: .boolean, isOptional: true))
        let v1 = ObjectModel(versionName: "D1", entities: [folderEntity, note])
        let bundle = MigrationFixtures.bundle(
            "Trash",
            [v1, ObjectModel(versionName: "D2", entities: [folderEntity, note2])]
        )
        let store = folder.appendingPathComponent("d1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "home"], relationships: ["notes": .viaInverse]),
                MigrationFixtures.record("Folder", 2, in: v1, ["name": "trash"], relationships: ["notes": .viaInverse]),
                MigrationFixtures.record(
                    "Note",
                    1,
                    in: v1,
                    ["title": "milk"],
                    relationships: ["folder": .toOne(.pk("Folder", 1))]
                ),
                MigrationFixtures.record(
                    "Note",
                    2,
                    in: v1,
                    ["title": "old"],
                    relationships: ["folder": .toOne(.pk("Folder", 2))]
                ),
                MigrationFixtures.record(
                    "Note",
                    3,
                    in: v1,
                    ["title": "older"],
                    relationships: ["folder": .toOne(.pk("Folder", 2))]
                ),
                MigrationFixtures.record("Note", 4, in: v1, ["title": "loose"]),
            ]
        )
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                "source: D1\ndestination: D2\nentities:\n  Folder:\n    where: \"$source.name != 'trash'\"\n",
                path: "trash.yaml"
            )
        ]
        return (store, bundle, options)
    }

    @Test func removedObjectsApplyTheirDeleteRules() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Cascade: the trash folder's notes go with it.
        let (store, bundle, options) = try Self.trash(rule: .cascade, in: folder)
        let output = folder.appendingPathComponent("cascade.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.first?.rows["Folder"] == MigrationLedger.Row(read: 2, written: 1, removed: 1))
        #expect(report.ledgers.first?.rows["Note"] == MigrationLedger.Row(read: 4, written: 2, removed: 2))
        let records = try MigrationFixtures.read(output, bundle: bundle)
        #expect(records["Note"]?.map(\.id) == [.primaryKey(1), .primaryKey(4)])
        #expect(try MigrationFixtures.sameAgain(store, as: output, options: options, bundle: bundle))

        // Nullify: the notes stay, without a folder.
        let nullifyFolder = folder.appendingPathComponent("nullify", isDirectory: true)
        try FileManager.default.createDirectory(at: nullifyFolder, withIntermediateDirectories: true)
        let (nullifyStore, _, nullifyOptions) = try Self.trash(rule: .nullify, in: nullifyFolder)
        let nullified = nullifyFolder.appendingPathComponent("nullify.sqlite")
        _ = try StoreMigration.migrate(store: nullifyStore, to: .file(nullified), options: nullifyOptions)
        let kept = try #require(try MigrationFixtures.read(nullified, bundle: bundle)["Note"])
        let v2 = bundle.versions[1]
        #expect(
            kept.map { MigrationFixtures.relationship($0, "folder", model: v2) }
                == [.toOne(.pk("Folder", 1)), .toOne(nil), .toOne(nil), .toOne(nil)]
        )

        // Deny: the migration stops and names the objects; nothing is written.
        let denyFolder = folder.appendingPathComponent("deny", isDirectory: true)
        try FileManager.default.createDirectory(at: denyFolder, withIntermediateDirectories: true)
        let (denyStore, _, denyOptions) = try Self.trash(rule: .deny, in: denyFolder)
        let denied = denyFolder.appendingPathComponent("deny.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: denyStore, to: .file(denied), options: denyOptions)
        }
        #expect(error.code == .planNotExecutable)
        #expect(error.message.contains("Folder/p2 (notes, Deny) still has Note/p2"))
        #expect(error.message.contains("Folder/p2 (notes, Deny) still has Note/p3"))
        #expect(!FileManager.default.fileExists(atPath: denied.path))
    }

    /// `Tag{name (unique), parent (to-one Tag)}`: Tag/p3 repeats Tag/p1's name, Tag/p4 points at a tag that does not
    /// exist, Tag/p6 at one that comes later; in batches of two.
    static func tagBatches() throws -> (ObjectModel, [RecordBatch]) {
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        tag.uniquenessConstraints = [["name"]]
        tag.relationships = [Relationship(name: "parent", destination: "Tag")]
        let model = ObjectModel(versionName: "Tags", entities: [tag])
        let layout = try #require(RecordLayout(entity: "Tag", in: model))
        let parents: [Int64: Int64] = [4: 99, 5: 1, 6: 7]
        var batches: [RecordBatch] = []
        for (index, name) in ["a", "b", "a", "c", "d", "e", "f"].enumerated() {
            let key = Int64(index + 1)
            if index % 2 == 0 { batches.append(RecordBatch(layout: layout)) }
            batches[batches.count - 1].append(
                MigrationFixtures.record(
                    "Tag", key, in: model, ["name": .string(name)],
                    relationships: ["parent": .toOne(parents[key].map { .pk("Tag", $0) })]))
        }
        return (model, batches)
    }

    /// A constraint of one integer attribute or one to-one gives integer keys (which key sets keep as bits); two
    /// objects share a key exactly when they share the text the validator keyed them by before (`integer(5)`, `5`,
    /// `t5`…), whatever the values' kinds.
    @Test func integerUniquenessKeysAreEqualExactlyWhenTheirTextsAre() throws {
        var item = Entity(name: "Item")
        item.attributes = [Attribute(name: "number", type: .integer64, isOptional: true)]
        item.relationships = [Relationship(name: "owner", destination: "Item")]
        item.uniquenessConstraints = [["number"], ["owner"], ["number", "owner"]]
        let model = ObjectModel(versionName: "Items", entities: [item])
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        let values: [Value] = [
            0, 5, -5, 5, .integer(.max), .integer(.min), nil, .double(5), "5", "integer(5)", .decimal(5), .bool(true),
            1, 1,
        ]
        let owners: [Int64?] = [nil, 5, -5, 5, .max, .min, 0, 1, 1, 5, nil, 7, 7, .min]
        var batch = RecordBatch(layout: layout)
        for (index, value) in values.enumerated() {
            let owner = owners[index].map { ObjectReference(entity: "Item", id: .primaryKey($0)) }
            let id = RecordID.primaryKey(Int64(index + 1))
            batch.append(Record(entity: "Item", id: id, values: [value], relationships: [.toOne(owner)]))
        }
        let constraints = ModelValidator.rules(for: layout, in: model).constraints
        #expect(constraints.count == 3)
        for constraint in constraints {
            let rows = 0..<batch.count
            let keys = rows.map { ModelValidator.uniquenessKey(constraint, row: $0, of: batch) }
            let texts = rows.map { row in
                let attributes = constraint.attributes.map {
                    ModelValidator.uniquenessKey(batch.value(row: row, attribute: $0))
                }
                let owners = constraint.relationships.map { "\(batch.cell(row: row, column: 1 + $0).integer)" }
                return (attributes + owners).joined(separator: "\u{1F}")
            }
            for first in rows {
                for second in rows {
                    #expect((keys[first] == keys[second]) == (texts[first] == texts[second]), "\(first), \(second)")
                }
            }
        }
        #expect(ModelValidator.uniquenessKey(constraints[0], row: 1, of: batch) == .integer(5))
        #expect(ModelValidator.uniquenessKey(constraints[1], row: 1, of: batch) == .integer(5))
    }

    /// One object's dangling references come out by property, then target, every run: they were listed in the
    /// order of a dictionary's hash, which changes from process to process, so two runs of one migration could
    /// write different rejects files.
    @Test func oneObjectsDanglingReferencesComeInAFixedOrder() throws {
        var item = Entity(name: "Item")
        item.relationships = [
            Relationship(name: "parts", destination: "Item", toMany: true),
            Relationship(name: "owner", destination: "Item"),
        ]
        let model = ObjectModel(versionName: "Items", entities: [item])
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        #expect(layout.relationships.map(\.name) == ["owner", "parts"])
        let missing = [31, 7, 12, 40, 3, 25, 18, 9, 33, 21].map { ObjectReference(entity: "Item", id: .primaryKey($0)) }
        var batch = RecordBatch(layout: layout)
        batch.append(
            Record(
                entity: "Item", id: .primaryKey(1), values: [],
                relationships: [.toOne(ObjectReference(entity: "Item", id: .primaryKey(50))), .toMany(missing)]))
        var validator = ModelValidator(model: model, collectsRejects: true)
        var rejects: [Reject] = []
        _ = try validator.check(batch, rejects: &rejects)
        let found = try validator.finish()
        #expect(found.map(\.property) == ["owner"] + Array(repeating: "parts", count: missing.count))
        #expect(found.compactMap(\.value) == ["Item/p50"] + missing.map(\.description).sorted())
    }

    /// References to objects not seen yet spill with the job's sets: 500 Items each point forward at an Item that comes
    /// later (members before their owner), a few at Items that never come. With at most 8 pending in memory, the
    /// spilled ones whose target came later are settled at the end, and exactly the missing ones dangle, in the same
    /// order as in memory; the spill file goes with the validator.
    @Test func forwardReferencesSpillAndOnlyTheMissingDangle() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var item = Entity(name: "Item")
        item.relationships = [Relationship(name: "owner", destination: "Item")]
        let model = ObjectModel(versionName: "Items", entities: [item])
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        let missing: Set<Int64> = [1_003, 1_250, 1_499]
        var batches: [RecordBatch] = []
        for range in [1...500, 501...1_000] as [ClosedRange<Int64>] {
            var batch = RecordBatch(layout: layout)
            for id in range {
                // Each of Items 1…500 points at the Item 500 further on, which the second batch writes; three (3, 250
                // and 499) point past the end instead.
                let target: Int64 = id <= 500 ? (missing.contains(id + 1_000) ? id + 1_000 : id + 500) : 0
                batch.append(
                    Record(
                        entity: "Item", id: .primaryKey(id), values: [],
                        relationships: [.toOne(target == 0 ? nil : ObjectReference(entity: "Item", id: .primaryKey(target)))]))
            }
            batches.append(batch)
        }
        var results: [[Reject]] = []
        for keySets in [KeySetFactory.inMemory, .spilling(bound: 8, in: folder)] {
            var validator = ModelValidator(model: model, collectsRejects: true, keySets: keySets)
            var rejects: [Reject] = []
            for batch in batches { _ = try validator.check(batch, rejects: &rejects) }
            if results.count == 1 {
                // 500 references were pending after the first batch: past the bound, in the map's spill file.
                let spills = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(spills.contains { $0.hasPrefix("decant-links-") }, "\(spills)")
            }
            rejects += try validator.finish()
            results.append(rejects)
        }
        #expect(results[0] == results[1])
        // By holder's name, as text (as in memory).
        #expect(results[1].map(\.object) == ["Item/p250", "Item/p3", "Item/p499"])
        #expect(results[1].map(\.value) == ["Item/p1250", "Item/p1003", "Item/p1499"])
        #expect(results[1].allSatisfy { $0.rule == "dangling" && $0.property == "owner" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func spillingSetsStillFindDuplicatesAndDanglingReferences() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // At most one key in memory: nearly every answer comes from a temporary file.
        let (model, batches) = try Self.tagBatches()
        var results: [[Reject]] = []
        for keySets in [KeySetFactory.inMemory, .spilling(bound: 1, in: folder)] {
            var validator = ModelValidator(model: model, collectsRejects: true, keySets: keySets)
            var rejects: [Reject] = []
            var kept = 0
            for batch in batches { kept += try validator.check(batch, rejects: &rejects).count }
            rejects += try validator.finish()
            #expect(kept == 6)
            results.append(rejects)
        }
        #expect(results[0] == results[1])
        #expect(results[1].map(\.object) == ["Tag/p3", "Tag/p4"])
        #expect(results[1].map(\.rule) == ["unique", "dangling"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        // Through StoreValidation, with the store's every rule: the same report, and no temporary file left.
        let spill = folder.appendingPathComponent("spill", isDirectory: true)
        try FileManager.default.createDirectory(at: spill, withIntermediateDirectories: true)
        let (store, bundle) = try Self.store(in: folder)
        var options = StoreValidation.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        options.keySets = .inMemory
        let inMemory = try StoreValidation.validate(store: store, options: options)
        #expect(inMemory.failures["Note.folder dangling"] == 1)
        options.keySets = .spilling(bound: 1, in: spill)
        #expect(try StoreValidation.validate(store: store, options: options) == inMemory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill.path).isEmpty)
    }

    @Test func spillingRemovalsApplyTheSameDeleteRules() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spill = folder.appendingPathComponent("spill", isDirectory: true)
        try FileManager.default.createDirectory(at: spill, withIntermediateDirectories: true)
        let (store, bundle, options) = try Self.trash(rule: .cascade, in: folder)
        var inMemory = options
        inMemory.environment.keySets = .inMemory
        let expected = folder.appendingPathComponent("memory.sqlite")
        let expectedReport = try StoreMigration.migrate(store: store, to: .file(expected), options: inMemory)
        var spilling = options
        spilling.environment.keySets = .spilling(bound: 1, in: spill)
        let output = folder.appendingPathComponent("spilled.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: spilling)
        #expect(report.ledgers == expectedReport.ledgers)
        #expect(report.ledgers.first?.rows["Note"] == MigrationLedger.Row(read: 4, written: 2, removed: 2))
        #expect(try MigrationFixtures.read(output, bundle: bundle) == MigrationFixtures.read(expected, bundle: bundle))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill.path).isEmpty)
        // Deny still stops the run with a spilling set.
        let denyFolder = folder.appendingPathComponent("deny", isDirectory: true)
        try FileManager.default.createDirectory(at: denyFolder, withIntermediateDirectories: true)
        let (denyStore, _, denyBase) = try Self.trash(rule: .deny, in: denyFolder)
        var denyOptions = denyBase
        denyOptions.environment.keySets = .spilling(bound: 1, in: spill)
        let error = try #require(throws: DecantError.self) {
            let denied = denyFolder.appendingPathComponent("deny.sqlite")
            return try StoreMigration.migrate(store: denyStore, to: .file(denied), options: denyOptions)
        }
        #expect(error.code == .planNotExecutable)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill.path).isEmpty)
    }

    @Test func migrationAndValidationReportProgressWithIncreasingCounts() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle, options) = try Self.trash(rule: .nullify, in: folder)
        var calls: [(entity: String, written: Int)] = []
        let output = folder.appendingPathComponent("progress.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options) {
            calls.append(($0, $1))
        }
        #expect(Set(calls.map(\.entity)) == ["Folder", "Note"])
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.written < $1.written }, "\(calls)")
        #expect(calls.last?.written == report.written.values.reduce(0, +))

        var checked: [(entity: String, checked: Int)] = []
        let validated = try StoreValidation.validate(store: output, options: StoreValidation.Options(bundle: bundle)) {
            checked.append(($0, $1))
        }
        #expect(Set(checked.map(\.entity)) == ["Folder", "Note"])
        #expect(zip(checked, checked.dropFirst()).allSatisfy { $0.checked < $1.checked }, "\(checked)")
        #expect(checked.last?.checked == validated.objects.values.reduce(0, +))
    }
}
