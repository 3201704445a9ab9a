public import DecantCore
public import Foundation

/// A SQLite seed is copied into place as it is, with what its write-ahead log holds.
extension SQLiteFormat: StoreCopyingFormat {
    /// Copies the database with what its write-ahead log holds (``SQLiteStore/copyConsistently(from:to:)``).
    public func copyStore(from source: URL, to destination: URL) throws {
        try SQLiteStore.copyConsistently(from: source, to: destination)
    }
}
