import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// Rows whose `Z_ENT` names no entity Core Data fetches from their table (section 1.9): in a table an entity has to
/// itself they are that entity's objects (Core Data's SQL selects `0` for the entity column there and filters
/// nothing), in a table shared by a hierarchy they are rows no fetch returns. Decant reads, converts and migrates
/// both as Core Data does, and says so in a warning with the count and the first primary keys.
@Suite("Rows with a stray Z_ENT")
struct StrayEntityNumberTests {
    /// v1 and v2 (v2 adds `Item.rating`) of `Item{title}` with its sub-entity `Book{pages}`, sharing `ZITEM`, and
    /// `Shelf{name}` alone in `ZSHELF`.
    static let bundle: ModelBundle = {
        func model(_ version: Int) -> ObjectModel {
            var item = Entity(name: "Item")
            item.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
            if version == 2 { item.attributes.append(Attribute(name: "rating", type: .integer16, isOptional: true)) }
            var book = Entity(name: "Book", parentName: "Item")
            book.attributes = [Attribute(name: "pages", type: .integer32, isOptional: true)]
            var shelf = Entity(name: "Shelf")
            shelf.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            return ObjectModel(versionName: "Shelves \(version)", entities: [book, item, shelf])
        }
        return MigrationFixtures.bundle("Shelves", [model(1), model(2)])
    }()

    /// A v1 store: items 1–3, books 4–6, shelves 1–2; then `Z_ENT` 42 on item 2 (in the shared `ZITEM`) and on
    /// shelf 2 (in `ZSHELF`, Shelf's own table).
    static func store(in folder: URL) throws -> URL {
        let v1 = bundle.versions[0]
        let url = folder.appendingPathComponent("shelves.sqlite")
        var records = (1...3).map { MigrationFixtures.record("Item", Int64($0), in: v1, ["title": .string("item \($0)")]) }
        records += (4...6).map {
            MigrationFixtures.record("Book", Int64($0), in: v1, ["title": .string("book \($0)"), "pages": .integer(100)])
        }
        records += (1...2).map { MigrationFixtures.record("Shelf", Int64($0), in: v1, ["name": .string("shelf \($0)")]) }
        try MigrationFixtures.writeStore(at: url, model: v1, records: records)
        var db: OpaquePointer?
        #expect(sqlite3_open(url.path, &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "UPDATE ZITEM SET Z_ENT = 42 WHERE Z_PK = 2; UPDATE ZSHELF SET Z_ENT = 42 WHERE Z_PK = 2", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
        return url
    }

    static func strayWarnings(_ warnings: [Diagnostic]) -> [String] {
        warnings.filter { $0.kind == .strayEntityNumber }.map(\.message).sorted()
    }

    static let expectedWarnings = [
        "1 row of ZITEM (Z_PK 2) has a Z_ENT that is none of its entities' (1, 2): left out, as Core Data's fetches "
            + "never return them",
        "1 row of ZSHELF (Z_PK 2) has a Z_ENT other than Shelf's 3: read as Shelf objects, as Core Data reads a "
            + "table whose entity has no sub-entities",
    ]

    @Test func convertReadsTheOwnTablesRowAndLeavesOutTheSharedTablesRow() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder)
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreConversion.convert(
            from: store, to: output, options: FormatOptions(bundle: Self.bundle))
        #expect(report.written == ["Item": 2, "Book": 3, "Shelf": 2])
        #expect(Self.strayWarnings(report.warnings) == Self.expectedWarnings)
        // inspect counts as Core Data fetches: both shelves; the stray item under its number.
        let counts = try SQLiteStore(contentsOf: store).objectCounts(model: Self.bundle.versions[0])
        #expect(counts == ["Item": 2, "Book": 3, "Shelf": 2, "Z_ENT 42": 1])
    }

    /// The hierarchy's stray row sends the migration to the record stream (SQL cannot leave it out and still prove
    /// every row taken), which leaves it out with the warning; the shelf's row migrates as a Shelf.
    @Test func migrateKeepsTheShelfAndLeavesOutTheStrayItem() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder)
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(
            store: store, to: .file(output), options: StoreMigration.Options(bundle: Self.bundle))
        #expect(report.engine == .stream)
        #expect(report.written == ["Item": 2, "Book": 3, "Shelf": 2])
        #expect(Self.strayWarnings(report.warnings) == Self.expectedWarnings)
        #expect(try SQLiteStore(contentsOf: output).objectCounts() == ["Item": 2, "Book": 3, "Shelf": 2])
    }
}
