public import Foundation

/// A format whose inputs are Core Data persistent stores that describe themselves: their metadata (UUID, store type,
/// framework version, the model's identifiers and entity version hashes), what their header says, the model they
/// keep, and their objects per entity. `decant inspect` prints it (``StoreReport``), and a seeding checks an existing
/// store by it; neither names the format, so a new store format that adopts this is inspected and seeded with no
/// change to either.
///
/// ```swift
/// if let format = try registry.inputFormat(of: url, named: nil) as? any StoreDescribingFormat {
///     let store = try format.describeStore(at: url)
///     print(store.storeUUID, try store.objectCounts(model: nil))
/// }
/// ```
public protocol StoreDescribingFormat: RecordFormat {
    /// Opens the store at `url` to describe it, read only: its files are never modified.
    /// - Throws: `.fileNotFound`, or `.malformedInput` when the file is not a store of this format.
    func describeStore(at url: URL) throws -> any DescribedStore
}

/// An open store, as its ``StoreDescribingFormat`` describes it. Not `Sendable`: it may hold a live connection, used
/// by one job and dropped at its end.
public protocol DescribedStore {
    /// What the store is, in the words of a report's first line after "Core Data": `SQLite store`, `binary store`.
    var kind: String { get }
    /// The journal mode its header names (`wal`, `delete`, `unknown`); nil for a format without one.
    var journalMode: String? { get }
    /// `NSStoreUUID`.
    var storeUUID: String { get }
    /// `NSStoreType`.
    var storeType: String? { get }
    /// `NSPersistenceFrameworkVersion`.
    var frameworkVersion: Int? { get }
    /// `NSStoreModelVersionIdentifiers`.
    var versionIdentifiers: [String] { get }
    /// `NSStoreModelVersionHashes`: entity name → hash.
    var entityVersionHashes: [String: Data] { get }
    /// Where the format's stores keep their model (`Z_MODELCACHE`); nil when they keep none (a binary store).
    var modelCacheName: String? { get }
    /// Whether this store has a model cache, decodable or not.
    var hasModelCache: Bool { get }
    /// The model the store keeps, when it keeps one that decodes.
    var cachedModel: ObjectModel? { get }
    /// Why the kept model cannot be used, for a caller that needs it (no model given); nil when it can or there is
    /// none.
    var modelCacheRefusal: DecantError? { get }
    /// Objects per entity; `model` (the version the store matches) names what the store numbers, when given.
    func objectCounts(model: ObjectModel?) throws -> [String: Int]
    /// A reader of the objects of `entities` (at least) through `model`, the version of `options.bundle` the store
    /// matches or the model it keeps.
    func makeReader(model: ObjectModel, entities: Set<String>, options: FormatOptions) throws -> any RecordReader
}

extension DescribedStore {
    /// The model the store was written with: the version of `bundle` whose hashes match, or without a bundle the model
    /// it keeps, once its hashes are proved equal to the store's.
    /// - Throws: the kept model's refusal without a bundle; `.modelMismatch` naming the nearest version and what
    ///   differs; `.unsupportedFormat` when there is neither a bundle nor a kept model.
    public func resolveModel(bundle: ModelBundle?, at location: Location) throws -> ObjectModel {
        if bundle == nil, let modelCacheRefusal { throw modelCacheRefusal }
        let advice =
            modelCacheName.map { "the store has no \($0) (written by Core Data \(frameworkVersion ?? 0)); " }
            ?? "a \(kind) carries no model; "
        return try ModelMatch.resolve(
            storeHashes: entityVersionHashes, storeIdentifiers: versionIdentifiers, bundle: bundle,
            cachedModel: cachedModel, missingModelAdvice: advice + "give its model with --model", at: location)
    }
}
