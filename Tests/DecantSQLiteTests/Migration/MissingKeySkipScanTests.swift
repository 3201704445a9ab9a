import CSQLite
@testable import DecantSQLite
import Foundation
import Testing

/// The in-store migration's check that every to-one key names an object (``InStoreMigration``): the distinct keys are
/// found by index seeks up to a bound, and past it by reading the rest of the index; either way, a key that names no
/// object is found, and none is found when every key names one.
@Suite("InStoreMigration's dangling-key check")
struct MissingKeySkipScanTests {
    /// `ZFOLDER` rows 1…`folders`; notes whose `ZFOLDER` holds `keys` (nil: NULL), with the to-one's index.
    static func firstMissing(folders: Int, keys: [Int?]) throws -> String? {
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK else { throw CheckFailure("cannot open") }
        defer { sqlite3_close(db) }
        func run(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw CheckFailure(String(cString: sqlite3_errmsg(db)))
            }
        }
        try run("CREATE TABLE ZFOLDER (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)")
        try run("CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZFOLDER INTEGER)")
        try run("CREATE INDEX ZNOTE_ZFOLDER_INDEX ON ZNOTE (ZFOLDER)")
        try run("BEGIN")
        if folders > 0 {
            try run(
                "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(folders)) "
                    + "INSERT INTO ZFOLDER SELECT i, 1 FROM c")
        }
        for (offset, key) in keys.enumerated() {
            try run("INSERT INTO ZNOTE VALUES (\(offset + 1), 2, \(key.map(String.init) ?? "NULL"))")
        }
        try run("COMMIT")
        let missing = "NOT EXISTS (SELECT 1 FROM ZFOLDER AS u WHERE u.Z_PK = k AND u.Z_ENT = 1)"
        let sql = InStoreMigration.Builder.missingKeyBySkipScan("ZFOLDER", of: "ZNOTE", missing: missing)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw CheckFailure(String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_text(statement, 0).map { String(cString: $0) }
    }

    struct CheckFailure: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static let cap = InStoreMigration.Builder.skipScanSeeks

    @Test func fewKeysAllFoundAreFine() throws {
        #expect(try Self.firstMissing(folders: 10, keys: (0..<200).map { $0 % 11 == 0 ? nil : $0 % 10 + 1 }) == nil)
    }

    @Test func aMissingKeyAmongFewIsFound() throws {
        #expect(try Self.firstMissing(folders: 10, keys: [1, 2, nil, 2, 99, 3]) == "99")
    }

    @Test func manyKeysAllFoundAreFine() throws {
        let keys = (1...(Self.cap + 500)).flatMap { [$0, $0] } + [nil]
        #expect(try Self.firstMissing(folders: Self.cap + 500, keys: keys) == nil)
    }

    /// Past the seeks' bound, the rest of the index is read: the last key is missing.
    @Test func aMissingKeyPastTheSeeksIsFound() throws {
        let keys = (1...(Self.cap + 500)).map { $0 } + [Self.cap + 1_000]
        #expect(try Self.firstMissing(folders: Self.cap + 500, keys: keys) == String(Self.cap + 1_000))
    }

    /// The key right after the bound is read with the rest of the index.
    @Test func aKeyJustPastTheBoundIsFound() throws {
        let keys = (1...Self.cap).map { $0 } + [Self.cap + 1]
        #expect(try Self.firstMissing(folders: Self.cap, keys: keys) == String(Self.cap + 1))
        #expect(try Self.firstMissing(folders: 3, keys: [1, 2, 3]) == nil)
    }
}
