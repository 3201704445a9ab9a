internal import CSQLite
import DecantCore

/// A minimal raw SQLite connection for schema reading: open, execute, read rows as text.
final class RawDatabase {
    private let handle: OpaquePointer
    private let path: String

    /// Opens the database at `path` with `sqlite3_open_v2` flags.
    init(path: String, flags: Int32) throws {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "status \(status)"
            if let handle { sqlite3_close_v2(handle) }
            throw DecantError(.ioError, "cannot open SQLite database: \(message)", at: Location(path: path))
        }
        self.handle = handle
        self.path = path
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one statement that returns no rows.
    func execute(_ sql: String) throws {
        _ = try rows(sql)
    }

    /// Runs one statement and returns every row, each value as text (`nil` for NULL).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw failure("cannot prepare \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure("cannot run \(sql)") }
            let count = sqlite3_column_count(statement)
            result.append((0..<count).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
        }
        return result
    }

    private func failure(_ what: String) -> DecantError {
        DecantError(.ioError, "\(what): \(String(cString: sqlite3_errmsg(handle)))", at: Location(path: path))
    }
}
