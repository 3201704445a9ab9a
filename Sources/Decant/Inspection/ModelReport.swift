public import Foundation

/// What `decant inspect` says about a model: its versions, the current one, and per version the identifiers,
/// checksum and every entity's version hash.
///
/// ```swift
/// let report = ModelReport(bundle: bundle, path: "Notes.xcdatamodeld")
/// print(report.text)
/// let json = try report.jsonData()
/// ```
public struct ModelReport: Sendable, Codable, Hashable {
    /// One entity of one version.
    public struct EntitySummary: Sendable, Codable, Hashable {
        /// The entity name.
        public var name: String
        /// Its parent entity, if any.
        public var parent: String?
        /// Whether it is abstract.
        public var isAbstract: Bool
        /// Its version hash, base64.
        public var versionHash: String
        /// Persistent and transient attributes, inherited ones included.
        public var attributeCount: Int
        /// Relationships, inherited ones included.
        public var relationshipCount: Int
    }

    /// One version of the model.
    public struct VersionSummary: Sendable, Codable, Hashable {
        /// The version name.
        public var name: String
        /// Whether it is the bundle's current version.
        public var isCurrent: Bool
        /// Whether it was read from an Xcode 3 model file (`elements`) rather than `contents` or a `.mom`.
        public var isXcode3Model: Bool
        /// The version identifiers (`userDefinedModelVersionIdentifier`).
        public var versionIdentifiers: [String]
        /// The model checksum (base64 SHA-256).
        public var checksum: String
        /// `NSStoreModelVersionHashesDigest` (base64 SHA-512).
        public var versionHashesDigest: String
        /// Entities sorted by name.
        public var entities: [EntitySummary]
    }

    /// Always `model`.
    public var kind: String = "model"
    /// The path inspected, as given.
    public var path: String
    /// The bundle name.
    public var name: String
    /// The file kind (`xcdatamodeld`, `xcdatamodel`, `momd`, `mom`).
    public var format: String
    /// The current version's name.
    public var currentVersion: String?
    /// Every version, in bundle order (oldest first when the order is known).
    public var versions: [VersionSummary]
    /// How the versions are ordered: `by-name` (Xcode's numbering), `given` (`--version-order`) or `unknown` (the
    /// names follow no common scheme; the current version is the newest).
    public var versionOrder: String?

    /// Summarises a bundle.
    public init(bundle: ModelBundle, path: String) {
        self.path = path
        self.name = bundle.name
        self.format = bundle.sourceKind.rawValue
        let current = bundle.currentVersion?.versionName
        self.currentVersion = current
        self.versionOrder = bundle.order.rawValue
        self.versions = bundle.versions.map { model in
            let hashes = model.entityVersionHashes
            let entities = model.entities.sorted { VersionHashing.precedes($0.name, $1.name) }.map { entity in
                let (attributes, relationships) = model.properties(of: entity)
                return EntitySummary(
                    name: entity.name,
                    parent: entity.parentName,
                    isAbstract: entity.isAbstract,
                    versionHash: hashes[entity.name]?.base64EncodedString() ?? "",
                    attributeCount: attributes.count,
                    relationshipCount: relationships.count
                )
            }
            return VersionSummary(
                name: model.versionName ?? bundle.name,
                isCurrent: model.versionName == current,
                isXcode3Model: model.isXcode3Model,
                versionIdentifiers: model.versionIdentifiers,
                checksum: ObjectModel.versionChecksum(of: hashes),
                versionHashesDigest: ObjectModel.versionHashesDigest(of: hashes),
                entities: entities
            )
        }
    }

    /// The report as human-readable text.
    public var text: String {
        var lines = ["\(path): \(format) model \"\(name)\", \(versions.count) version(s)"]
        if versions.count > 1, let versionOrder, let order = VersionOrder(rawValue: versionOrder) {
            lines.append("version order: \(order): \(versions.map(\.name).joined(separator: ", "))")
        }
        for version in versions {
            let marker = version.isCurrent ? " (current)" : ""
            let identifiers = version.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", ")
            lines.append("")
            lines.append("version \(version.name)\(marker)")
            if version.isXcode3Model { lines.append("  format:      Xcode 3 model (elements)") }
            lines.append("  identifiers: [\(identifiers)]")
            lines.append("  checksum:    \(version.checksum)")
            for entity in version.entities {
                var line = "  \(entity.name)  \(entity.versionHash)  \(entity.attributeCount) attributes, "
                line += "\(entity.relationshipCount) relationships"
                if let parent = entity.parent { line += ", parent \(parent)" }
                if entity.isAbstract { line += ", abstract" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON document (described by `schemas/inspect.schema.json`).
    public func jsonData() throws -> Data { try jsonDocument() }
}
