public import DecantCore
public import Foundation

/// Writes an ``ObjectModel`` as a keyed archive of `NSManagedObjectModel` in the shape of a compiled `.mom`
/// (coredata-formats.md 2.2): the form a SQLite writer stores, deflated, in `Z_MODELCACHE`.
///
/// Every entity lists its own properties; relationships point at their destination entity and inverse; the
/// `_P` flag word and the legacy booleans agree, and `NSFlagsKey` carries external storage and
/// preserve-after-deletion, so the version hashes recomputed from the archive equal the model's.
/// ```swift
/// let archive = try ArchivedModelEncoder.encode(model)
/// let cache = try Deflate.deflate(archive)
/// ```
public enum ArchivedModelEncoder: Sendable {
    /// The archive bytes (binary property list).
    public static func encode(_ model: ObjectModel) throws -> Data {
        var writer = KeyedArchiveWriter()
        let modelReference = writer.reserveObject()
        var entityReferences: [String: KeyedArchiveWriter.Reference] = [:]
        for entity in model.entities { entityReferences[entity.name] = writer.reserveObject() }
        var propertyReferences: [String: [String: KeyedArchiveWriter.Reference]] = [:]
        for entity in model.entities {
            var own: [String: KeyedArchiveWriter.Reference] = [:]
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                own[name] = writer.reserveObject()
            }
            propertyReferences[entity.name] = own
        }
        let null = KeyedArchiveWriter.null
        func string(_ text: String?) -> PropertyListValue { text.map { writer.addString($0).uid } ?? null }
        func reference(_ name: String?) -> PropertyListValue { name.flatMap { entityReferences[$0]?.uid } ?? null }
        func userInfo(_ info: [String: UserInfoValue]) -> PropertyListValue {
            let keys = info.keys.sorted()
            return writer.addDictionary(
                keys: keys.map { string($0) }, values: keys.map { info[$0].map(userInfoValue) ?? null },
                className: "NSDictionary"
            ).uid
        }
        /// A userInfo value as NSKeyedArchiver writes it: numbers, Booleans and data as plain `$objects` entries.
        func userInfoValue(_ value: UserInfoValue) -> PropertyListValue {
            switch value {
            case .string(let text): return string(text)
            case .integer(let integer): return writer.addValue(.integer(integer)).uid
            case .real(let real): return writer.addValue(.real(real)).uid
            case .bool(let flag): return writer.addValue(.bool(flag)).uid
            case .data(let data): return writer.addValue(.data(data)).uid
            case .date(let date):
                return writer.addObject(className: "NSDate", fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)])
                    .uid
            case .array(let items): return writer.addArray(items.map(userInfoValue)).uid
            case .dictionary(let entries): return userInfo(entries)
            }
        }
        func common(_ property: PropertyCommon, entity: String?, extraFlags: Int64 = 0) -> PropertyListDictionary {
            var flags: Int64 = 1 | 0b11_0000 | extraFlags
            if property.isOptional { flags |= 0b10 }
            if property.isReadOnly { flags |= 0b100 }
            if property.isTransient { flags |= 0b1000 }
            if property.userInfo.isEmpty { flags |= 0b100_0000 }
            if property.versionHashModifier == nil { flags |= 0b1000_0000 }
            var fields: PropertyListDictionary = [
                "NSPropertyName": string(property.name),
                "NSEntity": reference(entity),
                "NSRenamingIdentifier": string(property.renamingIdentifier ?? property.name),
                "_P": .integer(flags),
            ]
            if property.isOptional { fields["NSIsOptional"] = .bool(true) }
            if property.isTransient { fields["NSIsTransient"] = .bool(true) }
            if property.isReadOnly { fields["NSIsReadOnly"] = .bool(true) }
            if property.isIndexed { fields["NSIsIndexed"] = .bool(true) }
            if !property.userInfo.isEmpty { fields["NSUserInfo"] = userInfo(property.userInfo) }
            if let modifier = property.versionHashModifier { fields["NSVersionHashModifier"] = string(modifier) }
            return fields
        }

        /// An attribute's class chain and fields. A composite is an `NSCompositeAttributeDescription` (type 2100,
        /// value class `NSDictionary`) whose `NSCompositeElements` are complete `NSAttributeDescription`s (12.1).
        func attributeObject(_ attribute: Attribute, entity: String?) throws -> (String, [String], PropertyListDictionary) {
            var fields = common(attribute.common, entity: entity)
            fields["NSAttributeType"] = .integer(Int64(attribute.type.rawValue))
            fields["NSAttributeValueClassName"] = string(attribute.valueClassName ?? valueClassName(attribute.type))
            fields["NSValueTransformerName"] = string(attribute.valueTransformerName)
            fields["NSDefaultValue"] = defaultValue(attribute, writer: &writer)
            var flagsKey: Int64 = 0
            if attribute.allowsExternalBinaryDataStorage { flagsKey |= 0b100 }
            if attribute.preservesValueInHistoryOnDeletion { flagsKey |= 0b1_0000 }
            fields["NSFlagsKey"] = .integer(flagsKey)
            var className = "NSAttributeDescription"
            var classes = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
            if let derivation = attribute.derivation {
                className = "NSDerivedAttributeDescription"
                classes.insert(className, at: 0)
                // The expression is kept as its format text in a key-path expression, which is what the
                // version hash is computed from.
                fields["NSDerivationExpression"] = writer.addObject(
                    className: "NSKeyPathExpression",
                    classes: ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
                    fields: ["NSExpressionType": .integer(3), "NSKeyPath": string(derivation.expression)]
                ).uid
            } else if attribute.type == .composite {
                guard let composite = model.composites.first(where: { $0.name == attribute.compositeName }) else {
                    throw DecantError(
                        .malformedInput,
                        "composite attribute \(attribute.name) names composite type \(attribute.compositeName ?? "(none)"), "
                            + "which the model does not define",
                        at: Location(entity: entity, keyPath: attribute.name))
                }
                className = "NSCompositeAttributeDescription"
                classes.insert(className, at: 0)
                fields["NSAttributeValueClassName"] = string(attribute.valueClassName ?? "NSDictionary")
                var elements: [PropertyListValue] = []
                for element in composite.attributes {
                    let (elementClass, elementClasses, elementFields) = try attributeObject(element, entity: nil)
                    elements.append(writer.addObject(className: elementClass, classes: elementClasses, fields: elementFields).uid)
                }
                fields["NSCompositeElements"] = writer.addArray(elements).uid
            }
            return (className, classes, fields)
        }

        for entity in model.entities {
            guard let entityReference = entityReferences[entity.name], let own = propertyReferences[entity.name]
            else { continue }
            var propertyKeys: [PropertyListValue] = []
            var propertyValues: [PropertyListValue] = []
            for attribute in entity.attributes {
                guard let target = own[attribute.name] else { continue }
                let (className, classes, fields) = try attributeObject(attribute, entity: entity.name)
                writer.setObject(target, className: className, classes: classes, fields: fields)
                propertyKeys.append(string(attribute.name))
                propertyValues.append(target.uid)
            }
            for relationship in entity.relationships {
                guard let target = own[relationship.name] else { continue }
                var fields = common(relationship.common, entity: entity.name, extraFlags: relationship.isOrdered ? 1 << 10 : 0)
                fields["NSDestinationEntity"] = reference(relationship.destinationEntity)
                fields["_NSDestinationEntityName"] = string(relationship.destinationEntity)
                let inverseOwner = relationship.inverseEntity ?? relationship.destinationEntity
                if let inverse = relationship.inverseName, let owner = inverseOwner,
                    let inverseReference = propertyReferences[owner]?[inverse]
                {
                    fields["NSInverseRelationship"] = inverseReference.uid
                    fields["_NSInverseRelationshipName"] = string(inverse)
                }
                fields["NSMinCount"] = .integer(Int64(relationship.minCount))
                fields["NSMaxCount"] = .integer(Int64(relationship.maxCount))
                fields["NSDeleteRule"] = .integer(Int64(relationship.deleteRule.rawValue))
                if relationship.isOrdered { fields["NSIsOrdered"] = .bool(true) }
                writer.setObject(
                    target, className: "NSRelationshipDescription",
                    classes: ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"], fields: fields)
                propertyKeys.append(string(relationship.name))
                propertyValues.append(target.uid)
            }
            let subentities = model.entities.filter { $0.parentName == entity.name }.map(\.name)
            var fields: PropertyListDictionary = [
                "NSEntityName": string(entity.name),
                "NSClassNameForEntity": string(entity.className ?? "NSManagedObject"),
                "NSRenamingIdentifier": string(entity.renamingIdentifier ?? entity.name),
                "NSVersionHashModifier": string(entity.versionHashModifier),
                "NSSuperentity": reference(entity.parentName),
                "NSSubentities": writer.addDictionary(
                    keys: subentities.map { string($0) }, values: subentities.map { reference($0) },
                    className: "NSMutableDictionary"
                ).uid,
                "NSProperties": writer.addDictionary(
                    keys: propertyKeys, values: propertyValues, className: "NSMutableDictionary"
                ).uid,
                "NSManagedObjectModel": modelReference.uid,
                "NSUserInfo": userInfo(entity.userInfo),
            ]
            if entity.isAbstract { fields["NSIsAbstract"] = .bool(true) }
            if !entity.uniquenessConstraints.isEmpty {
                fields["NSUniqueTuples"] = stringTuples(entity.uniquenessConstraints, writer: &writer)
            }
            if !entity.compoundIndexes.isEmpty {
                fields["NSCompoundIndexes"] = stringTuples(entity.compoundIndexes, writer: &writer)
            }
            if !entity.fetchIndexes.isEmpty {
                let indexes = entity.fetchIndexes.map { index -> PropertyListValue in
                    let indexReference = writer.reserveObject()
                    let elements = index.elements.map { element -> PropertyListValue in
                        writer.addObject(
                            className: "NSFetchIndexElementDescription",
                            fields: [
                                "NSPropertyName": string(element.property),
                                "NSFetchIndexElementType": .integer(element.type == "RTree" ? 1 : 0),
                                "NSAscending": .bool(element.isAscending),
                                "NSFetchIndexDescription": indexReference.uid,
                            ]
                        ).uid
                    }
                    writer.setObject(
                        indexReference, className: "NSFetchIndexDescription",
                        fields: [
                            "NSIndexName": string(index.name),
                            "NSIndexElements": writer.addArray(elements).uid,
                            "NSPartialIndexPredicate": null,
                            "NSEntity": entityReference.uid,
                        ])
                    return indexReference.uid
                }
                fields["NSFetchIndexDescriptions"] = writer.addArray(indexes, className: "NSMutableArray").uid
            }
            writer.setObject(entityReference, className: "NSEntityDescription", fields: fields)
        }
        let names = model.entities.map(\.name)
        writer.setObject(
            modelReference, className: "NSManagedObjectModel",
            fields: [
                "NSEntities": writer.addDictionary(
                    keys: names.map { string($0) }, values: names.map { reference($0) },
                    className: "NSMutableDictionary"
                ).uid,
                "NSFetchRequestTemplates": null,
                "NSVersionIdentifiers": writer.addArray(model.versionIdentifiers.map { string($0) }, className: "NSSet")
                    .uid,
            ])
        return try writer.encodedData(root: modelReference)
    }

    private static func stringTuples(_ tuples: [[String]], writer: inout KeyedArchiveWriter) -> PropertyListValue {
        let inner = tuples.map { tuple in
            writer.addArray(tuple.map { writer.addString($0).uid }, className: "NSMutableArray").uid
        }
        return writer.addArray(inner, className: "NSMutableArray").uid
    }

    private static func valueClassName(_ type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .double, .float: "NSNumber"
        case .decimal: "NSDecimalNumber"
        case .string: "NSString"
        case .date: "NSDate"
        case .binary: "NSData"
        case .uuid: "NSUUID"
        case .uri: "NSURL"
        default: nil
        }
    }

    /// The archived `NSDefaultValue`: the value the model's text parses to (``Attribute/defaultLiteral``, the same
    /// value inference and the readers use), as an NSNumber, NSDate or string.
    private static func defaultValue(_ attribute: Attribute, writer: inout KeyedArchiveWriter) -> PropertyListValue {
        guard let value = attribute.defaultLiteral else { return KeyedArchiveWriter.null }
        switch value {
        case .integer(let integer): return writer.addValue(.integer(integer)).uid
        case .bool(let flag): return writer.addValue(.bool(flag)).uid
        case .double(let real): return writer.addValue(.real(real)).uid
        case .decimal(let decimal):
            // As Double(text) did before: the decimal's nearest double, read from its exact text.
            let real = Double(decimal.description) ?? NSDecimalNumber(decimal: decimal).doubleValue
            return writer.addValue(.real(real)).uid
        case .date(let date):
            return writer.addObject(
                className: "NSDate", fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)]
            ).uid
        case .string, .uri, .uuid:
            // The text as the model spells it (a UUID keeps its case).
            return writer.addString(attribute.defaultValue ?? "").uid
        default:
            return KeyedArchiveWriter.null
        }
    }
}
