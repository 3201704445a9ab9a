public import DecantCore
public import Foundation

/// Reads an Xcode 3 model version: a `Foo.xcdatamodel` folder holding `elements` (a keyed archive of Xcode's
/// private `XDPMModel`) instead of `contents`, as coredata-formats.md 1.8 describes. The `layout` file beside it is
/// the diagram and is not read.
///
/// ```swift
/// let model = try Xcode3ModelReader.read(contentsOf: url.appendingPathComponent("elements"), versionName: "Twitter")
/// print(model.isXcode3Model, model.entityVersionHashes.count)   // true 2
/// ```
///
/// The archive is walked by ``XDPMModelDecoder``, the decoder of the model snapshots a `.xcmappingmodel` embeds (the
/// same classes). Every value is kept as Xcode 3 stored it, relationship counts included: Xcode 3 wrote
/// `minCount = 1, maxCount = 1` on optional to-ones and Core Data hashed that 1, so the version hashes equal those of
/// the stores that model wrote. After decoding, the model's references are checked (parents, destinations and
/// inverses name declared entities and relationships, no inheritance cycle, no property declared twice); damaged
/// input throws ``DecantError`` `.malformedInput` naming the file and the `$objects` entry or the entity.
public enum Xcode3ModelReader: Sendable {
    /// Reads an `elements` file from disk; `versionName` names the model version (`Foo` for `Foo.xcdatamodel`).
    public static func read(contentsOf url: URL, versionName: String? = nil) throws -> ObjectModel {
        try decode(Data(wholeFile: url, what: "the Xcode 3 model file"), path: url.displayPath, versionName: versionName)
    }

    /// Decodes the bytes of an `elements` file; `path` is only used in error locations.
    public static func decode(_ data: Data, path: String, versionName: String? = nil) throws -> ObjectModel {
        guard !data.isEmpty else {
            throw DecantError(
                .malformedInput, "the Xcode 3 model file is empty (expected a keyed archive of an XDPMModel)",
                at: Location(path: path, offset: 0))
        }
        var model = try XDPMModelDecoder.decode(data, path: path)
        try checkReferences(of: model, path: path)
        model.versionName = versionName
        // A model without `_modelVersionIdentifier` still has one identifier, empty: the store RestKit's model wrote
        // (framework 419) carries `NSStoreModelVersionIdentifiers = [""]`, as stores of `contents` models do.
        if model.versionIdentifiers.isEmpty { model.versionIdentifiers = [""] }
        model.sourceInfo[ObjectModel.xcode3SourceKey] = "elements"
        return model
    }

    /// The checks ``XcdatamodelReader`` makes on a `contents` file, on the decoded model: an archive can name a
    /// property twice (the bucket is keyed by one name, the element carries another), point a relationship at an
    /// entity the package does not hold, or link generalizations into a cycle.
    static func checkReferences(of model: ObjectModel, path: String) throws {
        func fail(_ message: String, _ entity: String, _ key: String? = nil) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, entity: entity, keyPath: key))
        }
        let entities = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let declared = entities.mapValues { Set($0.relationships.map(\.name)) }
        // Whether `entity` declares or inherits relationship `name`: a walk up its parents, each visited once.
        func hasRelationship(_ name: String, in entity: String) -> Bool {
            var current: String? = entity
            var seen: Set<String> = []
            while let next = current, seen.insert(next).inserted {
                if declared[next]?.contains(name) == true { return true }
                current = entities[next]?.parentName
            }
            return false
        }
        for entity in model.entities {
            var names: Set<String> = []
            let declared = entity.attributes.map(\.name) + entity.relationships.map(\.name)
            for name in declared where !names.insert(name).inserted {
                throw fail("property \(name) is declared twice", entity.name, name)
            }
            if let parent = entity.parentName, entities[parent] == nil {
                throw fail("parent entity \(parent) is not in the model", entity.name)
            }
            for relationship in entity.relationships {
                guard let destinationName = relationship.destinationEntity else { continue }
                guard let destination = entities[destinationName] else {
                    throw fail(
                        "relationship \(relationship.name) points at entity \(destinationName), which is not in the model",
                        entity.name, relationship.name)
                }
                if let inverse = relationship.inverseName {
                    let owner = relationship.inverseEntity.flatMap { entities[$0] } ?? destination
                    guard hasRelationship(inverse, in: owner.name) else {
                        throw fail(
                            "relationship \(relationship.name) names inverse \(owner.name).\(inverse), which is not a relationship",
                            entity.name, relationship.name)
                    }
                }
            }
        }
        // Each chain is walked once: entities already known to reach a root end the walk (linear in the entities).
        var reachesRoot: Set<String> = []
        for entity in model.entities {
            var visiting: [String] = [entity.name]
            var onPath: Set<String> = [entity.name]
            var current = entity.name
            while !reachesRoot.contains(current), let parent = entities[current]?.parentName {
                guard onPath.insert(parent).inserted else {
                    throw fail("entity inheritance forms a cycle through \(parent)", entity.name)
                }
                visiting.append(parent)
                current = parent
            }
            reachesRoot.formUnion(visiting)
        }
    }
}

extension ObjectModel {
    /// The ``sourceInfo`` key that marks a version read from an Xcode 3 `elements` file. It holds a space, which no
    /// XML attribute name (the keys a `contents` file puts there) can.
    public static let xcode3SourceKey = "Xcode 3 model file"

    /// Whether this version was read from an Xcode 3 model file (`elements`), not a `contents` file or a `.mom`.
    public var isXcode3Model: Bool { sourceInfo[Self.xcode3SourceKey] != nil }
}
