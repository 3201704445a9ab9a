import Decant
import DecantTestSupport
import Foundation
import Testing

/// Core Data SQLite stores through Decant's JSON and NDJSON and back, by `StoreConversion.convert` (the registry
/// path `decant convert` takes): every corpus store and the library model (every attribute type and relationship
/// kind) come back with the same objects, identities, relationships (ordered ones in order) and every value bit
/// for bit; the output follows `schemas/document.schema.json`.
@Suite("SQLite stores through JSON")
struct JSONStoreRoundTripTests {
    static let stores: [String] = Fixtures.corpusStores

    /// The corpus round trips run once per store (`XMLStoreRoundTripTests` and `BinaryStoreTests` share this list).
    /// Ten in the corpus, one (RestKit's seed store, written with an Xcode 3 model) in the legacy corpus, thirty in
    /// the apps corpus.
    @Test func theCorpusHasItsFortyOneStores() {
        #expect(Self.stores.count == 41)
    }

    static let extensions = ["json", "ndjson"]

    /// A private copy of a corpus store (with its -wal and -shm) in a new temporary folder.
    static func copyStore(_ url: URL) throws -> URL {
        let directory = try Fixtures.temporaryDirectory()
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            let target = directory.appendingPathComponent(source.lastPathComponent)
            try FileManager.default.copyItem(at: source, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        return directory.appendingPathComponent(url.lastPathComponent)
    }

    /// Every record of the store at `url`, cell by cell, read with `model`.
    static func cells(ofStoreAt url: URL, model: ObjectModel) throws -> [String: [String]] {
        var reader = try SQLiteStoreReader(store: SQLiteStore(contentsOf: url), model: model)
        return try RecordDump.cells(of: &reader)
    }

    /// Converts `store` to `.json`/`.ndjson` and back to a store; checks the schema, the counts and every cell.
    static func roundTrip(_ store: URL, through format: String, bundle: ModelBundle?) throws {
        let folder = store.deletingLastPathComponent()
        let model = try SQLiteStore(contentsOf: store).resolveModel(bundle: bundle)
        let modelBundle =
            bundle
            ?? ModelBundle(
                name: "Store", versions: [model], currentVersionName: model.versionName, sourceKind: .storeCache)
        let json = folder.appendingPathComponent("objects.\(format)")
        let out = try StoreConversion.convert(from: store, to: json, options: FormatOptions(bundle: bundle))
        #expect(out.outputFormat == format)
        #expect(try DocumentSchema.validate(json, lines: format == "ndjson") == "valid")

        let back = folder.appendingPathComponent("back.sqlite")
        var options = FormatOptions(bundle: modelBundle)
        options.sqlite.journalMode = .delete
        // The store's own objects go back as they were, breaches of the model's rules included (artsy's hold
        // references to artists that do not exist): a round trip, not new objects for the rules to check.
        let report = try StoreConversion.convert(from: json, to: back, options: options, validation: .none)
        #expect(report.inputFormat == format)
        #expect(report.read == out.written)

        let expected = try cells(ofStoreAt: store, model: model)
        let actual = try cells(ofStoreAt: back, model: model)
        #expect(actual.keys.sorted() == expected.keys.sorted())
        for entity in expected.keys.sorted() {
            let want = expected[entity] ?? []
            let got = actual[entity] ?? []
            #expect(got.count == want.count, "\(entity)")
            for (a, b) in zip(got, want) where a != b { Issue.record("\(entity):\n\(a)\n!=\n\(b)") }
        }

        // Read into memory, the JSON gives the store's records value for value.
        var reader = try FormatRegistry.builtIn.inputFormat(of: json, named: nil).makeReader(at: json, options: options)
        var memory = InMemoryStore.Writer(model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &memory)
        var original = try SQLiteStoreReader(store: SQLiteStore(contentsOf: store), model: model)
        let records = try RecordDump.records(of: &original)
        for entity in model.entities {
            #expect(memory.store.records(of: entity.name) == records[entity.name] ?? [], "\(entity.name)")
        }
    }

    @Test("every corpus store comes back bit for bit", arguments: stores, extensions)
    func corpusStore(_ store: String, through format: String) throws {
        let copy = try Self.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let hashes = try SQLiteStore(contentsOf: copy).metadata.entityVersionHashes
        let bundle = CorpusStoreModels.bundle(forStore: store, hashes: hashes)
        _ = try CorpusAllowList.readingRows(of: store) { try Self.roundTrip(copy, through: format, bundle: bundle) }
    }

    @Test("the library model comes back bit for bit", arguments: extensions)
    func library(through format: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Library.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: LibraryFixture.model, journalMode: .delete)
        for (entity, list) in LibraryFixture.records.sorted(by: { $0.key < $1.key }) {
            var batch = try #require(RecordLayout(entity: entity, in: LibraryFixture.model)).emptyBatch()
            for record in list { batch.append(record) }
            try writer.write(batch)
        }
        try writer.finish()
        let bundle = ModelBundle(
            name: "Library", versions: [LibraryFixture.model], currentVersionName: "Library", sourceKind: .xcdatamodeld)
        try Self.roundTrip(store, through: format, bundle: bundle)
        // The ordered Shelf.books is listed in order; Author.books (many-to-many) on both sides.
        let text = try String(contentsOf: folder.appendingPathComponent("objects.\(format)"), encoding: .utf8)
        #expect(text.contains(#""books":["Book/p3","Book/p1","EBook/p2"]"#))
        #expect(text.contains(#"{"@id":"Author/p2","name":null,"books":["Book/p1","EBook/p2"]}"#))
    }

    @Test func plainJSONBecomesAStore() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let input = folder.appendingPathComponent("folders.json")
        try Data(
            """
            [{"name": "Home", "notes": [{"text": "milk", "date": "2024-05-19T20:14:06.5+02:00"}, {"Title": "eggs"}]},
             {"name": "Work", "notes": []}]
            """.utf8
        ).write(to: input)
        var options = FormatOptions(bundle: bundle)
        options.entity = "Folder"
        let output = folder.appendingPathComponent("Notes.sqlite")
        let report = try StoreConversion.convert(from: input, to: output, options: options)
        #expect(report.modelVersion == "Notes 3")
        #expect(report.written == ["Folder": 2, "Note": 2])
        let store = try SQLiteStore(contentsOf: output)
        let reader = try SQLiteStoreReader(store: store, model: try store.resolveModel(bundle: bundle))
        let folders = try reader.records(of: "Folder")
        let notes = try reader.records(of: "Note")
        #expect(folders.map(\.values) == [["Home"], ["Work"]])
        #expect(notes.map(\.values[1]) == ["milk", nil])
        #expect(notes.map(\.values[2]) == [nil, "eggs"])
        #expect(notes[0].values[0] == .date(Date(timeIntervalSinceReferenceDate: 737_835_246.5)))
        // The notes' folder was set from the nesting; the store keeps Folder.notes through it.
        #expect(notes.map(\.relationships) == Array(repeating: [.toOne(folders[0].reference)], count: 2))
    }

    @Test func badJSONCreatesNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let input = folder.appendingPathComponent("notes.json")
        try Data("[{\"text\": \"a\"},\n {\"text\": \"b\", \"when\": 1}]".utf8).write(to: input)
        var options = FormatOptions(bundle: bundle)
        options.entity = "Note"
        for name in ["Notes.sqlite", "notes.ndjson", "copy.json"] {
            let error = #expect(throws: DecantError.self) {
                _ = try StoreConversion.convert(from: input, to: folder.appendingPathComponent(name), options: options)
            }
            #expect(error?.code == .malformedInput)
            #expect(error?.code.exitCode == 65)
            #expect(error?.location?.line == 2)
            #expect(error?.location?.keyPath == "when")
            #expect(
                error?.description.hasPrefix(
                    "\(input.path):2:16: entity Note, key when: malformed input: unknown key when") == true)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.json"])
    }
}
