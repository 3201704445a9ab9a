public import DecantCore

/// The settings of a Core Data SQLite store Decant writes: the `--journal` of the command line. (What a store
/// reader does with missing external data is shared with other store formats, in ``FormatOptions``.)
///
/// ```swift
/// var options = FormatOptions(bundle: notes)
/// options.sqlite.journalMode = .delete   // one self-contained file, the form to bundle as a seed
/// ```
public struct SQLiteOptions: FormatSpecificOptions {
    /// The journal mode the finished store is left in.
    public var journalMode: JournalMode = .wal

    /// WAL, as Core Data leaves a store.
    public init() {}

    /// The journal mode a store is left in.
    public enum JournalMode: String, Sendable, Hashable, CaseIterable {
        /// Write-ahead logging, Core Data's default.
        case wal
        /// A rollback journal: a single self-contained file, the form to bundle as a seed.
        case delete
    }
}

extension FormatOptions {
    /// The settings of a SQLite store written.
    public var sqlite: SQLiteOptions {
        get { self[SQLiteOptions.self] }
        set { self[SQLiteOptions.self] = newValue }
    }
}
