public import DecantCore
public import Foundation

/// What `decant inspect` says about a Core Data SQLite or binary store: format, metadata, store UUID, object counts
/// per entity, and which model version it was written with (or the nearest version and what differs).
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
    /// `sqlite` or `binary`.
    public var format: String = "sqlite"
    /// `wal` or `delete`, from the database header; `nil` for a binary store.
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

    /// Inspects the store at `url`, comparing it with `bundle` when given, else with its own model cache.
    public init(store url: URL, path: String? = nil, bundle: ModelBundle?) throws {
        let store = try SQLiteStore(contentsOf: url)
        self.path = path ?? url.displayPath
        self.journalMode = Self.journalMode(of: url)
        self.storeUUID = store.metadata.storeUUID
        self.storeType = store.metadata.storeType
        self.frameworkVersion = store.metadata.frameworkVersion
        self.versionIdentifiers = store.metadata.versionIdentifiers
        let hashes = store.metadata.entityVersionHashes
        self.entityVersionHashes = hashes.mapValues { $0.base64EncodedString() }
        // A cache that cannot be decoded is still there; it stops the report only when no model was given.
        self.hasModelCache = store.cachedModel != nil || store.modelCacheProblem != nil
        if bundle == nil, let refusal = store.modelCacheRefusal { throw refusal }
        var resolved: ObjectModel?
        if let bundle {
            let match = ModelMatch(
                storeHashes: hashes, storeIdentifiers: store.metadata.versionIdentifiers, bundle: bundle)
            resolved = match.matched
            self.model = ModelSummary(
                source: "bundle", bundle: bundle.name, matchedVersion: match.matched?.versionName,
                nearestVersion: match.nearest?.versionName, differences: match.differences.map(\.description),
                choice: match.choice)
        } else if let cached = store.cachedModel {
            let differences = ModelMatch.differences(store: hashes, model: cached.entityVersionHashes)
            resolved = differences.isEmpty ? cached : nil
            self.model = ModelSummary(
                source: "cache", bundle: nil, matchedVersion: differences.isEmpty ? "Z_MODELCACHE" : nil,
                nearestVersion: nil, differences: differences.map(\.description))
        }
        self.entityCounts = try store.objectCounts(model: resolved)
        if let resolved {
            var audit = TransformableAudit(model: resolved, path: self.path)
            if !audit.isEmpty {
                do {
                    var reader = try SQLiteStoreReader(store: store, model: resolved, missingExternalData: .keep)
                    _ = try reader.apply(RecordSelection(entities: audit.entityNames))
                    audit.read(from: &reader)
                } catch {
                    audit.stop(because: (error as? DecantError)?.description ?? "\(error)")
                }
                self.transformables = audit.report.isEmpty ? nil : audit.report
            }
        }
    }

    /// Inspects the binary store (`NSBinaryStoreType`) at `url`, comparing it with `bundle` when given. Without a
    /// model it still tells everything but the model: metadata, UUID, hashes and objects per entity (each node names
    /// its entity).
    /// - Throws: ``DecantError`` `.malformedInput` for a damaged store, naming the byte offset or the node.
    public init(binaryStore url: URL, path: String? = nil, bundle: ModelBundle?) throws {
        let file = try BinaryStoreFile(contentsOf: url)
        let metadata = try file.storeMetadata()
        self.path = path ?? url.displayPath
        self.format = "binary"
        self.journalMode = nil
        self.storeUUID = metadata.storeUUID
        self.storeType = metadata.storeType
        self.frameworkVersion = metadata.frameworkVersion
        self.versionIdentifiers = metadata.versionIdentifiers
        let hashes = metadata.entityVersionHashes
        self.entityVersionHashes = hashes.mapValues { $0.base64EncodedString() }
        self.hasModelCache = false
        if let bundle {
            let match = ModelMatch(storeHashes: hashes, storeIdentifiers: metadata.versionIdentifiers, bundle: bundle)
            self.model = ModelSummary(
                source: "bundle", bundle: bundle.name, matchedVersion: match.matched?.versionName,
                nearestVersion: match.nearest?.versionName, differences: match.differences.map { $0.description },
                choice: match.choice)
            if let matched = match.matched {
                var audit = TransformableAudit(model: matched, path: self.path)
                if !audit.isEmpty {
                    do {
                        var reader = try BinaryStoreFormat().makeReader(at: url, options: FormatOptions(bundle: bundle))
                        audit.read(from: &reader)
                    } catch {
                        audit.stop(because: (error as? DecantError)?.description ?? "\(error)")
                    }
                    self.transformables = audit.report.isEmpty ? nil : audit.report
                }
            }
        }
        self.entityCounts = Dictionary(grouping: file.nodes) { $0.entity }.mapValues { $0.count }
    }

    /// `wal` when the header's read/write versions are 2 (WAL), else `delete`.
    static func journalMode(of url: URL) -> String {
        let header = (try? FormatProbe.header(of: url, count: 20)) ?? Data()  // the store was just read: "unknown" if not
        guard header.count == 20 else { return "unknown" }
        return header[18] == 2 && header[19] == 2 ? "wal" : "delete"
    }

    /// The report as human-readable text.
    public var text: String {
        var lines = [
            format == "binary"
                ? "\(path): Core Data binary store"
                : "\(path): Core Data SQLite store (\(journalMode ?? "unknown") journal)"
        ]
        lines.append("  store UUID:        \(storeUUID)")
        lines.append("  framework version: \(frameworkVersion.map(String.init) ?? "unknown")")
        lines.append("  identifiers:       [\(versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))]")
        if format != "binary" { lines.append("  model cache:       \(hasModelCache ? "yes" : "no")") }
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
                format == "binary"
                    ? "  model:             unknown (a binary store carries no model; give it with --model)"
                    : "  model:             unknown (no Z_MODELCACHE; give the model with --model)")
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
