public import DecantCore
public import Foundation

/// The Core Data SQLite store as a ``RecordFormat``: recognised by the SQLite header, read with the model its
/// hashes match (a version of the given bundle, or its own `Z_MODELCACHE`), written with Core Data's schema.
///
/// ```swift
/// var reader = try SQLiteFormat().makeReader(at: url, options: FormatOptions(bundle: notes))
/// ```
public struct SQLiteFormat: RecordFormat {
    public let name = "sqlite"
    /// A Core Data persistent store: objects brought in from records meet the model's rules.
    public var isPersistentStore: Bool { true }
    /// Each uniqueness constraint is a unique index: the writer refuses a second object with its key.
    public var enforcesUniquenessConstraints: Bool { true }
    public let fileExtensions = ["sqlite", "sqlite3", "db", "store"]

    /// The format.
    public init() {}

    public func recognizes(_ probe: FormatProbe) -> Bool {
        !probe.isDirectory && probe.header.starts(with: Data("SQLite format 3\0".utf8))
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        let store = try SQLiteStore(contentsOf: url)
        let model = try store.resolveModel(bundle: options.bundle)
        return try SQLiteStoreReader(store: store, model: model, missingExternalData: options.missingExternalData)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try SQLiteStoreWriter(writingAt: url, model: model, journalMode: options.sqlite.journalMode)
    }
}
