public import Foundation

/// A format whose inputs are stores that are put elsewhere as they are (a seed copied into place), file by file as
/// one consistent set, rather than re-written object by object.
///
/// ```swift
/// if let store = format as? any StoreCopyingFormat { try store.copyStore(from: seed, to: staging) }
/// ```
public protocol StoreCopyingFormat: RecordFormat {
    /// Copies the store at `source` to `destination`, a new file, as one consistent set (a SQLite database with what
    /// its write-ahead log holds). Its companion folders (external data) are the caller's to copy.
    /// - Throws: `.malformedInput` when `source` is not such a store; `.cannotCreateOutput` / `.ioError` when the
    ///   copy cannot be written. Whatever was written is removed on error.
    func copyStore(from source: URL, to destination: URL) throws
}
