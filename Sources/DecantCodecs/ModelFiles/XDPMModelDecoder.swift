public import DecantCore
public import Foundation

/// Reads the model snapshot a `.xcmappingmodel` embeds (`sourcemodeldata` / `destinationmodeldata`): a keyed
/// archive of Xcode's private `XDPMModel`, walked generically as coredata-formats.md 3.4.1 describes, into an
/// ``ObjectModel`` whose version hashes equal those of the `.xcdatamodel` it was taken from.
///
/// ```swift
/// let model = try XDPMModelDecoder.decode(snapshotData, path: "V2toV3.xcmappingmodel/xcmapping.xml")
/// print(model.entities.map(\.name))   // ["Car", "LuxuryCar", "Person", "SportCar"]
/// ```
///
/// Entities come from `_xd_rootPackage.XDBucketForClassesstorage`, the parent from the first generalization's
/// `_general`, properties from `XDBucketForOwnedAttributesstorage` (`XDPMAttribute`, `XDPMRelationship`; other kinds
/// such as fetched properties are skipped), and every setting from the stereotypes' tagged values (`_name` →
/// `_default`). What the snapshot does not carry (derivations, composite types, configurations, fetch requests)
/// stays empty. Damaged snapshots throw ``DecantError`` `.malformedInput` naming the object.
public enum XDPMModelDecoder: Sendable {
    /// Decodes snapshot bytes (a binary or XML property list).
    public static func decode(_ data: Data, path: String?) throws -> ObjectModel {
        try decode(KeyedArchive(data: data, path: path))
    }

    /// Decodes an already parsed snapshot archive.
    public static func decode(_ archive: KeyedArchive) throws -> ObjectModel {
        try SnapshotReader(archive: archive).model()
    }
}

/// The walk behind ``XDPMModelDecoder``.
private struct SnapshotReader {
    let archive: KeyedArchive

    func fail(_ message: String, _ object: ArchivedObject?, key: String? = nil) -> DecantError {
        let index = object.flatMap { $0.index >= 0 ? "$objects[\($0.index)]" : nil }
        return DecantError(.malformedInput, message, at: Location(path: archive.path, object: index, keyPath: key))
    }

    func model() throws -> ObjectModel {
        guard let root = try archive.rootObject() else { throw fail("the model snapshot has no root object", nil) }
        guard root.isKind(of: "XDPMModel") else {
            throw fail("expected an XDPMModel at the root, found \(root.className ?? "a plain value")", root)
        }
        guard let package = try archive.object(forKey: "_xd_rootPackage", in: root) else {
            throw fail("XDPMModel has no _xd_rootPackage", root, key: "_xd_rootPackage")
        }
        var entities: [Entity] = []
        var seen: Set<String> = []
        for entry in try archive.stringKeyedEntries(forKey: "XDBucketForClassesstorage", in: package) ?? [] {
            guard let object = try archive.object(for: entry.value) else { continue }
            guard object.isKind(of: "XDPMEntity") else {
                throw fail("class \(entry.key) is a \(object.className ?? "plain value"), not an XDPMEntity", object)
            }
            let entity = try self.entity(object)
            guard seen.insert(entity.name).inserted else {
                throw fail("entity \(entity.name) appears twice", object, key: "_name")
            }
            entities.append(entity)
        }
        var model = ObjectModel(entities: entities.sorted { $0.name < $1.name })
        if let identifier = try archive.string(forKey: "_modelVersionIdentifier", in: root), !identifier.isEmpty {
            model.versionIdentifiers = [identifier]
        }
        return model
    }

    /// The `_name` of a named element.
    func name(of object: ArchivedObject) throws -> String {
        guard let name = try archive.string(forKey: "_name", in: object), !name.isEmpty else {
            throw fail("\(object.className ?? "element") has no _name", object, key: "_name")
        }
        return name
    }

    /// The tagged values of an element: each stereotype's owned attributes, `_name` → `_default` as written.
    func taggedValues(of object: ArchivedObject) throws -> [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [:]
        for stereotype in try archive.stringKeyedEntries(forKey: "XDBucketForStereotypesstorage", in: object) ?? [] {
            guard let stereotypeObject = try archive.object(for: stereotype.value) else { continue }
            let key = "XDBucketForOwnedAttributesstorage"
            for tag in try archive.stringKeyedEntries(forKey: key, in: stereotypeObject) ?? [] {
                guard let tagObject = try archive.object(for: tag.value) else { continue }
                values[tag.key] = tagObject["_default"] ?? .uid(0)
            }
        }
        return values
    }

    /// Reads tag `key` with `read`, naming `owner` and the tag in an error.
    func tag<T>(
        _ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject,
        _ read: (PropertyListValue?) throws -> T
    ) throws -> T {
        do {
            return try read(tags[key])
        } catch let error as DecantError {
            throw relocated(error, owner, key)
        }
    }

    func string(_ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject) throws -> String? {
        try tag(tags, key, owner) { try archive.string($0) }
    }

    func bool(_ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject) throws -> Bool? {
        try tag(tags, key, owner) { try archive.bool($0) }
    }

    package func integer(_ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject) throws -> Int64? {
        try tag(tags, key, owner) { try archive.integer($0) }
    }

    /// A string-valued dictionary tag (user info), keeping string values only.
    func strings(
        _ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject
    ) throws -> [String: String] {
        try tag(tags, key, owner) { value in
            var result: [String: String] = [:]
            for entry in try archive.stringKeyedEntries(value) ?? [] {
                if let text = try? archive.string(entry.value) { result[entry.key] = text }
            }
            return result
        }
    }

    /// An array-of-string-arrays tag (uniqueness constraints, compound indexes).
    func stringLists(
        _ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject
    ) throws -> [[String]] {
        try tag(tags, key, owner) { value in
            try (archive.elements(value) ?? []).map { list in
                try (archive.elements(list) ?? []).compactMap { try archive.string($0) }
            }
        }
    }

    /// The `_name` of the element a tag refers to (a relationship's destination or inverse), and that element.
    func referencedName(
        _ tags: [String: PropertyListValue], _ key: String, _ owner: ArchivedObject
    ) throws -> (String, ArchivedObject)? {
        guard let target = try tag(tags, key, owner, { try archive.object(for: $0) }) else { return nil }
        return (try name(of: target), target)
    }

    func relocated(_ error: DecantError, _ owner: ArchivedObject, _ key: String) -> DecantError {
        guard error.location?.object == nil else { return error }
        var copy = error
        var location = copy.location ?? Location(path: archive.path)
        location.object = owner.index >= 0 ? "$objects[\(owner.index)]" : nil
        location.keyPath = key
        copy.location = location
        return copy
    }

    func entity(_ object: ArchivedObject) throws -> Entity {
        let tags = try taggedValues(of: object)
        let isAbstract = try bool(tags, "XD_PSK_isAbstract", object) ?? archive.bool(forKey: "_isAbstract", in: object)
        var entity = Entity(name: try name(of: object), isAbstract: isAbstract ?? false)
        if let generalization = try archive.elements(forKey: "XDBucketForGeneralizationsstorage", in: object)?.first,
            let link = try archive.object(for: generalization),
            let general = try archive.object(forKey: "_general", in: link)
        {
            entity.parentName = try name(of: general)
        }
        entity.className = try string(tags, "XD_PSK_entityClassName", object)
        entity.renamingIdentifier = try string(tags, "XD_PSK_elementID", object)
        entity.versionHashModifier = try string(tags, "XD_PSK_versionHashModifier", object)
        entity.userInfo = try strings(tags, "XD_PSK_userInfo", object).mapValues(UserInfoValue.string)
        entity.uniquenessConstraints = try stringLists(tags, "XDPMUniquenessConstraints", object)
        entity.compoundIndexes = try stringLists(tags, "XDPMCompoundIndexes", object)
        for entry in try archive.stringKeyedEntries(forKey: "XDBucketForOwnedAttributesstorage", in: object) ?? [] {
            guard let property = try archive.object(for: entry.value) else { continue }
            if property.isKind(of: "XDPMAttribute") {
                entity.attributes.append(try attribute(property))
            } else if property.isKind(of: "XDPMRelationship") {
                entity.relationships.append(try relationship(property))
            }
        }
        return entity
    }

    func common(_ object: ArchivedObject, _ tags: [String: PropertyListValue]) throws -> PropertyCommon {
        var common = PropertyCommon(name: try name(of: object))
        common.isOptional = try bool(tags, "XD_PPSK_isOptional", object) ?? false
        common.isTransient = try bool(tags, "XD_PPSK_isTransient", object) ?? false
        common.renamingIdentifier = try string(tags, "XD_PPSK_elementID", object)
        common.versionHashModifier = try string(tags, "XD_PPSK_versionHashModifier", object)
        common.userInfo = try strings(tags, "XD_PPSK_userInfo", object).mapValues(UserInfoValue.string)
        common.isIndexed = try bool(tags, "XD_PPSK_isIndexed", object) ?? false
        common.isIndexedBySpotlight = try bool(tags, "XD_PPSK_isSpotlightIndexed", object) ?? false
        common.isStoredInExternalRecord = try bool(tags, "XD_PPSK_isStoredInTruthFile", object) ?? false
        return common
    }

    func attribute(_ object: ArchivedObject) throws -> Attribute {
        let tags = try taggedValues(of: object)
        let code = try integer(tags, "XD_PAttK_attributeType", object) ?? 0
        guard let type = AttributeType(rawValue: UInt(clamping: max(0, code))) else {
            throw fail(
                "attribute type code \(code) is not a Core Data attribute type", object, key: "XD_PAttK_attributeType")
        }
        var attribute = Attribute(name: "", type: type)
        attribute.common = try common(object, tags)
        attribute.defaultValue = try string(tags, "XD_PAttK_defaultValueAsString", object)
        if let problem = attribute.defaultProblem {
            throw fail("attribute \(attribute.name): \(problem)", object, key: "XD_PAttK_defaultValueAsString")
        }
        attribute.minValue = try string(tags, "XD_PAttK_minValueString", object)
        attribute.maxValue = try string(tags, "XD_PAttK_maxValueString", object)
        attribute.valueTransformerName = try string(tags, "XD_PAttK_valueTransformerName", object)
        attribute.regularExpression = try string(tags, "XD_PAttK_regularExpressionString", object)
        attribute.allowsExternalBinaryDataStorage =
            try bool(tags, "XD_PAttK_allowsExternalBinaryDataStorage", object) ?? false
        return attribute
    }

    func relationship(_ object: ArchivedObject) throws -> Relationship {
        let tags = try taggedValues(of: object)
        let isToMany = try bool(tags, "XD_PRK_isToMany", object) ?? false
        var relationship = Relationship(name: "", destination: nil, toMany: isToMany)
        relationship.common = try common(object, tags)
        relationship.destinationEntity = try referencedName(tags, "XD_PRK_destination", object)?.0
        if let (inverse, inverseObject) = try referencedName(tags, "XD_PRK_inverseRelationship", object) {
            relationship.inverseName = inverse
            if let owner = try archive.object(forKey: "_owner", in: inverseObject) {
                relationship.inverseEntity = try name(of: owner)
            } else {
                relationship.inverseEntity = relationship.destinationEntity
            }
        }
        relationship.minCount = Int(clamping: try integer(tags, "XD_PRK_minCount", object) ?? 0)
        relationship.maxCount = Int(clamping: try integer(tags, "XD_PRK_maxCount", object) ?? (isToMany ? 0 : 1))
        relationship.isOrdered = try bool(tags, "XD_PRK_ordered", object) ?? false
        let rule = try integer(tags, "XD_PRK_deleteRule", object) ?? 1
        guard let deleteRule = DeleteRule(rawValue: UInt(clamping: max(0, rule))) else {
            throw fail("delete rule \(rule) is not a Core Data delete rule", object, key: "XD_PRK_deleteRule")
        }
        relationship.deleteRule = deleteRule
        return relationship
    }
}
