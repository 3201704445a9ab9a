import DecantCore
import Foundation
import GRDB

/// A temporary SQLite database in a folder of its own, where a spilling set or map keeps what does not fit in memory.
/// The folder is removed when the object goes (or at ``close()``), after the connection is closed.
///
/// ```swift
/// let spill = try SpillDatabase(prefix: "decant-keys", in: nil, schema: "CREATE TABLE keys (key PRIMARY KEY)")
/// try spill.queue.inDatabase { db in try db.execute(sql: "INSERT INTO keys VALUES (1)") }
/// ```
final class SpillDatabase {
    /// The folder holding the database file.
    let folder: URL
    /// The connection.
    let queue: DatabaseQueue
    private var isClosed = false

    /// Creates the folder under `directory` (the system's temporary directory when nil) and the database in it, with
    /// no journal and no syncing (nothing in it outlives the process) and `schema` run once.
    init(prefix: String, in directory: URL?, schema: String) throws {
        let parent = directory ?? FileManager.default.temporaryDirectory
        let folder = parent.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let queue = try DatabaseQueue(path: folder.appendingPathComponent("spill.sqlite").path)
            try queue.inDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
                try db.execute(sql: schema)
            }
            self.folder = folder
            self.queue = queue
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw DecantError(
                .ioError, "cannot create a temporary file to spill to", at: Location(path: folder.path),
                underlyingError: error)
        }
    }

    deinit { close() }

    /// Closes the connection and removes the folder; the database cannot be used afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        try? queue.close()
        try? FileManager.default.removeItem(at: folder)
    }
}

@available(*, unavailable)
extension SpillDatabase: Sendable {}
