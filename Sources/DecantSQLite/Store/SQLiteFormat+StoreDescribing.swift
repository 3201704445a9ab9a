public import DecantCore
import DecantFormats
public import Foundation
import DecantCodecs

/// A SQLite store describes itself from `Z_METADATA`, its database header (the journal mode), `Z_MODELCACHE` and its
/// tables' rows.
extension SQLiteFormat: StoreDescribingFormat {
    /// Opens the store (``SQLiteStore``) read only.
    public func describeStore(at url: URL) throws -> any DescribedStore {
        DescribedSQLiteStore(store: try SQLiteStore(contentsOf: url), journalMode: SQLiteStore.journalMode(of: url))
    }
}

/// A ``SQLiteStore`` as a ``DescribedStore``.
struct DescribedSQLiteStore: DescribedStore {
    let store: SQLiteStore
    let journalMode: String?

    var kind: String { "SQLite store" }
    var storeUUID: String { store.metadata.storeUUID }
    var storeType: String? { store.metadata.storeType }
    var frameworkVersion: Int? { store.metadata.frameworkVersion }
    var versionIdentifiers: [String] { store.metadata.versionIdentifiers }
    var entityVersionHashes: [String: Data] { store.metadata.entityVersionHashes }
    var modelCacheName: String? { "Z_MODELCACHE" }
    // A cache that cannot be decoded is still there.
    var hasModelCache: Bool { store.cachedModel != nil || store.modelCacheProblem != nil }
    var cachedModel: ObjectModel? { store.cachedModel }
    var modelCacheRefusal: DecantError? { store.modelCacheRefusal }

    func objectCounts(model: ObjectModel?) throws -> [String: Int] { try store.objectCounts(model: model) }

    /// A reader of the store's own connection that reads only `entities`.
    func makeReader(model: ObjectModel, entities: Set<String>, options: FormatOptions) throws -> any RecordReader {
        let reader = try SQLiteStoreReader(store: store, model: model, missingExternalData: options.missingExternalData)
        _ = try reader.apply(RecordSelection(entities: entities))
        return reader
    }
}

extension SQLiteStore {
    /// The journal mode the database header at `url` names: `wal` when its read/write versions are 2 (WAL), else
    /// `delete`; `unknown` when the header cannot be read.
    static func journalMode(of url: URL) -> String {
        let header = (try? FormatProbe.header(of: url, count: 20)) ?? Data()  // the store was just read: "unknown" if not
        guard header.count == 20 else { return "unknown" }
        return header[18] == 2 && header[19] == 2 ? "wal" : "delete"
    }
}
