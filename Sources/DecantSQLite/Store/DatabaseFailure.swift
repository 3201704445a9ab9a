internal import CSQLite
import DecantCore
import GRDB

/// Turns what SQLite (through GRDB) throws into a located ``DecantError`` with the right code, so no raw database
/// error reaches a caller.
///
/// ```swift
/// do { try db.execute(sql: sql) } catch { throw DatabaseFailure.wrap(error, "cannot read", at: here) }
/// ```
enum DatabaseFailure {
    /// `error` as a ``DecantError``: a ``DecantError`` gets `location` where it had none; a database error becomes
    /// `.ioError` for failures of the file system or the disk, `.malformedInput` for a damaged or unexpected
    /// database (with SQLite's reason in the message); anything else `.ioError`.
    static func wrap(_ error: any Error, _ what: String, at location: Location) -> DecantError {
        if let decant = error as? DecantError { return decant.located(at: location) }
        if let database = error as? DatabaseError {
            let code: DecantError.Code
            switch database.resultCode {
            case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_NOMEM,
                .SQLITE_BUSY, .SQLITE_LOCKED:
                code = .ioError
            default:
                code = .malformedInput
            }
            return DecantError(code, "\(what): \(reason(of: error))", at: location, underlyingError: error)
        }
        return DecantError(.ioError, "\(what): \(error)", at: location, underlyingError: error)
    }

    /// A failed `sqlite3_step` as a ``DecantError``: a damaged database is `.malformedInput`, a failing disk or
    /// file system `.ioError`, with SQLite's reason either way.
    static func stepFailure(_ code: Int32, db: Database, _ what: String, at location: Location) -> DecantError {
        let reason = String(cString: sqlite3_errmsg(db.sqliteConnection))
        let primary = code & 0xFF
        let kind: DecantError.Code =
            [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOMEM, SQLITE_BUSY,
             SQLITE_LOCKED].contains(primary) ? .ioError : .malformedInput
        return DecantError(kind, "\(what): \(reason)", at: location)
    }

    /// SQLite's own words for a database error, without GRDB's framing.
    static func reason(of error: any Error) -> String {
        if let database = error as? DatabaseError {
            return database.message ?? "\(database.resultCode)"
        }
        return "\(error)"
    }
}
