import Decant
import DecantTestSupport
import Foundation
import Testing

/// `convert` of a SQLite store into a new SQLite store runs inside SQLite (one `INSERT … SELECT` per table, the plan
/// of one inferred hop from the model to itself): it writes, byte for byte, the store the record stream writes, with
/// the same report; a store SQL cannot copy as it is goes through the record stream.
@Suite("Store copies inside SQLite")
struct InStoreCopyTests {
    /// Converts `store` both ways and compares the stores and the reports.
    static func sameBothWays(_ store: URL, bundle: ModelBundle, in folder: URL) throws {
        let output = folder.appendingPathComponent("in-store.sqlite")
        let streamed = folder.appendingPathComponent("streamed.sqlite")
        defer {
            SQLiteFormat().files(at: output).remove()
            SQLiteFormat().files(at: streamed).remove()
        }
        let options = FormatOptions(bundle: bundle)
        let report = try StoreConversion.convert(from: store, to: output, options: options, lease: nil)
        let expected = try StoreConversion.convert(
            from: store, to: streamed, options: options, lease: nil, runsInStoreWhenPossible: false)
        #expect(try InStoreMigrationTests.dump(output) == InStoreMigrationTests.dump(streamed))
        #expect(report.read == expected.read)
        #expect(report.written == expected.written)
        #expect(report.filteredOut == expected.filteredOut)
        #expect(report.warnings.map(\.message) == expected.warnings.map(\.message))
        #expect(report.modelVersion == expected.modelVersion && report.validated == expected.validated)
    }

    @Test func aStoreWithNullsTextsDatesAndAToOneCopiesAsTheStreamCopiesIt() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = InStoreMigrationTests.notes()
        let store = try InStoreMigrationTests.store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        try Self.sameBothWays(store, bundle: bundle, in: folder)
        #expect(try Data(contentsOf: store) == before)
    }

    /// Rows with a stray `Z_ENT`: the shared table's stray row cannot be left out by the copy's SQL (it proves every
    /// row taken), so the record stream copies the store; either way, the same store and the same warnings.
    @Test func strayRowsCopyAsTheStreamCopiesThem() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try StrayEntityNumberTests.store(in: folder)
        try Self.sameBothWays(store, bundle: StrayEntityNumberTests.bundle, in: folder)
    }

    /// Stray rows in tables their entities have to themselves are copied inside SQLite, as their entity's objects,
    /// counted as they go in, with the stream's warnings (the count and the first five keys).
    @Test func strayRowsInAnEntitysOwnTableCopyWithTheWarning() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = InStoreMigrationTests.notes()
        let store = try InStoreMigrationTests.store(in: folder, bundle: bundle)
        InStoreMigrationTests.execute(
            "UPDATE ZFOLDER SET Z_ENT = 42 WHERE Z_PK = 2; UPDATE ZNOTE SET Z_ENT = NULL WHERE Z_PK % 6 = 0; "
                + "UPDATE ZNOTE SET Z_ENT = 7 WHERE Z_PK = 4",
            on: store)
        try Self.sameBothWays(store, bundle: bundle, in: folder)
        let report = try StoreConversion.convert(
            from: store, to: folder.appendingPathComponent("again.sqlite"), options: FormatOptions(bundle: bundle))
        #expect(report.warnings.filter { $0.kind == .strayEntityNumber }.count == 2)
        #expect(report.warnings.contains { $0.message.hasPrefix("14 rows of ZNOTE (Z_PK 4, 6, 12, 18, 24, …) have") })
    }
}
