public import DecantCore
public import Foundation

/// Reads a keyed archive of an `NSManagedObjectModel` — a compiled `.mom`, or the model a store keeps in
/// `Z_MODELCACHE` — into an ``ObjectModel`` (coredata-formats.md 2.2, 2.5, 4.5).
///
/// The archive graph is cyclic (model ↔ entity ↔ property, relationship ↔ inverse); the decoder walks it by
/// index. In a store cache every sub-entity also lists its inherited properties (copies or
/// `_NSPropertyDescriptionProxy` objects); those are folded back so each entity keeps only its own properties,
/// exactly as a model source declares them.
/// ```swift
/// let model = try ArchivedModelDecoder.decode(Data(contentsOf: momURL), path: momURL.path)
/// ```
public enum ArchivedModelDecoder: Sendable {
    /// Decodes archive bytes (binary or XML property list).
    public static func decode(_ data: Data, path: String? = nil) throws -> ObjectModel {
        try decode(KeyedArchive(data: data, path: path))
    }

    /// Decodes an already parsed archive.
    public static func decode(_ archive: KeyedArchive) throws -> ObjectModel {
        var state = State(archive: archive)
        return try state.model()
    }

    /// The most userInfo values one model may hold: an archive can share one array between many places, so a few
    /// objects nested a few levels deep could otherwise stand for billions of values.
    static let maximumUserInfoValues = 100_000

    /// How many more userInfo values this decoding may read.
    private final class UserInfoBudget {
        var remaining = ArchivedModelDecoder.maximumUserInfoValues
    }

    private struct State {
        let archive: KeyedArchive
        let format: ArchivedExpressionFormat
        private let userInfoBudget = UserInfoBudget()

        init(archive: KeyedArchive) {
            self.archive = archive
            self.format = ArchivedExpressionFormat(archive: archive)
        }

        /// Runs `body`, naming `entity` (and `property`, before the key path) in the location of what it throws, so
        /// that a failure deep in a cache says where in the model it is.
        func within<T>(entity: String, property: String? = nil, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch var failure as DecantError {
                var location = failure.location ?? Location(path: archive.path)
                if location.entity == nil { location.entity = entity }
                if let property {
                    location.keyPath = location.keyPath.map { $0 == property || $0.hasPrefix(property + ".") ? $0 : "\(property).\($0)" } ?? property
                }
                failure.location = location
                throw failure
            }
        }

        func fail(_ message: String, _ object: ArchivedObject? = nil, key: String? = nil) -> DecantError {
            DecantError(
                .malformedInput, message,
                at: Location(path: archive.path, object: object.map { "$objects[\($0.index)]" }, keyPath: key))
        }

        mutating func model() throws -> ObjectModel {
            guard let root = try archive.rootObject() else { throw fail("the archive has no root object") }
            guard root.isKind(of: "NSManagedObjectModel") else {
                throw fail("expected an NSManagedObjectModel at the root, found \(root.className ?? "a plain value")", root)
            }
            var decoded: [(entity: Entity, composites: [CompositeType])] = []
            for entry in try archive.stringKeyedEntries(forKey: "NSEntities", in: root) ?? [] {
                guard let object = try archive.object(for: entry.value) else { continue }
                guard object.isKind(of: "NSEntityDescription") else {
                    throw fail("entity \(entry.key) is a \(object.className ?? "plain value")", object)
                }
                decoded.append(try within(entity: entry.key) { try entity(object) })
            }
            var entities = decoded.map(\.entity)
            // A cache lists inherited properties in sub-entities too: keep only what no ancestor declares.
            let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for index in entities.indices {
                var inherited: Set<String> = []
                var parent = entities[index].parentName
                var seen: Set<String> = [entities[index].name]
                while let name = parent, seen.insert(name).inserted, let ancestor = byName[name] {
                    inherited.formUnion(ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name))
                    inherited.formUnion(ancestor.fetchedProperties.map(\.name))
                    parent = ancestor.parentName
                }
                guard !inherited.isEmpty else { continue }
                entities[index].attributes.removeAll { inherited.contains($0.name) }
                entities[index].relationships.removeAll { inherited.contains($0.name) }
                entities[index].fetchedProperties.removeAll { inherited.contains($0.name) }
            }
            var model = ObjectModel(entities: entities.sorted { $0.name < $1.name })
            // Each archived composite attribute carries its elements inline; its type is named after the entity
            // and attribute that declare it (inherited copies folded away above leave theirs unused).
            let used = Set(entities.flatMap { $0.attributes.compactMap(\.compositeName) })
            model.composites = decoded.flatMap(\.composites).filter { type in
                used.contains { type.name == $0 || type.name.hasPrefix($0 + ".") }
            }
            model.versionIdentifiers = try (archive.elements(forKey: "NSVersionIdentifiers", in: root) ?? [])
                .compactMap { try archive.string($0) }.sorted()
            model.configurations = try configurations(root)
            model.fetchRequests = try archive.inField("NSFetchRequestTemplates", of: root) { try fetchRequests(root) }
            for key in ["CDMCompilerToolVersion", "CDMCompilerXcodeVersion"] {
                if let value = root[key], let text = try? archive.string(value) ?? archive.integer(value).map(String.init) {
                    model.sourceInfo[key] = text
                }
            }
            return model
        }

        func configurations(_ root: ArchivedObject) throws -> [ModelConfiguration] {
            try (archive.stringKeyedEntries(forKey: "NSConfigurations", in: root) ?? []).map { entry in
                let members = try (archive.elements(entry.value) ?? []).compactMap { member -> String? in
                    if let object = try archive.object(for: member), object.isKind(of: "NSEntityDescription") {
                        return try archive.string(forKey: "NSEntityName", in: object)
                    }
                    return try archive.string(member)
                }
                return ModelConfiguration(name: entry.key, entityNames: members.sorted())
            }.sorted { $0.name < $1.name }
        }

        func fetchRequests(_ root: ArchivedObject) throws -> [FetchRequestTemplate] {
            try (archive.stringKeyedEntries(forKey: "NSFetchRequestTemplates", in: root) ?? []).map { entry in
                let request = try archive.object(for: entry.value)
                var entityName: String?
                var predicate: String?
                if let request {
                    entityName = try archive.string(forKey: "NSEntityName", in: request)
                    if entityName == nil, let entity = try archive.object(forKey: "NSEntity", in: request) {
                        entityName = try archive.string(forKey: "NSEntityName", in: entity)
                    }
                    predicate = try format.predicate(request["NSPredicate"])
                }
                return FetchRequestTemplate(name: entry.key, entity: entityName, predicate: predicate)
            }.sorted { $0.name < $1.name }
        }

        func userInfo(_ object: ArchivedObject) throws -> [String: UserInfoValue] {
            try archive.inField("NSUserInfo", of: object) {
                try userInfoDictionary(object["NSUserInfo"], depth: 0) ?? [:]
            }
        }

        /// Any property-list value a userInfo holds, as it is: inline numbers, Booleans, strings and data; `NSString`,
        /// `NSDate`, `NSData`, arrays, sets and dictionaries (nested at most 64 levels).
        func userInfoValue(_ value: PropertyListValue?, depth: Int) throws -> UserInfoValue? {
            guard let resolved = try archive.resolve(value) else { return nil }
            userInfoBudget.remaining -= 1
            guard userInfoBudget.remaining >= 0 else {
                throw archive.error(
                    "the userInfo dictionaries hold more than \(ArchivedModelDecoder.maximumUserInfoValues) values",
                    object: nil, key: nil)
            }
            switch resolved {
            case .inline(.string(let text)): return .string(text)
            case .inline(.integer(let integer)): return .integer(integer)
            case .inline(.real(let real)): return .real(real)
            case .inline(.bool(let flag)): return .bool(flag)
            case .inline(.date(let time)): return .date(Date(timeIntervalSinceReferenceDate: time))
            case .inline(.data(let data)): return .data(data)
            case .inline: throw archive.mismatch("a property-list value", resolved)
            case .object(let object):
                guard depth < 64 else {
                    throw archive.error("a userInfo value nested more than 64 levels deep", object: object.index, key: nil)
                }
                if object.fields.contains("NS.string") { return try archive.string(resolved).map(UserInfoValue.string) }
                if object.fields.contains("NS.time") {
                    return try archive.date(resolved).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
                }
                if object.fields.contains("NS.data") { return try archive.data(resolved).map(UserInfoValue.data) }
                if object.fields.contains("NS.keys") {
                    return try userInfoDictionary(value, depth: depth + 1).map(UserInfoValue.dictionary)
                }
                if object.fields.contains("NS.objects") {
                    let elements = try archive.elements(resolved) ?? []
                    return .array(try elements.compactMap { try userInfoValue($0, depth: depth + 1) })
                }
                throw archive.mismatch("a property-list value", resolved)
            }
        }

        func userInfoDictionary(_ value: PropertyListValue?, depth: Int) throws -> [String: UserInfoValue]? {
            guard let entries = try archive.stringKeyedEntries(value) else { return nil }
            var info: [String: UserInfoValue] = [:]
            for entry in entries {
                info[entry.key] = try userInfoValue(entry.value, depth: depth)
            }
            return info
        }

        func name(ofEntity value: PropertyListValue?) throws -> String? {
            guard let object = try archive.object(for: value) else { return nil }
            return try archive.string(forKey: "NSEntityName", in: object)
        }

        func entity(_ object: ArchivedObject) throws -> (entity: Entity, composites: [CompositeType]) {
            guard let entityName = try archive.string(forKey: "NSEntityName", in: object) else {
                throw fail("entity without NSEntityName", object, key: "NSEntityName")
            }
            var entity = Entity(name: entityName)
            entity.className = try archive.string(forKey: "NSClassNameForEntity", in: object)
            entity.parentName = try name(ofEntity: object["NSSuperentity"])
            entity.isAbstract = try archive.bool(forKey: "NSIsAbstract", in: object) ?? false
            let renaming = try archive.string(forKey: "NSRenamingIdentifier", in: object)
            entity.renamingIdentifier = renaming == entityName ? nil : renaming
            entity.versionHashModifier = try archive.string(forKey: "NSVersionHashModifier", in: object)
            entity.userInfo = try userInfo(object)
            entity.uniquenessConstraints = try tuples(forKey: "NSUniqueTuples", in: object)
            entity.compoundIndexes = try tuples(forKey: "NSCompoundIndexes", in: object)
            entity.fetchIndexes = try (archive.elements(forKey: "NSFetchIndexDescriptions", in: object) ?? []).compactMap {
                try fetchIndex($0)
            }
            var composites: [CompositeType] = []
            for entry in try archive.stringKeyedEntries(forKey: "NSProperties", in: object) ?? [] {
                guard let property = try archive.object(for: entry.value) else { continue }
                if property.isKind(of: "_NSPropertyDescriptionProxy") { continue }
                try within(entity: entityName, property: entry.key) {
                    if property.isKind(of: "NSAttributeDescription") {
                        var attribute = try attribute(property)
                        if attribute.type == .composite || property.isKind(of: "NSCompositeAttributeDescription") {
                            let types = try compositeTypes(of: property, named: "\(entityName).\(attribute.name)", attribute.name)
                            attribute.compositeName = types.first?.name
                            composites += types
                        }
                        entity.attributes.append(attribute)
                    } else if property.isKind(of: "NSRelationshipDescription") {
                        entity.relationships.append(try relationship(property))
                    } else if property.isKind(of: "NSFetchedPropertyDescription") {
                        entity.fetchedProperties.append(try fetchedProperty(property))
                    } else {
                        throw fail("property \(entry.key) has unknown class \(property.className ?? "?")", property)
                    }
                }
            }
            entity.attributes.sort { $0.name < $1.name }
            entity.relationships.sort { $0.name < $1.name }
            entity.fetchedProperties.sort { $0.name < $1.name }
            return (entity, composites)
        }

        /// The composite type of an `NSCompositeAttributeDescription` (its `NSCompositeElements`: an array of
        /// complete `NSAttributeDescription`s, 12.1, in archive order) named `typeName`, followed by the types of
        /// elements that are composites themselves (Xcode lets a composite hold one; named `typeName.element`,
        /// at most 8 levels deep). An empty composite is kept, as Xcode writes one.
        func compositeTypes(of object: ArchivedObject, named typeName: String, _ name: String, depth: Int = 0) throws
            -> [CompositeType]
        {
            guard object.isKind(of: "NSCompositeAttributeDescription"),
                try archive.integer(forKey: "NSAttributeType", in: object) == Int64(AttributeType.composite.rawValue)
            else {
                throw fail(
                    "attribute \(name) is a composite only by half: class \(object.className ?? "?") with NSAttributeType "
                        + "\(try archive.integer(forKey: "NSAttributeType", in: object).map(String.init) ?? "none"); a "
                        + "composite is an NSCompositeAttributeDescription of type 2100", object, key: name)
            }
            guard depth < 8 else {
                throw fail("composite attribute \(name) nests composites more than 8 levels deep", object, key: name)
            }
            guard let values = try archive.elements(forKey: "NSCompositeElements", in: object) else {
                throw fail("composite attribute \(name) has no NSCompositeElements", object, key: name)
            }
            var elements: [Attribute] = []
            var nested: [CompositeType] = []
            for value in values {
                guard let element = try archive.object(for: value), element.isKind(of: "NSAttributeDescription") else {
                    let found = try archive.object(for: value)?.className ?? "a plain value"
                    throw fail(
                        "composite attribute \(name): an element of NSCompositeElements is \(found), expected an "
                            + "NSAttributeDescription", object, key: "\(name).NSCompositeElements")
                }
                var decoded = try attribute(element)
                guard !elements.contains(where: { $0.name == decoded.name }) else {
                    throw fail("composite attribute \(name) has two elements named \(decoded.name)", element, key: name)
                }
                if decoded.type == .composite || element.isKind(of: "NSCompositeAttributeDescription") {
                    let inner = try compositeTypes(
                        of: element, named: "\(typeName).\(decoded.name)", "\(name).\(decoded.name)", depth: depth + 1)
                    decoded.compositeName = inner.first?.name
                    nested += inner
                }
                elements.append(decoded)
            }
            return [CompositeType(name: typeName, attributes: elements)] + nested
        }

        /// Arrays of arrays of property names (each name a string or a property object).
        func tuples(forKey key: String, in object: ArchivedObject) throws -> [[String]] {
            try (archive.elements(forKey: key, in: object) ?? []).map { tuple in
                try (archive.elements(tuple) ?? [tuple]).compactMap { element in
                    if let property = try archive.object(for: element), property.className != nil {
                        return try archive.string(forKey: "NSPropertyName", in: property)
                    }
                    return try archive.string(element)
                }
            }
        }

        func fetchIndex(_ value: PropertyListValue) throws -> FetchIndex? {
            guard let object = try archive.object(for: value) else { return nil }
            let name = try archive.string(forKey: "NSIndexName", in: object) ?? ""
            let elements = try (archive.elements(forKey: "NSIndexElements", in: object) ?? []).compactMap {
                element -> FetchIndex.Element? in
                guard let element = try archive.object(for: element) else { return nil }
                var property = try archive.string(forKey: "NSPropertyName", in: element)
                if property == nil, let described = try archive.object(forKey: "NSProperty", in: element) {
                    property = try archive.string(forKey: "NSPropertyName", in: described)
                }
                let type = try archive.integer(forKey: "NSFetchIndexElementType", in: element) ?? 0
                let expression = try format.expression(element["NSExpression"])
                return FetchIndex.Element(
                    property: property, expression: expression, type: type == 1 ? "RTree" : "Binary",
                    isAscending: try archive.bool(forKey: "NSAscending", in: element) ?? true)
            }
            return FetchIndex(
                name: name, elements: elements,
                partialIndexPredicate: try format.predicate(object["NSPartialIndexPredicate"]))
        }

        func common(_ object: ArchivedObject) throws -> PropertyCommon {
            guard let name = try archive.string(forKey: "NSPropertyName", in: object) else {
                throw fail("property without NSPropertyName", object, key: "NSPropertyName")
            }
            var common = PropertyCommon(name: name)
            let flags = try archive.integer(forKey: "_P", in: object) ?? 0
            if flags != 0 {
                common.isOptional = flags & 0b10 != 0
                common.isReadOnly = flags & 0b100 != 0
                common.isTransient = flags & 0b1000 != 0
            } else {
                common.isOptional = try archive.bool(forKey: "NSIsOptional", in: object) ?? false
                common.isReadOnly = try archive.bool(forKey: "NSIsReadOnly", in: object) ?? false
                common.isTransient = try archive.bool(forKey: "NSIsTransient", in: object) ?? false
            }
            common.isIndexed = try archive.bool(forKey: "NSIsIndexed", in: object) ?? false
            let renaming = try archive.string(forKey: "NSRenamingIdentifier", in: object)
            common.renamingIdentifier = renaming == name ? nil : renaming
            common.versionHashModifier = try archive.string(forKey: "NSVersionHashModifier", in: object)
            common.userInfo = try userInfo(object)
            common.validationPredicates = try (archive.elements(forKey: "NSValidationPredicates", in: object) ?? [])
                .map { try format.predicate($0) ?? "" }
            // Strings in older models, Cocoa error codes (numbers) in newer ones (section 1.9): kept as they are.
            common.validationWarnings = try archive.inField("NSValidationWarnings", of: object) {
                try (archive.elements(forKey: "NSValidationWarnings", in: object) ?? []).compactMap {
                    try userInfoValue($0, depth: 0)
                }
            }
            return common
        }

        func attribute(_ object: ArchivedObject) throws -> Attribute {
            let common = try common(object)
            let raw = try archive.integer(forKey: "NSAttributeType", in: object) ?? 0
            guard let type = AttributeType(rawValue: UInt(clamping: raw)) else {
                throw fail("attribute \(common.name) has unknown NSAttributeType \(raw)", object, key: "NSAttributeType")
            }
            var attribute = Attribute(name: common.name, type: type)
            attribute.common = common
            attribute.valueClassName = try archive.string(forKey: "NSAttributeValueClassName", in: object)
            attribute.valueTransformerName = try archive.string(forKey: "NSValueTransformerName", in: object)
            attribute.defaultValue = try defaultValue(object["NSDefaultValue"], type: type)
            let flags = try archive.integer(forKey: "NSFlagsKey", in: object) ?? 0
            attribute.allowsExternalBinaryDataStorage = flags & 0b100 != 0
            attribute.preservesValueInHistoryOnDeletion = flags & 0b1_0000 != 0
            if object.isKind(of: "NSDerivedAttributeDescription") {
                let expression = try format.expression(object["NSDerivationExpression"]) ?? ""
                attribute.derivation = Derivation(
                    expression: expression, filteringPredicate: try format.predicate(object["NSFilteringPredicate"]))
            }
            return attribute
        }

        /// The default value as model-source text (`defaultValueString`; dates as seconds since 2001).
        func defaultValue(_ value: PropertyListValue?, type: AttributeType) throws -> String? {
            guard let resolved = try archive.resolve(value) else { return nil }
            switch resolved {
            case .inline(.string(let text)): return text
            case .inline(.integer(let number)): return type == .boolean ? (number != 0 ? "YES" : "NO") : String(number)
            case .inline(.real(let number)): return String(number)
            case .inline(.bool(let flag)): return flag ? "YES" : "NO"
            case .inline(.data(let data)): return data.base64EncodedString()
            case .inline: return nil
            case .object(let object):
                let reference = PropertyListValue.uid(UInt64(object.index))
                if object.isKind(of: "NSDate"), let time = try archive.date(reference) { return String(time) }
                if object.isKind(of: "NSUUID"), let uuid = try archive.uuid(reference) { return uuid.uuidString }
                if object.isKind(of: "NSURL"), let url = try archive.url(reference) { return url }
                if let text = try? archive.string(reference) { return text }
                return nil
            }
        }

        func relationship(_ object: ArchivedObject) throws -> Relationship {
            let common = try common(object)
            var destination = try archive.string(forKey: "_NSDestinationEntityName", in: object)
            if destination == nil { destination = try name(ofEntity: object["NSDestinationEntity"]) }
            var relationship = Relationship(name: common.name, destination: destination)
            relationship.common = common
            relationship.inverseName = try archive.string(forKey: "_NSInverseRelationshipName", in: object)
            if let inverse = try archive.object(forKey: "NSInverseRelationship", in: object) {
                relationship.inverseName = try relationship.inverseName ?? archive.string(forKey: "NSPropertyName", in: inverse)
                relationship.inverseEntity = try name(ofEntity: inverse["NSEntity"]) ?? destination
            } else if relationship.inverseName != nil {
                relationship.inverseEntity = destination
            }
            relationship.minCount = Int(try archive.integer(forKey: "NSMinCount", in: object) ?? 0)
            relationship.maxCount = Int(try archive.integer(forKey: "NSMaxCount", in: object) ?? 0)
            relationship.isToMany = relationship.maxCount != 1
            let flags = try archive.integer(forKey: "_P", in: object) ?? 0
            relationship.isOrdered =
                flags != 0 ? flags & 0b100_0000_0000 != 0 : try archive.bool(forKey: "NSIsOrdered", in: object) ?? false
            let rule = try archive.integer(forKey: "NSDeleteRule", in: object) ?? 1
            relationship.deleteRule = DeleteRule(rawValue: UInt(clamping: rule)) ?? .nullify
            return relationship
        }

        func fetchedProperty(_ object: ArchivedObject) throws -> FetchedProperty {
            let common = try common(object)
            let request = try archive.object(forKey: "NSFetchRequest", in: object)
            var entityName = try archive.string(forKey: "_NSFetchRequestEntityName", in: object)
            if entityName == nil, let request { entityName = try archive.string(forKey: "NSEntityName", in: request) }
            var property = FetchedProperty(
                name: common.name, entity: entityName, predicate: try request.flatMap { try format.predicate($0["NSPredicate"]) })
            property.common = common
            property.isTransient = true
            return property
        }
    }
}
