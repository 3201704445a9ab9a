public import DecantCore
public import DecantCodecs
public import Foundation

/// Reads a Core Data XML store (`NSXMLStoreType`) as record batches, one entity at a time in model order, each
/// entity's objects in file order. Ids stay the store's own (`RecordID.external("z102")`).
///
/// The model is the version of `FormatOptions.bundle` whose entity hashes equal the store's metadata hashes; without
/// a bundle it is built from what the file declares (a schema-less read): the entities (named as the metadata hashes
/// spell them, else as the upper-cased `type`), their attributes with the type their values are written with, and
/// their relationships (to-one for `1/1`, to-many otherwise; inverses paired when exactly one relationship leads
/// back). Property names then stay lower-cased, as the file holds them.
///
/// **Memory.** The XML store is a whole-file format: the parsed objects stay in memory, values still as text, about
/// 1.5 KB per object of four short attributes and two relationships (530 bytes of file each; measured by
/// `WholeFileMemoryTests` on 20 000 such objects), plus the file's bytes while it is parsed.
///
/// ```swift
/// let reader = try XMLStoreReader(contentsOf: url, options: FormatOptions())   // schema-less
/// var batch = RecordBatch(layout: RecordLayout(entity: reader.model.entities[0].name, in: reader.model)!)
/// while try reader.nextBatch(into: &batch) { print(batch.layout.entityName, batch.count) }
/// ```
/// Errors are ``DecantError`` `.malformedInput` (exit 65) naming the file, the line and, for values, the entity and
/// object; `.modelMismatch` when no version of the bundle matches the store's hashes.
public final class XMLStoreReader: RecordReader {
    /// The model the records follow.
    public let model: ObjectModel
    /// The store's metadata: its plist with `NSStoreType` (`XML`) and `NSStoreUUID` added, as Core Data does.
    public let metadata: StoreMetadata
    /// Whether the model was built from the file (no bundle was given).
    public let isSchemaLess: Bool
    /// `databaseInfo/nextObjectID`: the highest object id number assigned.
    public let nextObjectID: Int64?
    /// Records per batch.
    public var batchSize = 256

    private let path: String
    private let objects: [XMLStoreDocument.Object]
    /// Object index by id.
    private let objectIndex: [String: Int]
    /// Entity name per object.
    private let objectEntity: [String]
    /// Entities with objects, in model order, with their objects' indices.
    private let plan: [(entity: String, objects: [Int])]
    private var step = 0
    private var offset = 0

    /// Reads and parses the whole store at `url`.
    /// - Throws: ``DecantError``: `.fileNotFound`, `.malformedInput`, `.modelMismatch`.
    public convenience init(contentsOf url: URL, options: FormatOptions) throws {
        let data = try Data(wholeFile: url, what: "the XML store")
        try self.init(data: data, path: url.displayPath, bundle: options.bundle)
    }

    /// Parses a store held in memory; `path` labels errors.
    public init(data: Data, path: String, bundle: ModelBundle?) throws {
        self.path = path
        let document = try XMLStoreDocument(bytes: Array(data), path: path)
        let here = Location(path: path)
        if let version = document.version, version != 134_481_920 {
            throw DecantError(
                .unsupportedFormat,
                "databaseInfo/version is \(version), not 134481920: written by an incompatible "
                    + "version of Core Data", at: here)
        }
        var plist = document.metadata
        plist["NSStoreType"] = .string("XML")
        if let uuid = document.uuid { plist["NSStoreUUID"] = .string(uuid) }
        self.metadata = StoreMetadata(storeUUID: document.uuid ?? "", plist: plist)
        self.nextObjectID = document.nextObjectID
        self.objects = document.objects

        var index: [String: Int] = [:]
        for (position, object) in document.objects.enumerated() {
            guard index.updateValue(position, forKey: object.id) == nil else {
                throw DecantError(
                    .malformedInput, "object id \(object.id) is used twice",
                    at: Location(path: path, line: object.line, entity: object.type, object: object.id))
            }
        }
        self.objectIndex = index

        if let bundle {
            model = try ModelMatch.resolve(
                storeHashes: metadata.entityVersionHashes, storeIdentifiers: metadata.versionIdentifiers, bundle: bundle,
                cachedModel: nil, at: here)
            isSchemaLess = false
        } else {
            model = try Self.declaredModel(
                of: document, hashes: metadata.entityVersionHashes, versionIdentifiers: metadata.versionIdentifiers,
                path: path)
            isSchemaLess = true
        }
        var byType: [String: String] = [:]
        for entity in model.entities {
            guard byType.updateValue(entity.name, forKey: entity.name.uppercased()) == nil else {
                throw DecantError(
                    .unsupportedFormat,
                    "entities \(entity.name) and \(byType[entity.name.uppercased()] ?? "") differ "
                        + "only in case; an XML store cannot tell them apart", at: here)
            }
        }
        var objectEntity: [String] = []
        var members: [String: [Int]] = [:]
        for (position, object) in document.objects.enumerated() {
            guard let entity = byType[object.type.uppercased()], model.entity(named: entity)?.isAbstract != true else {
                throw DecantError(
                    .malformedInput, "object type \(object.type) is not a concrete entity of the model",
                    at: Location(path: path, line: object.line, entity: object.type, object: object.id))
            }
            objectEntity.append(entity)
            members[entity, default: []].append(position)
        }
        self.objectEntity = objectEntity
        self.plan = model.entities.compactMap { entity in members[entity.name].map { (entity.name, $0) } }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        guard step < plan.count else { return false }
        let (entityName, members) = plan[step]
        guard let layout = RecordLayout(entity: entityName, in: model) else {
            throw DecantError(.internalError, "no layout for \(entityName)", at: Location(path: path))
        }
        batch.removeAll(newLayout: layout)
        let attributes = Dictionary(
            layout.attributes.enumerated().map { ($0.element.name.lowercased(), $0.offset) },
            uniquingKeysWith: { a, _ in a })
        let relationships = Dictionary(
            layout.relationships.enumerated().map { ($0.element.name.lowercased(), $0.offset) },
            uniquingKeysWith: { a, _ in a })
        let end = min(members.count, offset + max(1, batchSize))
        for position in members[offset..<end] {
            try append(
                objects[position], layout: layout, attributes: attributes, relationships: relationships, to: &batch)
        }
        offset = end
        if offset >= members.count {
            step += 1
            offset = 0
        }
        return true
    }

    private func append(
        _ object: XMLStoreDocument.Object, layout: RecordLayout, attributes: [String: Int],
        relationships: [String: Int],
        to batch: inout RecordBatch
    ) throws {
        var attributeFields = [Int](repeating: -1, count: layout.attributes.count)
        var relationshipFields = [Int](repeating: -1, count: layout.relationships.count)
        for (number, field) in object.fields.enumerated() {
            let key = field.name.lowercased()
            let slot = field.isRelationship ? relationships[key] : attributes[key]
            guard let slot else {
                throw error(
                    "\(layout.entityName) has no \(field.isRelationship ? "relationship" : "attribute") \(field.name)",
                    object, field)
            }
            if field.isRelationship {
                guard relationshipFields[slot] < 0 else { throw error("\(field.name) appears twice", object, field) }
                relationshipFields[slot] = number
            } else {
                guard attributeFields[slot] < 0 else { throw error("\(field.name) appears twice", object, field) }
                attributeFields[slot] = number
            }
        }
        batch.beginRecord(id: .external(object.id))
        for (slot, attribute) in layout.attributes.enumerated() {
            guard attributeFields[slot] >= 0 else {
                batch.appendNull()
                continue
            }
            let field = object.fields[attributeFields[slot]]
            guard XMLStoreValueText.token(field.type, fits: attribute.type) else {
                throw error(
                    "\(field.name) is written as type \(field.type), the model says \(attribute.type.modelName)",
                    object,
                    field)
            }
            guard let value = XMLStoreValueText.value(field.text, as: attribute.type) else {
                let shown = field.text.count > 40 ? String(field.text.prefix(40)) + "…" : field.text
                throw error("\(field.name): '\(shown)' is not a valid \(field.type) value", object, field)
            }
            batch.append(value, as: attribute.type)
        }
        for (slot, relationship) in layout.relationships.enumerated() {
            guard relationshipFields[slot] >= 0 else {
                if relationship.isToMany { batch.appendReferenceList([]) } else { batch.appendReference(nil) }
                continue
            }
            let field = object.fields[relationshipFields[slot]]
            var references: [ObjectReference] = []
            for id in field.text.split(whereSeparator: { $0 == " " }) {
                let id = String(id)
                guard let target = objectIndex[id] else {
                    throw error("\(field.name) refers to \(id), which is not an object of this store", object, field)
                }
                let entity = objectEntity[target]
                if !isSchemaLess, let destination = relationship.destinationEntity, entity != destination,
                    let concrete = model.entity(named: entity),
                    !model.ancestors(of: concrete).contains(where: { $0.name == destination })
                {
                    throw error(
                        "\(field.name) refers to \(id), a \(entity), where the model expects a \(destination)", object,
                        field)
                }
                references.append(ObjectReference(entity: entity, id: .external(id)))
            }
            if relationship.isToMany {
                batch.appendReferenceList(references)
            } else {
                guard references.count <= 1 else {
                    throw error("to-one relationship \(field.name) lists \(references.count) objects", object, field)
                }
                batch.appendReference(references.first)
            }
        }
        batch.endRecord()
    }

    private func error(_ message: String, _ object: XMLStoreDocument.Object, _ field: XMLStoreDocument.Field)
        -> DecantError
    {
        let entity = objectIndex[object.id].map { objectEntity[$0] } ?? object.type
        return DecantError(
            .malformedInput, message,
            at: Location(path: path, line: field.line, entity: entity, object: object.id, keyPath: field.name))
    }

    // MARK: Schema-less

    /// The model the file declares: entities, attributes with their written types, relationships.
    static func declaredModel(
        of document: XMLStoreDocument, hashes: [String: Data], versionIdentifiers: [String] = [], path: String
    ) throws -> ObjectModel {
        var names: [String: String] = [:]
        for name in hashes.keys.sorted() { names[name.uppercased()] = name }
        func entityName(_ type: String) -> String { names[type.uppercased()] ?? type }

        struct Declared {
            var attributes: [(name: String, type: AttributeType)] = []
            var relationships: [(name: String, destination: String, toMany: Bool)] = []
        }
        var declared: [String: Declared] = [:]
        for name in names.values { declared[name] = Declared() }
        for object in document.objects {
            let entity = entityName(object.type)
            var entry = declared[entity] ?? Declared()
            for field in object.fields {
                let location = Location(
                    path: path, line: field.line, entity: object.type, object: object.id, keyPath: field.name)
                if field.isRelationship {
                    guard !entry.attributes.contains(where: { $0.name == field.name }) else {
                        throw DecantError(
                            .malformedInput, "\(field.name) is both an attribute and a relationship", at: location)
                    }
                    let counts = field.type.split(separator: "/")
                    let listsMany = field.text.split(separator: " ").count > 1
                    let toMany = listsMany || !(counts.count == 2 && counts[1] == "1")
                    let destination = entityName(field.destination ?? "")
                    guard !destination.isEmpty else {
                        throw DecantError(
                            .malformedInput, "relationship \(field.name) has no destination", at: location)
                    }
                    if let known = entry.relationships.firstIndex(where: { $0.name == field.name }) {
                        entry.relationships[known].toMany = entry.relationships[known].toMany || toMany
                    } else {
                        let next = Self.nextKnownName(after: field, in: object, among: entry.relationships.map(\.name))
                        let position = next.flatMap { name in entry.relationships.firstIndex { $0.name == name } }
                        entry.relationships.insert(
                            (field.name, destination, toMany), at: position ?? entry.relationships.count)
                    }
                } else {
                    guard let type = XMLStoreValueText.type(forToken: field.type) else {
                        throw DecantError(.malformedInput, "unknown attribute type \(field.type)", at: location)
                    }
                    guard !entry.relationships.contains(where: { $0.name == field.name }) else {
                        throw DecantError(
                            .malformedInput, "\(field.name) is both an attribute and a relationship", at: location)
                    }
                    if let known = entry.attributes.first(where: { $0.name == field.name }) {
                        guard known.type == type else {
                            throw DecantError(
                                .malformedInput,
                                "\(field.name) is written as \(XMLStoreValueText.token(for: known.type) ?? "?") "
                                    + "elsewhere and as \(field.type) here", at: location)
                        }
                    } else {
                        let next = Self.nextKnownName(after: field, in: object, among: entry.attributes.map(\.name))
                        let position = next.flatMap { name in entry.attributes.firstIndex { $0.name == name } }
                        entry.attributes.insert((field.name, type), at: position ?? entry.attributes.count)
                    }
                }
            }
            declared[entity] = entry
        }
        var entities: [Entity] = []
        for name in declared.keys.sorted() {
            let entry = declared[name] ?? Declared()
            var entity = Entity(name: name)
            entity.attributes = entry.attributes.map { Attribute(name: $0.name, type: $0.type, isOptional: true) }
            entity.relationships = entry.relationships.map {
                Relationship(name: $0.name, destination: $0.destination, toMany: $0.toMany)
            }
            entities.append(entity)
        }
        // Pair inverses: R (E → D) and S (D → E) when each is the only relationship leading that way.
        for (position, entity) in entities.enumerated() {
            for (slot, relationship) in entity.relationships.enumerated() {
                guard let destination = relationship.destinationEntity, destination != entity.name,
                    let other = entities.first(where: { $0.name == destination })
                else { continue }
                let forward = entity.relationships.filter { $0.destinationEntity == destination }
                let backward = other.relationships.filter { $0.destinationEntity == entity.name }
                guard forward.count == 1, backward.count == 1, let inverse = backward.first else { continue }
                entities[position].relationships[slot].inverseName = inverse.name
                entities[position].relationships[slot].inverseEntity = destination
            }
        }
        let file = URL(fileURLWithPath: path).lastPathComponent
        return ObjectModel(
            versionName: "declared by \(file)", entities: entities, versionIdentifiers: versionIdentifiers)
    }

    /// The first property after `field` in `object` that is already in `known`: a property seen for the first time
    /// goes before it, so that the declared order agrees with every object's order (Core Data writes each object's
    /// properties in its entity's order, leaving nil ones out).
    private static func nextKnownName(
        after field: XMLStoreDocument.Field, in object: XMLStoreDocument.Object, among known: [String]
    ) -> String? {
        guard let start = object.fields.firstIndex(where: { $0.name == field.name }) else { return nil }
        let later = object.fields[(start + 1)...]
        return later.first { $0.isRelationship == field.isRelationship && known.contains($0.name) }?.name
    }
}

@available(*, unavailable, message: "a reader owns its position in the store; use it from one task")
extension XMLStoreReader: Sendable {}
