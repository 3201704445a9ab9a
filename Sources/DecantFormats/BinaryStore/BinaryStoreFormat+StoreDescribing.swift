public import DecantCore
public import Foundation
import DecantCodecs

/// A binary store describes itself from its metadata node and its object nodes, each of which names its entity: all
/// but the model, which a binary store does not keep.
extension BinaryStoreFormat: StoreDescribingFormat {
    /// Reads the store's nodes and metadata.
    /// - Throws: `.malformedInput` for a damaged store, naming the byte offset or the node.
    public func describeStore(at url: URL) throws -> any DescribedStore {
        let file = try BinaryStoreFile(contentsOf: url)
        return DescribedBinaryStore(url: url, file: file, metadata: try file.storeMetadata())
    }
}

/// A ``BinaryStoreFile`` as a ``DescribedStore``.
struct DescribedBinaryStore: DescribedStore {
    let url: URL
    let file: BinaryStoreFile
    let metadata: StoreMetadata

    var kind: String { "binary store" }
    var journalMode: String? { nil }
    var storeUUID: String { metadata.storeUUID }
    var storeType: String? { metadata.storeType }
    var frameworkVersion: Int? { metadata.frameworkVersion }
    var versionIdentifiers: [String] { metadata.versionIdentifiers }
    var entityVersionHashes: [String: Data] { metadata.entityVersionHashes }
    var modelCacheName: String? { nil }
    var hasModelCache: Bool { false }
    var cachedModel: ObjectModel? { nil }
    var modelCacheRefusal: DecantError? { nil }

    /// Each node names its entity: counted without a model.
    func objectCounts(model: ObjectModel?) throws -> [String: Int] {
        Dictionary(grouping: file.nodes) { $0.entity }.mapValues { $0.count }
    }

    /// A reader of the whole store, resolving its model against `options.bundle`.
    func makeReader(model: ObjectModel, entities: Set<String>, options: FormatOptions) throws -> any RecordReader {
        try BinaryStoreReader(contentsOf: url, options: options)
    }
}
