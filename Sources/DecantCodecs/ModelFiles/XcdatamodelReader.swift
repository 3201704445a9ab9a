public import DecantCore
public import Foundation

/// Reads the `contents` file of an Xcode model version (`Foo.xcdatamodel/contents`) into an ``ObjectModel``.
///
/// ```swift
/// let model = try XcdatamodelReader.read(contentsOf: url.appendingPathComponent("contents"), versionName: "Foo 2")
/// ```
///
/// Every element and XML attribute Xcode writes is kept (`coredata-formats.md` section 1); unknown XML attributes
/// and elements are ignored. Bad input throws ``DecantError`` `.malformedInput` with the file and line.
public enum XcdatamodelReader: Sendable {
    /// Reads a `contents` file from disk.
    public static func read(contentsOf url: URL, versionName: String? = nil) throws -> ObjectModel {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw DecantError(
                exists ? .ioError : .fileNotFound, exists ? "the model file cannot be read" : "no model file here",
                at: Location(path: url.displayPath), underlyingError: error)
        }
        return try parse(data, path: url.displayPath, versionName: versionName)
    }

    /// Parses the bytes of a `contents` file; `path` is only used in error locations.
    public static func parse(_ data: Data, path: String, versionName: String? = nil) throws -> ObjectModel {
        let root = try XcdatamodelNode.parseDocument(data, path: path)
        let reader = Reader(path: path)
        return try reader.model(from: root, versionName: versionName)
    }
}

/// The conversion from the element tree to model values, carrying the path for error locations.
private struct Reader {
    let path: String

    func failure(_ message: String, _ node: XcdatamodelNode, entity: String? = nil, keyPath: String? = nil)
        -> DecantError
    {
        DecantError(.malformedInput, message, at: Location(path: path, line: node.line, entity: entity, keyPath: keyPath))
    }

    func required(_ key: String, of node: XcdatamodelNode, entity: String? = nil) throws -> String {
        guard let value = node.attributes[key], !value.isEmpty else {
            throw failure("<\(node.name)> has no \(key)", node, entity: entity)
        }
        return value
    }

    func number(_ key: String, of node: XcdatamodelNode, entity: String?) throws -> Double? {
        guard let text = node.attributes[key] else { return nil }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw failure("\(key)=\"\(text)\" is not a number", node, entity: entity, keyPath: node.attributes["name"])
        }
        return value
    }

    package func integer(_ key: String, of node: XcdatamodelNode, entity: String?) throws -> Int? {
        guard let text = node.attributes[key] else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw failure("\(key)=\"\(text)\" is not a whole number", node, entity: entity, keyPath: node.attributes["name"])
        }
        return value
    }

    func model(from root: XcdatamodelNode, versionName: String?) throws -> ObjectModel {
        guard root.name == "model" else {
            throw failure("the root element is <\(root.name)>, not <model>", root)
        }
        var model = ObjectModel(versionName: versionName, entities: [])
        for (key, value) in root.attributes {
            if key == "userDefinedModelVersionIdentifier" {
                // Kept even when empty: Apple-written stores carry `[""]` for such models.
                model.versionIdentifiers = [value]
            } else {
                model.sourceInfo[key] = value
            }
        }
        var seen: [String: Int] = [:]
        for child in root.children {
            switch child.name {
            case "entity":
                let entity = try self.entity(from: child)
                if let first = seen[entity.name] {
                    throw failure("entity \(entity.name) is declared twice (first on line \(first))", child, entity: entity.name)
                }
                seen[entity.name] = child.line
                model.entities.append(entity)
            case "fetchRequest":
                model.fetchRequests.append(try fetchRequest(from: child))
            case "configuration":
                model.configurations.append(try configuration(from: child))
            case "composite", "compositeAttribute":
                let name = try required("name", of: child)
                let attributes = try child.children(named: "attribute").map { try attribute(from: $0, entity: name) }
                model.composites.append(CompositeType(name: name, attributes: attributes))
            case "userInfo":
                model.userInfo.merge(try userInfo(from: child, entity: nil)) { _, new in new }
            default:
                break  // <elements> (diagram layout) and anything newer.
            }
        }
        try validateReferences(of: model, root: root)
        return model
    }

    /// Checks the names that must point at declared entities (parents, destinations, configuration members).
    func validateReferences(of model: ObjectModel, root: XcdatamodelNode) throws {
        let names = Set(model.entities.map(\.name))
        let entityNodes = root.children(named: "entity")
        for (entity, node) in zip(model.entities, entityNodes) {
            if let parent = entity.parentName, !names.contains(parent) {
                throw failure("parent entity \(parent) is not declared", node, entity: entity.name)
            }
            for relationship in entity.relationships {
                if let destination = relationship.destinationEntity, !names.contains(destination) {
                    let line = node.children.first { $0.name == "relationship" && $0.attributes["name"] == relationship.name }
                    throw failure(
                        "relationship \(relationship.name) points at undeclared entity \(destination)", line ?? node,
                        entity: entity.name, keyPath: relationship.name)
                }
            }
        }
        // Each chain is walked once: entities already known to reach a root end the walk, so a long chain of
        // sub-entities costs linear time, not quadratic.
        let parents = Dictionary(
            model.entities.map { ($0.name, $0.parentName) }, uniquingKeysWith: { first, _ in first })
        var reachesRoot: Set<String> = []
        for (entity, node) in zip(model.entities, entityNodes) {
            var visiting: [String] = [entity.name]
            var onPath: Set<String> = [entity.name]
            var current = entity.name
            while !reachesRoot.contains(current), let parent = parents[current] ?? nil {
                guard onPath.insert(parent).inserted else {
                    throw failure("entity inheritance forms a cycle through \(parent)", node, entity: entity.name)
                }
                visiting.append(parent)
                current = parent
            }
            reachesRoot.formUnion(visiting)
        }
    }

    func entity(from node: XcdatamodelNode) throws -> Entity {
        let name = try required("name", of: node)
        var entity = Entity(name: name, parentName: node.attributes["parentEntity"], isAbstract: node.flag("isAbstract"))
        entity.className = node.attributes["representedClassName"]
        entity.renamingIdentifier = node.attributes["elementID"]
        entity.versionHashModifier = node.attributes["versionHashModifier"]
        entity.codeGenerationType = node.attributes["codeGenerationType"]
        entity.isSyncable = node.flag("syncable")
        var propertyLines: [String: Int] = [:]
        func claim(_ property: String, _ child: XcdatamodelNode) throws {
            if let first = propertyLines[property] {
                throw failure(
                    "property \(property) is declared twice (first on line \(first))", child, entity: name, keyPath: property)
            }
            propertyLines[property] = child.line
        }
        for child in node.children {
            switch child.name {
            case "attribute":
                let attribute = try attribute(from: child, entity: name)
                try claim(attribute.name, child)
                entity.attributes.append(attribute)
            case "relationship":
                let relationship = try relationship(from: child, entity: name)
                try claim(relationship.name, child)
                entity.relationships.append(relationship)
            case "fetchedProperty":
                let fetched = try fetchedProperty(from: child, entity: name)
                try claim(fetched.name, child)
                entity.fetchedProperties.append(fetched)
            case "fetchIndex":
                entity.fetchIndexes.append(try fetchIndex(from: child, entity: name))
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.uniquenessConstraints.append(
                        try constraint.children(named: "constraint").map { try required("value", of: $0, entity: name) })
                }
            case "compoundIndexes":
                for index in child.children(named: "compoundIndex") {
                    entity.compoundIndexes.append(
                        try index.children(named: "index").map { try required("value", of: $0, entity: name) })
                }
            case "userInfo":
                entity.userInfo.merge(try userInfo(from: child, entity: name)) { _, new in new }
            default:
                break
            }
        }
        return entity
    }

    /// The parts every property shares (`name`, `optional`, `transient`, identifiers, flags, user info).
    func common(from node: XcdatamodelNode, entity: String) throws -> PropertyCommon {
        var common = PropertyCommon(name: try required("name", of: node, entity: entity))
        common.isOptional = node.flag("optional")
        common.isTransient = node.flag("transient")
        common.renamingIdentifier = node.attributes["elementID"]
        common.versionHashModifier = node.attributes["versionHashModifier"]
        common.isIndexed = node.flag("indexed")
        common.isIndexedBySpotlight = node.flag("spotlightIndexingEnabled")
        common.isStoredInExternalRecord = node.flag("storedInTruthFile")
        common.isSyncable = node.flag("syncable")
        for child in node.children(named: "userInfo") {
            common.userInfo.merge(try userInfo(from: child, entity: entity)) { _, new in new }
        }
        return common
    }

    func attribute(from node: XcdatamodelNode, entity: String) throws -> Attribute {
        let common = try common(from: node, entity: entity)
        let type: AttributeType
        if let typeName = node.attributes["attributeType"] {
            guard let known = AttributeType(modelName: typeName) else {
                throw failure("unknown attributeType \"\(typeName)\"", node, entity: entity, keyPath: common.name)
            }
            type = known
        } else if common.isTransient {
            type = .undefined
        } else {
            throw failure("attribute \(common.name) has no attributeType", node, entity: entity, keyPath: common.name)
        }
        var attribute = Attribute(name: common.name, type: type)
        attribute.common = common
        // A date's default is the `defaultDateTimeInterval` number when Xcode wrote one (checked to be numeric).
        if type == .date, try number("defaultDateTimeInterval", of: node, entity: entity) != nil {
            attribute.defaultValue = node.attributes["defaultDateTimeInterval"]
        } else {
            attribute.defaultValue = node.attributes["defaultValueString"]
        }
        // A default that is no value of the type is refused here, with its place, rather than dropped by one
        // consumer and read differently by another.
        if let problem = attribute.defaultProblem {
            throw failure("attribute \(common.name): \(problem)", node, entity: entity, keyPath: common.name)
        }
        attribute.minValue = node.attributes["minValueString"]
        attribute.maxValue = node.attributes["maxValueString"]
        attribute.minDate = try number("minDateTimeInterval", of: node, entity: entity)
        attribute.maxDate = try number("maxDateTimeInterval", of: node, entity: entity)
        attribute.regularExpression = node.attributes["regularExpressionString"]
        attribute.valueTransformerName = node.attributes["valueTransformerName"]
        attribute.valueClassName = node.attributes["customClassName"]
        attribute.allowsExternalBinaryDataStorage = node.flag("allowsExternalBinaryDataStorage")
        attribute.preservesValueInHistoryOnDeletion = node.flag("preserveAfterDeletion")
        attribute.allowsCloudEncryption = node.flag("allowsCloudEncryption")
        attribute.usesScalarValueType = node.attributes["usesScalarValueType"].map { $0 == "YES" }
        attribute.compositeName = node.attributes["composite"]
        if type == .composite && attribute.compositeName == nil {
            throw failure("composite attribute \(common.name) names no composite", node, entity: entity, keyPath: common.name)
        }
        if node.flag("derived") {
            guard let source = node.attributes["derivationExpression"], !source.isEmpty else {
                throw failure("derived attribute \(common.name) has no derivationExpression", node, entity: entity,
                    keyPath: common.name)
            }
            do {
                attribute.derivation = Derivation(
                    expression: try DerivationExpression.normalize(source), sourceExpression: source)
            } catch let error as DecantError {
                throw failure("derived attribute \(common.name): \(error.message)", node, entity: entity, keyPath: common.name)
            }
            attribute.isReadOnly = true
        }
        return attribute
    }

    func relationship(from node: XcdatamodelNode, entity: String) throws -> Relationship {
        let common = try common(from: node, entity: entity)
        let toMany = node.flag("toMany")
        var relationship = Relationship(
            name: common.name, destination: node.attributes["destinationEntity"], inverse: node.attributes["inverseName"],
            toMany: toMany)
        relationship.common = common
        relationship.inverseEntity = node.attributes["inverseEntity"]
        relationship.minCount = try integer("minCount", of: node, entity: entity) ?? 0
        relationship.maxCount = try integer("maxCount", of: node, entity: entity) ?? (toMany ? 0 : 1)
        relationship.isOrdered = node.flag("ordered")
        if let ruleName = node.attributes["deletionRule"] {
            guard let rule = DeleteRule(modelName: ruleName) else {
                throw failure("unknown deletionRule \"\(ruleName)\"", node, entity: entity, keyPath: common.name)
            }
            relationship.deleteRule = rule
        }
        return relationship
    }

    func fetchedProperty(from node: XcdatamodelNode, entity: String) throws -> FetchedProperty {
        let common = try common(from: node, entity: entity)
        let request = node.children(named: "fetchRequest").first
        var fetched = FetchedProperty(
            name: common.name, entity: request?.attributes["entity"], predicate: request?.attributes["predicateString"])
        let transient = fetched.isTransient
        fetched.common = common
        fetched.isTransient = transient || common.isTransient
        return fetched
    }

    func fetchIndex(from node: XcdatamodelNode, entity: String) throws -> FetchIndex {
        let name = try required("name", of: node, entity: entity)
        var elements: [FetchIndex.Element] = []
        for element in node.children(named: "fetchIndexElement") {
            let property = element.attributes["property"]
            let expression = element.attributes["expression"]
            if property == nil && expression == nil {
                throw failure("fetch index \(name) has an element with neither property nor expression", element,
                    entity: entity)
            }
            let order = element.attributes["order"] ?? "ascending"
            guard order == "ascending" || order == "descending" else {
                throw failure("fetch index \(name): unknown order \"\(order)\"", element, entity: entity)
            }
            elements.append(
                FetchIndex.Element(
                    property: property, expression: expression, type: element.attributes["type"] ?? "Binary",
                    isAscending: order == "ascending"))
        }
        let predicate = node.attributes["partialIndexPredicate"] ?? node.attributes["predicateString"]
        return FetchIndex(name: name, elements: elements, partialIndexPredicate: predicate)
    }

    func fetchRequest(from node: XcdatamodelNode) throws -> FetchRequestTemplate {
        let name = try required("name", of: node)
        var settings = node.attributes
        let entity = settings.removeValue(forKey: "entity")
        let predicate = settings.removeValue(forKey: "predicateString")
        settings.removeValue(forKey: "name")
        return FetchRequestTemplate(name: name, entity: entity, predicate: predicate, settings: settings)
    }

    func configuration(from node: XcdatamodelNode) throws -> ModelConfiguration {
        let name = try required("name", of: node)
        let members = try node.children(named: "memberEntity").map { try required("name", of: $0) }
        return ModelConfiguration(name: name, entityNames: members, usedWithCloudKit: node.flag("usedWithCloudKit"))
    }

    func userInfo(from node: XcdatamodelNode, entity: String?) throws -> [String: UserInfoValue] {
        var result: [String: UserInfoValue] = [:]
        for entry in node.children(named: "entry") {
            guard let key = entry.attributes["key"] else {
                throw failure("a userInfo <entry> has no key", entry, entity: entity)
            }
            result[key] = .string(entry.attributes["value"] ?? "")
        }
        return result
    }
}
