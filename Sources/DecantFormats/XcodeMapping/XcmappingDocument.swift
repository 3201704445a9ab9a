import DecantCore
import Foundation
import DecantCodecs

/// What a `.xcmappingmodel`'s `xcmapping.xml` stores (coredata-formats.md 3.4.1), read through the schema-less
/// ``XMLStoreReader`` and walked from the single `XDDEVMAPPINGMODEL` object; orphaned mappings are left out.
struct XcmappingDocument {
    /// One stored `XDDEVATTRIBUTEMAPPING` or `XDDEVRELATIONSHIPMAPPING`.
    struct PropertyMapping {
        var id: String
        var name: String
        var valueExpressionData: Data?
        var sourceKeyPath: String?
        var sourceMappingName: String?
    }

    /// One stored `XDDEVENTITYMAPPING`.
    struct EntityMapping {
        var id: String
        var sourceName: String?
        var destinationName: String?
        var mappingTypeName: String?
        var mappingNumber: Int64
        var policyClassName: String?
        var name: String?
        var filterPredicate: String?
        var userInfoData: Data?
        var sourceExpressionData: Data?
        var attributes: [PropertyMapping]
        var relationships: [PropertyMapping]
    }

    var path: String
    var sourceModelPath: String?
    var destinationModelPath: String?
    var sourceModelData: Data?
    var destinationModelData: Data?
    /// In `mappingnumber` order (stored order where numbers tie).
    var entityMappings: [EntityMapping]

    /// One object of the store: its type (upper-cased), attributes and relationship targets by lower-cased name.
    private struct StoredObject {
        var type: String
        var attributes: [String: Value] = [:]
        var relationships: [String: [String]] = [:]
    }

    /// Reads `xcmapping.xml` bytes; `path` labels errors.
    init(data: Data, path: String) throws {
        self.path = path
        let reader = try XMLStoreReader(data: data, path: path, bundle: nil)
        var objects: [String: StoredObject] = [:]
        var order: [String] = []
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else {
            throw DecantError(.malformedInput, "the mapping model holds no objects", at: Location(path: path))
        }
        var batch = RecordBatch(layout: layout)
        while try reader.nextBatch(into: &batch) {
            let attributeNames = batch.layout.attributes.map { $0.name.lowercased() }
            let relationshipNames = batch.layout.relationships.map { $0.name.lowercased() }
            for row in 0..<batch.count {
                let record = batch.record(at: row)
                var object = StoredObject(type: record.entity.uppercased())
                for (name, value) in zip(attributeNames, record.values) where !value.isNull {
                    object.attributes[name] = value
                }
                for (name, value) in zip(relationshipNames, record.relationships) {
                    switch value {
                    case .toOne(let reference?): object.relationships[name] = [Self.id(of: reference)]
                    case .toMany(let references): object.relationships[name] = references.map(Self.id(of:))
                    default: break
                    }
                }
                let id = Self.id(of: record.reference)
                objects[id] = object
                order.append(id)
            }
        }
        let walker = Walker(path: path, objects: objects)
        let roots = order.filter { objects[$0]?.type == "XDDEVMAPPINGMODEL" }
        guard roots.count == 1, let rootID = roots.first else {
            throw DecantError(
                .malformedInput, "expected one XDDEVMAPPINGMODEL object, found \(roots.count)",
                at: Location(path: path))
        }
        sourceModelPath = try walker.string(rootID, "sourcemodelpath")
        destinationModelPath = try walker.string(rootID, "destinationmodelpath")
        sourceModelData = try walker.data(rootID, "sourcemodeldata")
        destinationModelData = try walker.data(rootID, "destinationmodeldata")
        var mappings: [EntityMapping] = []
        for id in try walker.targets(rootID, "entitymappings", type: "XDDEVENTITYMAPPING") {
            mappings.append(try walker.entityMapping(id))
        }
        // A stable sort: files that number every mapping 0 keep their stored order.
        entityMappings = mappings.enumerated().sorted {
            ($0.element.mappingNumber, $0.offset) < ($1.element.mappingNumber, $1.offset)
        }.map(\.element)
    }

    private static func id(of reference: ObjectReference) -> String {
        if case .external(let id) = reference.id { return id }
        return reference.id.description
    }

    /// Typed access to the stored objects, throwing `.malformedInput` naming the object and key.
    private struct Walker {
        let path: String
        let objects: [String: StoredObject]

        func fail(_ message: String, _ id: String, _ key: String?) -> DecantError {
            DecantError(
                .malformedInput, message,
                at: Location(path: path, entity: objects[id]?.type, object: id, keyPath: key))
        }

        func value(_ id: String, _ key: String) -> Value? {
            objects[id]?.attributes[key]
        }

        func string(_ id: String, _ key: String) throws -> String? {
            guard let value = value(id, key) else { return nil }
            guard case .string(let text) = value else { throw fail("\(key) is not a string", id, key) }
            return text
        }

        func data(_ id: String, _ key: String) throws -> Data? {
            guard let value = value(id, key) else { return nil }
            switch value {
            case .data(let bytes), .transformable(let bytes): return bytes
            default: throw fail("\(key) is not binary data", id, key)
            }
        }

        func integer(_ id: String, _ key: String) throws -> Int64? {
            guard let value = value(id, key) else { return nil }
            guard case .integer(let number) = value else { throw fail("\(key) is not an integer", id, key) }
            return number
        }

        /// The objects relationship `key` of `id` lists, each checked to be of `type`.
        func targets(_ id: String, _ key: String, type: String) throws -> [String] {
            let ids = objects[id]?.relationships[key] ?? []
            for target in ids {
                guard let object = objects[target] else { throw fail("\(key) refers to missing \(target)", id, key) }
                guard object.type == type else {
                    throw fail("\(key) refers to \(target), a \(object.type), not a \(type)", id, key)
                }
            }
            return ids
        }

        func entityMapping(_ id: String) throws -> EntityMapping {
            var mapping = EntityMapping(
                id: id,
                sourceName: try string(id, "sourcename"),
                destinationName: try string(id, "destinationname"),
                mappingTypeName: try string(id, "mappingtypename"),
                mappingNumber: try integer(id, "mappingnumber") ?? 0,
                policyClassName: try string(id, "migrationpolicyclassname"),
                name: try string(id, "name"),
                filterPredicate: try string(id, "sourcefilterpredicatestring"),
                userInfoData: try data(id, "userinfodata"),
                sourceExpressionData: try data(id, "sourceexpressiondata"),
                attributes: [],
                relationships: []
            )
            for target in try targets(id, "attributemappings", type: "XDDEVATTRIBUTEMAPPING") {
                mapping.attributes.append(try propertyMapping(target))
            }
            for target in try targets(id, "relationshipmappings", type: "XDDEVRELATIONSHIPMAPPING") {
                mapping.relationships.append(try propertyMapping(target))
            }
            return mapping
        }

        func propertyMapping(_ id: String) throws -> PropertyMapping {
            guard let name = try string(id, "name"), !name.isEmpty else {
                throw fail("property mapping has no name", id, "name")
            }
            return PropertyMapping(
                id: id,
                name: name,
                valueExpressionData: try data(id, "valueexpressiondata"),
                sourceKeyPath: try string(id, "sourcekeypath"),
                sourceMappingName: try string(id, "sourcemappingname")
            )
        }
    }
}
