import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// `--entity`, `--where` and `--sort`: what SQLite evaluates gives exactly what the stream gives, objects left out
/// are counted, and references to them are written as nil and reported.
@Suite("Selections")
struct SelectionTests {
    static let model: ObjectModel = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "text", type: .string, isOptional: true),
            Attribute(name: "pages", type: .integer32, isOptional: true),
            Attribute(name: "rating", type: .double, isOptional: true),
            Attribute(name: "pinned", type: .boolean, isOptional: true),
            Attribute(name: "date", type: .date, isOptional: true),
        ]
        note.relationships = [
            Relationship(name: "folder", destination: "Folder", inverse: "notes"),
            Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true),
        ]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
        return ObjectModel(versionName: "Shop", entities: [folder, note, tag], versionIdentifiers: ["1"])
    }()

    static let texts: [String?] = ["Buy milk", "buy MILK", "Crème brûlée", nil, "", "O'Brien", "日本語のテキスト", "milk"]

    /// 40 notes with every kind of value and nils, in 3 folders (some none), each with some of 4 tags.
    static func writeStore(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("Shop.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        for (key, name) in ["Home", "Work", "home"].enumerated() {
            folders.append(Record(entity: "Folder", id: .primaryKey(Int64(key + 1)), values: [.string(name)], relationships: [.viaInverse]))
        }
        try writer.write(folders)
        var tags = try #require(RecordLayout(entity: "Tag", in: model)).emptyBatch()
        for key in 1...4 {
            tags.append(Record(entity: "Tag", id: .primaryKey(Int64(key)), values: [.string("t\(key)")], relationships: [.toMany([])]))
        }
        try writer.write(tags)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        for key in 1...40 {
            let text = texts[key % texts.count].map(Value.string) ?? .null
            let pages: Value = key % 5 == 0 ? .null : .integer(Int64(key % 17))
            let rating: Value = key % 7 == 0 ? .null : .double(Double(key) / 8)
            let pinned: Value = key % 3 == 0 ? .null : .bool(key % 2 == 0)
            let date: Value = key % 6 == 0 ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(key) * 86_400 * 30))
            let folder: ObjectReference? = key % 4 == 0 ? nil : ObjectReference(entity: "Folder", id: .primaryKey(Int64(key % 3 + 1)))
            let members = (1...4).filter { (key + $0) % 3 == 0 }.map { ObjectReference(entity: "Tag", id: .primaryKey(Int64($0))) }
            // Layout order: date, pages, pinned, rating, text; folder, tags.
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(key)), values: [date, pages, pinned, rating, text],
                    relationships: [.toOne(folder), .toMany(members)]))
        }
        try writer.write(notes)
        try writer.finish()
        return url
    }

    /// Note identities read with the selection applied by SQLite, and the selection it left to the stream.
    static func readSelected(_ url: URL, _ selection: RecordSelection) throws -> ([RecordID], RecordSelection, [Record]) {
        let store = try SQLiteStore(contentsOf: url)
        let reader = try SQLiteStoreReader(store: store, model: try store.resolveModel(bundle: nil), batchSize: 7)
        let residual = try reader.apply(selection)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: model)))
        var records: [Record] = []
        while try reader.nextBatch(into: &batch) {
            guard batch.layout.entityName == "Note" else { continue }
            records += (0..<batch.count).map { batch.record(at: $0) }
        }
        return (records.map(\.id), residual, records)
    }

    static let predicates = [
        "pages > 5", "pages >= 5 AND pages < 12", "pages != 3", "NOT (pages < 8)", "pages == nil", "pages != nil",
        "rating BETWEEN {1, 3.5}", "pages IN {1, 2, 3, 16}", "pinned == YES", "NOT pinned == NO", "text == 'milk'",
        "text != 'milk'", "text BEGINSWITH 'Buy'", "text ENDSWITH 'milk'", "text CONTAINS 'il'", "text BEGINSWITH ''",
        "text CONTAINS 'テキ'", "text < 'b'", "text >= 'Crème'", "text == \"O'Brien\"", "NOT (text CONTAINS 'milk')",
        #"date > CAST("2002-06-01", "NSDate")"#, "date < CAST(50000000, 'NSDate') OR pages == 2",
        "folder == nil", "folder != nil", "folder.name == 'Home'", "folder.name BEGINSWITH 'H' AND pages > 3",
        "NOT (folder.name == 'Work')", "5 < pages", "TRUEPREDICATE", "FALSEPREDICATE",
        // Not exact in SQL: evaluated in the stream.
        "text CONTAINS[c] 'MILK'", "text LIKE 'Buy*'", "text MATCHES '.*milk'", "text ==[cd] 'creme brulee'",
        "pages > 3 AND text CONTAINS[c] 'milk'",
    ]

    @Test("SQLite answers exactly as the stream", arguments: predicates)
    func sqlMatchesTheStream(_ text: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        let predicate = try ObjectPredicate(parsing: text)
        let (selected, residual, _) = try Self.readSelected(url, RecordSelection(entities: ["Note"], predicate: predicate))
        let (_, _, all) = try Self.readSelected(url, RecordSelection())
        let folderNames: [RecordID: Value] = [.primaryKey(1): "Home", .primaryKey(2): "Work", .primaryKey(3): "home"]
        let layout = try #require(RecordLayout(entity: "Note", in: Self.model))
        let expected = try all.filter { record in
            try predicate.evaluate { path in
                if path == ["folder", "name"] {
                    guard case .toOne(let reference?) = record.relationships[0] else { return .null }
                    return folderNames[reference.id] ?? .null
                }
                return try SelectionTransform.value(at: path, of: record, layout: layout)
            }
        }.map(\.id)
        // What SQLite left for the stream is applied as the conversion would.
        var transform = SelectionTransform(residual)
        var output = TransformOutput()
        var batch = RecordBatch(layout: layout)
        for record in try Self.readSelected(url, RecordSelection(entities: ["Note"], predicate: predicate)).2 {
            batch.append(record)
        }
        try transform.transform(batch, into: &output)
        let streamed = output.batches.flatMap { batch in (0..<batch.count).map { batch.id(at: $0) } }
        #expect(streamed == expected, "\(text)")
        let exact = !text.contains("[") && !text.contains("LIKE") && !text.contains("MATCHES")
        #expect((residual.predicate == nil) == exact, "\(text): residual \(String(describing: residual.predicate))")
        if exact { #expect(selected == expected, "\(text)") }
    }

    @Test func sortInsideSQLiteKeepsMembers() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        let sort = try SortKey.list(parsing: "pages:desc,folder.name,rating")
        let (_, residual, sorted) = try Self.readSelected(url, RecordSelection(entities: ["Note"], sort: sort))
        #expect(residual.sort.isEmpty)
        let (_, _, all) = try Self.readSelected(url, RecordSelection())
        #expect(Set(sorted.map(\.id)) == Set(all.map(\.id)))
        for record in sorted {
            #expect(record == all.first { $0.id == record.id }, "members and values follow their owner")
        }
        // Pages descending, nil last, as NSSortDescriptor orders them.
        let pages = sorted.map { $0.values[1] }
        let numbers = pages.compactMap { value -> Int64? in if case .integer(let n) = value { return n } else { return nil } }
        #expect(numbers == numbers.sorted(by: >))
        #expect(pages.suffix(8).allSatisfy { $0.isNull })
        // The stream sorts alike.
        var transform = SelectionTransform(RecordSelection(entities: ["Note"], sort: sort.filter { $0.keyPath.count == 1 }))
        var output = TransformOutput()
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: Self.model)))
        for record in all { batch.append(record) }
        try transform.transform(batch, into: &output)
        try transform.finish(into: &output)
        let streamPages = output.batches.flatMap { b in (0..<b.count).map { b.value(row: $0, attribute: 1) } }
        #expect(streamPages == pages)
    }

    @Test func leftOutReferencesAreNilAndReported() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        let output = folder.appendingPathComponent("Notes.sqlite")
        let report = try StoreConversion.convert(
            from: url, to: output,
            selection: RecordSelection(entities: ["Note"], predicate: try ObjectPredicate(parsing: "folder.name != 'Work' AND pages > 4")))
        #expect(report.read == ["Folder": 3, "Note": 40, "Tag": 4])
        #expect(report.filteredOut["Tag"] == 4)
        #expect(report.filteredOut["Folder"] == 3)
        let written = try #require(report.written["Note"])
        #expect(written > 0 && written + (report.filteredOut["Note"] ?? 0) == 40)
        #expect(report.warnings.map(\.kind) == [.leftOutReference, .leftOutReference])
        #expect(report.warnings.map(\.location?.keyPath) == ["folder", "tags"])
        // The output holds no reference to an object it does not have.
        let store = try SQLiteStore(contentsOf: output)
        #expect(try store.objectCounts() == ["Note": written])
        let reader = try SQLiteStoreReader(store: store, model: try store.resolveModel(bundle: nil))
        for note in try reader.records(of: "Note") { #expect(note.relationships == [.toOne(nil), .toMany([])]) }
    }

    @Test func selectionErrorsAreUsageErrors() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        let cases: [(RecordSelection, String)] = [
            (RecordSelection(entities: ["Nope"]), "no entity Nope"),
            (RecordSelection(predicate: try ObjectPredicate(parsing: "pages > 1")), "Folder has no attribute"),
            (RecordSelection(entities: ["Note"], sort: [SortKey(keyPath: ["tags"])]), "Note has no attribute or to-one"),
            (RecordSelection(entities: ["Note"], predicate: try ObjectPredicate(parsing: "folder.name ==[c] 'home'")),
             "goes through a relationship"),
        ]
        for (selection, message) in cases {
            let error = #expect(throws: DecantError.self) {
                try StoreConversion.convert(from: url, to: folder.appendingPathComponent("x.sqlite"), selection: selection)
            }
            #expect(error?.code == .usage)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("x.sqlite").path))
    }

    /// A predicate of as many `AND`s as the limit runs inside SQLite (joined as a balanced tree: SQLite refuses a
    /// left-deep `a AND b AND …` deeper than 1,000 with "Expression tree is too large", which read as damaged input,
    /// exit 65); one more is a usage error that says the limit.
    @Test func aPredicateAsLongAsTheLimitRunsInSQLiteAndALongerOneIsAUsageError() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        let terms = (0...1000).map { "pages != \($0)" }
        let predicate = try ObjectPredicate(parsing: terms.joined(separator: " AND "))
        let (selected, residual, _) = try Self.readSelected(url, RecordSelection(entities: ["Note"], predicate: predicate))
        #expect(residual.predicate == nil)
        // Every note has 0…16 pages or none (every fifth): only those with none pass, as `nil != 3` holds in
        // NSPredicate.
        let withoutPages: [RecordID] = (1...40).filter { $0 % 5 == 0 }.map { .primaryKey(Int64($0)) }
        #expect(selected == withoutPages)

        let error = #expect(throws: DecantError.self) {
            try ObjectPredicate(parsing: (terms + ["pages != 0"]).joined(separator: " OR "))
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("more than 1000 AND/OR terms, the limit") == true, "\(error?.message ?? "")")
    }
}
