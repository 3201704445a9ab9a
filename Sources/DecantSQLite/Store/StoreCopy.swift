import DecantCore
public import Foundation
import GRDB

extension SQLiteStore {
    /// Copies the database of the store at `source` to `destination` as one consistent, self-contained file: the
    /// content of its `-wal` included (through SQLite's backup of a private, read-only copy of the set), nothing
    /// from another copy. The copy is flushed to disk. `destination` must not exist. (The store's external-data
    /// folder is the caller's to copy: ``StoreFiles/supportFolder``.)
    ///
    /// ```swift
    /// try SQLiteStore.copyConsistently(from: bundled, to: staging)
    /// ```
    /// - Throws: `.malformedInput` when the source is not a SQLite database, `.cannotCreateOutput` /
    ///   `.ioError` when the copy cannot be written. Whatever was written is removed on error.
    public static func copyConsistently(from source: URL, to destination: URL) throws {
        let files = StoreFiles(database: source)
        let (uri, temporaryFolder) = try files.readableLocation()
        defer { if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) } }
        do {
            var configuration = GRDB.Configuration()
            configuration.readonly = true
            let reader = try DatabaseQueue(path: uri, configuration: configuration)
            let writer = try DatabaseQueue(path: destination.path)
            try reader.backup(to: writer)
            try writer.close()
            try reader.close()
            try DestinationLease.synchronize(destination)
        } catch {
            for file in [destination] + StoreFiles(database: destination).companions() {
                try? FileManager.default.removeItem(at: file)
            }
            throw DatabaseFailure.wrap(error, "cannot copy the store", at: Location(path: source.displayPath))
        }
    }
}
