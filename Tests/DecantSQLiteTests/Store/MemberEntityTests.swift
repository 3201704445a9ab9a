import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
@testable import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// A many-to-many's members read without the destination's table where that table holds the destination alone
/// (issue 23's store → CSV: `Tag.notes` joined `ZNOTE` once per member only to learn that each was a note). On the
/// library, `Book.authors` (`Author` has a table of its own) reads the join table alone, while `Author.books`
/// (`EBook` lives in `ZBOOK` beside `Book`) still joins `ZBOOK` for each member's entity; the join, forced for every
/// relationship, gives the same records and the same CSV.
@Suite("Many-to-many members' entities")
struct MemberEntityTests {
    static let model = LibraryFixture.model

    /// The library store; with `dangling`, one join row more: book 3's author 99, which no author is.
    static func makeStore(dangling: Bool = false) throws -> URL {
        let url = try Fixtures.temporaryDirectory().appendingPathComponent("Library.sqlite")
        try StoreFeatureTests.writeLibrary(to: url)
        guard dangling else { return url }
        let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: url), model: model)
        guard case .manyToMany(let link)? = reader.schema.entity(named: "Book")?.relationships["authors"] else {
            Issue.record("Book.authors is not stored in a join table")
            return url
        }
        var db: OpaquePointer?
        try #require(sqlite3_open(url.path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        let sql = "INSERT INTO \(link.table) (\(link.sourceColumn), \(link.destinationColumn)) VALUES (3, 99)"
        try #require(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        return url
    }

    static func reader(_ url: URL, joined: Bool, batchSize: Int = 1024) throws -> SQLiteStoreReader {
        let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: url), model: model, batchSize: batchSize)
        reader.forceMemberEntityJoin = joined
        return reader
    }

    /// Every record of the store, in the order read.
    static func records(_ url: URL, joined: Bool, batchSize: Int) throws -> [Record] {
        let reader = try reader(url, joined: joined, batchSize: batchSize)
        var batch = try #require(RecordLayout(entity: "Shelf", in: model)).emptyBatch()
        var records: [Record] = []
        while try reader.nextBatch(into: &batch) { records += (0..<batch.count).map { batch.record(at: $0) } }
        return records
    }

    @Test("a destination alone in its table is read from the join table only; one with sub-entities is joined")
    func queries() throws {
        let url = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let reader = try Self.reader(url, joined: false)
        let book = try reader.memberQueries(of: "Book")
        let author = try reader.memberQueries(of: "Author")
        // Book.authors (many-to-many to Author) and Book.tags (to-many without inverse, from ZTAG's own rows).
        #expect(book.count == 2 && book.allSatisfy { !$0.contains("JOIN") }, "\(book)")
        #expect(author.count == 1 && author.allSatisfy { $0.contains("LEFT JOIN ZBOOK") }, "\(author)")
        reader.forceMemberEntityJoin = true
        #expect(try reader.memberQueries(of: "Book").first?.contains("LEFT JOIN ZAUTHOR") == true)
    }

    @Test("both queries read the same records: members of a sub-entity named by it, a missing one by the destination",
        arguments: [false, true], [1, 1024])
    func bothQueriesReadTheSameRecords(dangling: Bool, batchSize: Int) throws {
        let url = try Self.makeStore(dangling: dangling)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let fast = try Self.records(url, joined: false, batchSize: batchSize)
        let joined = try Self.records(url, joined: true, batchSize: batchSize)
        #expect(fast == joined)
        func members(_ entity: String, _ key: Int64) -> [ObjectReference]? {
            guard let record = fast.first(where: { $0.entity == entity && $0.id == .primaryKey(key) }),
                let layout = RecordLayout(entity: entity, in: Self.model),
                let position = layout.relationships.firstIndex(where: { $0.isToMany && $0.name != "tags" }),
                case .toMany(let list) = record.relationships[position]
            else { return nil }
            return list
        }
        #expect(members("Author", 2) == [LibraryFixture.reference("Book", 1), LibraryFixture.reference("EBook", 2)])
        #expect(members("Book", 1) == [LibraryFixture.reference("Author", 1), LibraryFixture.reference("Author", 2)])
        #expect(members("EBook", 2) == [LibraryFixture.reference("Author", 2)])
        // A join row naming no object: the relationship's destination (before, whatever entity came first in the
        // model), as a to-one's missing destination is, so that validation looks for it where it should be.
        #expect(members("Book", 3) == (dangling ? [LibraryFixture.reference("Author", 99)] : []))
    }

    @Test("both queries export the same CSV, lists whole and in parts of one member", arguments: [nil, 1] as [Int?])
    func bothQueriesExportTheSameCSV(partSize: Int?) throws {
        let url = try Self.makeStore(dangling: true)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        func export(joined: Bool) throws -> [String: Data] {
            let folder = try Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("out")
            var writer = try CSVWriter(writingAt: output, model: Self.model)
            var reader = try Self.reader(url, joined: joined, batchSize: 2)
            _ = try RecordTransfer.copy(from: &reader, to: &writer, memberPartSize: partSize)
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: output.path) {
                files[name] = try Data(contentsOf: output.appendingPathComponent(name))
            }
            return files
        }
        let fast = try export(joined: false)
        #expect(fast == (try export(joined: true)))
        let authors = String(decoding: try #require(fast["Book.authors.csv"]), as: UTF8.self)
        #expect(authors.contains("p3,Author/p99\r\n"))
        #expect(String(decoding: try #require(fast["Author.books.csv"]), as: UTF8.self).contains("p2,EBook/p2\r\n"))
    }
}
