public import DecantCore
public import Foundation
import DecantCodecs

/// What `decant inspect` says about a Core Data persistent store, as its format describes it
/// (``StoreDescribingFormat``: SQLite and binary stores): format, metadata, store UUID, object counts per entity, and
/// which model version it was written with (or the nearest version and what differs).
///
/// ```swift
/// let report = try StoreReport(store: URL(fileURLWithPath: "Notes.sqlite"), bundle: notes)
/// print(report.text)
/// ```
public struct StoreReport: Sendable, Codable, Hashable {
    /// Which model the report compared the store with.
    public struct ModelSummary: Sendable, Codable, Hashable {
        /// `bundle` when a model was given, `cache` when the store's own `Z_MODELCACHE` was used.
        public var source: String
        /// The model bundle's name, when one was given.
        public var bundle: String?
        /// The version whose hashes equal the store's.
        public var matchedVersion: String?
        /// When nothing matched: the nearest version.
        public var nearestVersion: String?
        /// When nothing matched: per entity what differs.
        public var differences: [String]
        /// When several versions have the store's hashes: which was taken, and why (``ModelMatch/choice``).
        public var choice: String?
    }

    /// Always `store`.
    public var kind: String = "store"
    /// The path inspected, as given.
    public var path: String
    /// The store's format (its ``RecordFormat/name``: `sqlite`, `binary`).
    public var format: String
    /// The journal mode its header names (`wal`, `delete`); `nil` for a format without one (a binary store).
    public var journalMode: String?
    /// `Z_UUID`.
    public var storeUUID: String
    /// `NSStoreType`.
    public var storeType: String?
    /// `NSPersistenceFrameworkVersion`.
    public var frameworkVersion: Int?
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// `NSStoreModelVersionHashes`, base64, by entity.
    public var entityVersionHashes: [String: String]
    /// Whether the store keeps its model in `Z_MODELCACHE`.
    public var hasModelCache: Bool
    /// Objects per entity.
    public var entityCounts: [String: Int]
    /// The model comparison; `nil` when the store has no cache and no model was given.
    public var model: ModelSummary?
    /// What the Transformable attributes (and Binary attributes holding keyed archives) hold and whether
    /// `NSSecureUnarchiveFromData` decodes it (``TransformableReport``); `nil` when the store's model is not known (no
    /// version matches) or has no such attribute.
    public var transformables: TransformableReport?
    /// What the store is, in words (``DescribedStore/kind``: `SQLite store`), for the text; not in the JSON document.
    public var storeKind: String = "store"
    /// Where the store's format keeps its model (``DescribedStore/modelCacheName``: `Z_MODELCACHE`), nil when it keeps
    /// none; for the text, not in the JSON document.
    public var modelCacheName: String?

    private enum CodingKeys: String, CodingKey {
        case kind, path, format, journalMode, storeUUID, storeType, frameworkVersion, versionIdentifiers
        case entityVersionHashes, hasModelCache, entityCounts, model, transformables
    }

    /// Inspects the store at `url` in the format called `name` (else the store format of `registry` that recognises
    /// it), comparing it with `bundle` when given, else with the model it keeps. The store's files are never modified.
    /// - Throws: `.unsupportedFormat` when the input is no store a format describes (``StoreDescribingFormat``); the
    ///   format's errors for a damaged store (naming the byte offset, the table or the node); the kept model's refusal
    ///   when it cannot be decoded and no model was given.
    public init(
        store url: URL, path: String? = nil, bundle: ModelBundle?, format name: String? = nil,
        registry: FormatRegistry = .builtIn
    ) throws {
        let format = try Self.storeFormat(of: url, named: name, registry: registry)
        let store = try format.describeStore(at: url)
        self.path = path ?? url.displayPath
        self.format = format.name
        self.storeKind = store.kind
        self.modelCacheName = store.modelCacheName
        self.journalMode = store.journalMode
        self.storeUUID = store.storeUUID
        self.storeType = store.storeType
        self.frameworkVersion = store.frameworkVersion
        self.versionIdentifiers = store.versionIdentifiers
        let hashes = store.entityVersionHashes
        self.entityVersionHashes = hashes.mapValues { $0.base64EncodedString() }
        self.hasModelCache = store.hasModelCache
        if bundle == nil, let refusal = store.modelCacheRefusal { throw refusal }
        var resolved: ObjectModel?
        if let bundle {
            let match = ModelMatch(storeHashes: hashes, storeIdentifiers: store.versionIdentifiers, bundle: bundle)
            resolved = match.matched
            self.model = ModelSummary(
                source: "bundle", bundle: bundle.name, matchedVersion: match.matched?.versionName,
                nearestVersion: match.nearest?.versionName, differences: match.differences.map(\.description),
                choice: match.choice)
        } else if let cached = store.cachedModel {
            let differences = ModelMatch.differences(store: hashes, model: cached.entityVersionHashes)
            resolved = differences.isEmpty ? cached : nil
            self.model = ModelSummary(
                source: "cache", bundle: nil, matchedVersion: differences.isEmpty ? store.modelCacheName : nil,
                nearestVersion: nil, differences: differences.map(\.description))
        }
        self.entityCounts = try store.objectCounts(model: resolved)
        if let resolved {
            var audit = TransformableAudit(model: resolved, path: self.path)
            if !audit.isEmpty {
                do {
                    var options = FormatOptions(bundle: bundle)
                    options.missingExternalData = .keep
                    var reader = try store.makeReader(model: resolved, entities: audit.entityNames, options: options)
                    audit.read(from: &reader)
                } catch {
                    audit.stop(because: (error as? DecantError)?.description ?? "\(error)")
                }
                self.transformables = audit.report.isEmpty ? nil : audit.report
            }
        }
    }

    /// Inspects the binary store (`NSBinaryStoreType`) at `url`, comparing it with `bundle` when given: the store
    /// format that recognises it describes it (``init(store:path:bundle:format:registry:)``).
    @available(*, deprecated, renamed: "init(store:path:bundle:format:registry:)")
    public init(binaryStore url: URL, path: String? = nil, bundle: ModelBundle?) throws {
        try self.init(store: url, path: path, bundle: bundle)
    }

    /// The format of `registry` called `name`, else the one that recognises the store at `url` (else names its
    /// extension), that describes it.
    private static func storeFormat(of url: URL, named name: String?, registry: FormatRegistry) throws
        -> any StoreDescribingFormat
    {
        let format = try registry.inputFormat(of: url, named: name)
        guard let store = format as? any StoreDescribingFormat else {
            throw DecantError(
                .unsupportedFormat, "not a store Decant describes (a \(format.name) input)",
                at: Location(path: url.displayPath))
        }
        return store
    }

    /// The report as human-readable text.
    public var text: String {
        var lines = ["\(path): Core Data \(storeKind)" + (journalMode.map { " (\($0) journal)" } ?? "")]
        lines.append("  store UUID:        \(storeUUID)")
        lines.append("  framework version: \(frameworkVersion.map(String.init) ?? "unknown")")
        lines.append("  identifiers:       [\(versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))]")
        if modelCacheName != nil { lines.append("  model cache:       \(hasModelCache ? "yes" : "no")") }
        if let model {
            if let matched = model.matchedVersion {
                lines.append("  model:             matches \(model.bundle.map { "\($0) version " } ?? "")\(matched)")
                if let choice = model.choice { lines.append("    \(choice)") }
            } else {
                lines.append("  model:             no version matches; nearest \(model.nearestVersion ?? "none")")
                for difference in model.differences { lines.append("    \(difference)") }
            }
        } else {
            lines.append(
                "  model:             unknown ("
                    + (modelCacheName.map { "no \($0); give the model with --model" }
                        ?? "a \(storeKind) carries no model; give it with --model") + ")")
        }
        lines.append("  objects:")
        for name in Set(entityVersionHashes.keys).union(entityCounts.keys).sorted() {
            lines.append("    \(name)  \(entityCounts[name] ?? 0)")
        }
        if let transformables { lines += transformables.lines }
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON document (described by `schemas/inspect.schema.json`).
    public func jsonData() throws -> Data { try jsonDocument() }
}
