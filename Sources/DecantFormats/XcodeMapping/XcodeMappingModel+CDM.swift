import DecantCore
public import Foundation
import DecantCodecs

extension XcodeMappingModel {
    /// Reads a compiled mapping model (`.cdm`): the `NSMappingModel` keyed archive of coredata-formats.md 3.2.
    ///
    /// ```swift
    /// let model = try XcodeMappingModel(cdmData: Data(contentsOf: url), path: url.path)
    /// print(model.entityMappings.map(\.name))   // ["CarToCar", "LuxuryCarToLuxuryCar", …]
    /// ```
    ///
    /// Entity mappings keep their `NSEntityMappings` order, property mappings their stored order. Damaged bytes, a
    /// root that is not an `NSMappingModel`, a mapping without a name or with an unknown type, and unreadable
    /// expressions throw ``DecantError`` `.malformedInput` naming the object.
    public init(cdmData: Data, path: String) throws {
        XcodeMappingParseObserver.record(path)
        let archive = try KeyedArchive(data: cdmData, path: path)
        let reader = CDMReader(archive: archive)
        self.init(path: path, entityMappings: try reader.entityMappings())
    }
}

extension XcodeMappingModel {
    /// The entity mappings of a `.cdm` with only their names, types and entity names and hashes read: no expression,
    /// property mapping or user info (``XcodeMappingHeader``). Throws as ``init(cdmData:path:)`` for what it reads.
    static func cdmEntityHashes(data: Data, path: String) throws -> [XcodeEntityMapping] {
        try CDMReader(archive: KeyedArchive(data: data, path: path)).entityMappings(hashesOnly: true)
    }
}

/// Reads the parts of an `NSMappingModel` archive.
private struct CDMReader {
    let archive: KeyedArchive

    func fail(_ message: String, _ object: ArchivedObject?, key: String? = nil) -> DecantError {
        let index = object.flatMap { $0.index >= 0 ? "$objects[\($0.index)]" : nil }
        return DecantError(.malformedInput, message, at: Location(path: archive.path, object: index, keyPath: key))
    }

    func entityMappings(hashesOnly: Bool = false) throws -> [XcodeEntityMapping] {
        guard let root = try archive.rootObject() else { throw fail("the archive has no root object", nil) }
        guard root.isKind(of: "NSMappingModel") else {
            throw fail("expected an NSMappingModel at the root, found \(root.className ?? "a plain value")", root)
        }
        var mappings: [XcodeEntityMapping] = []
        for element in try archive.elements(forKey: "NSEntityMappings", in: root) ?? [] {
            guard let object = try archive.object(for: element) else {
                throw fail("NSEntityMappings holds nil", root, key: "NSEntityMappings")
            }
            mappings.append(try entityMapping(object, hashesOnly: hashesOnly))
        }
        return mappings
    }

    func entityMapping(_ object: ArchivedObject, hashesOnly: Bool) throws -> XcodeEntityMapping {
        guard object.isKind(of: "NSEntityMapping") else {
            throw fail("expected an NSEntityMapping, found \(object.className ?? "a plain value")", object)
        }
        guard let name = try archive.string(forKey: "NSMappingName", in: object) else {
            throw fail("entity mapping has no NSMappingName", object, key: "NSMappingName")
        }
        let rawType = try archive.integer(forKey: "NSMappingType", in: object) ?? 0
        guard let type = XcodeEntityMapping.MappingType(rawValue: Int(clamping: rawType)) else {
            throw fail("NSMappingType \(rawType) is not an entity mapping type", object, key: "NSMappingType")
        }
        var mapping = XcodeEntityMapping(
            name: name,
            type: type,
            sourceEntityName: try archive.string(forKey: "NSSourceEntityName", in: object),
            destinationEntityName: try archive.string(forKey: "NSDestinationEntityName", in: object)
        )
        mapping.sourceEntityVersionHash = try archive.data(forKey: "NSSourceEntityVersionHash", in: object)
        mapping.destinationEntityVersionHash = try archive.data(forKey: "NSDestinationEntityVersionHash", in: object)
        if hashesOnly { return mapping }
        mapping.sourceExpression = try NSExpressionNode.decode(object["NSSourceExpression"], in: archive)
        mapping.migrationPolicyClassName = try archive.string(forKey: "NSEntityMigrationPolicyClassName", in: object)
        mapping.attributeMappings = try propertyMappings(object, key: "NSAttributeMappings")
        mapping.relationshipMappings = try propertyMappings(object, key: "NSRelationshipMappings")
        mapping.userInfo = try userInfo(object)
        return mapping
    }

    func propertyMappings(_ owner: ArchivedObject, key: String) throws -> [XcodePropertyMapping] {
        var mappings: [XcodePropertyMapping] = []
        for element in try archive.elements(forKey: key, in: owner) ?? [] {
            guard let object = try archive.object(for: element) else {
                throw fail("\(key) holds nil", owner, key: key)
            }
            guard object.isKind(of: "NSPropertyMapping") else {
                throw fail("expected an NSPropertyMapping, found \(object.className ?? "a plain value")", object)
            }
            let nameKey = "NSDestinationPropertyName"
            guard let name = try archive.string(forKey: nameKey, in: object) else {
                throw fail("property mapping has no \(nameKey)", object, key: nameKey)
            }
            let expression = try NSExpressionNode.decode(object["NSValueExpression"], in: archive)
            mappings.append(XcodePropertyMapping(name: name, valueExpression: expression))
        }
        return mappings
    }

    /// `NSUserInfo`, keeping the entries whose values are strings.
    func userInfo(_ object: ArchivedObject) throws -> [String: String] {
        var info: [String: String] = [:]
        for entry in try archive.stringKeyedEntries(forKey: "NSUserInfo", in: object) ?? [] {
            if let text = try? archive.string(entry.value) { info[entry.key] = text }
        }
        return info
    }
}
