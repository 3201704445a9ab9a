public import DecantCore
public import DecantCodecs
public import Foundation

/// Reads a Core Data binary store (`NSBinaryStoreType`, section 6 of the formats spec) as Apple's framework writes
/// it: the 64-byte header, the `mapData` archive of `NSDictionaryMapNode`s, the `metadata` archive. The model is the
/// version of `FormatOptions.bundle` whose hashes equal the metadata's (the store carries no model); slots are named
/// by ``BinaryStoreSlots`` (the attribute order Core Data uses), relationships come from `NSRelatedNodes`. Objects
/// come one entity at a time in model order, by primary key; ids are `RecordID.primaryKey(NSPrimaryKey64)`. A
/// zero-length file is an empty store of the bundle's chosen version. Without a model, ``BinaryStoreFile`` reads
/// the nodes positionally.
///
/// **Memory.** A whole-file format: the decoded `mapData` archive stays in memory, about 1.8 KB per object of four
/// short attributes and two relationships (412 bytes of file each; measured by `WholeFileMemoryTests` on 20 000 such
/// objects), plus the file's bytes while it is decoded.
///
/// ```swift
/// var reader = try BinaryStoreReader(contentsOf: url, options: FormatOptions(bundle: notes))
/// ```
/// Errors are ``DecantError``: `.malformedInput` naming the file, the byte offset of a bad header field or the
/// archive object, and for values the entity, object and property; `.modelMismatch`; `.usage` without a bundle.
public final class BinaryStoreReader: RecordReader {
    /// The model the records follow.
    public let model: ObjectModel
    /// The store's metadata (`NSStoreType` is `Binary`).
    public let metadata: StoreMetadata
    /// The header's primary-key counter: the highest key the store has handed out.
    public let primaryKeyCounter: UInt64
    /// Records per batch.
    public var batchSize = 256

    private let path: String
    private let map: BinaryStoreMap?
    private let entityByKey: [Int64: String]
    private let plan: [(entity: String, nodes: [Int])]
    private var step = 0
    private var offset = 0

    /// Reads the whole store at `url`.
    /// - Throws: ``DecantError``.
    public convenience init(contentsOf url: URL, options: FormatOptions) throws {
        let data = try Data(wholeFile: url, what: "the binary store")
        try self.init(data: data, path: url.displayPath, options: options)
    }

    /// Reads a store held in memory; `path` labels errors.
    public init(data: Data, path: String, options: FormatOptions) throws {
        self.path = path
        let here = Location(path: path)
        guard !data.isEmpty else {
            model = try options.modelForModelLessInput(at: here)
            metadata = StoreMetadata(storeUUID: "", plist: ["NSStoreType": .string("Binary")])
            primaryKeyCounter = 0
            map = nil
            entityByKey = [:]
            plan = []
            return
        }
        let map = try BinaryStoreMap(data: data, path: path)
        self.map = map
        primaryKeyCounter = map.header.nextPrimaryKey
        let metaLocation = Location(path: path, offset: Int(map.header.metadataOffset))
        var plist = PropertyListDictionary()
        for entry in map.metadataEntries {
            plist[entry.key] = try BinaryStoreMap.located(metaLocation) {
                BinaryStoreValue.plist(try map.metadataArchive.decodeTree(entry.value))
            }
        }
        metadata = StoreMetadata(storeUUID: plist["NSStoreUUID"]?.stringValue ?? "", plist: plist)
        guard metadata.storeType == "Binary" else {
            throw DecantError(
                .malformedInput, "NSStoreType is \(metadata.storeType ?? "missing"), not Binary", at: metaLocation)
        }
        model = try ModelMatch.resolve(
            storeHashes: metadata.entityVersionHashes, storeIdentifiers: metadata.versionIdentifiers,
            bundle: options.bundle, cachedModel: nil,
            missingModelAdvice: "a binary store carries no model; give its model with --model", at: here)
        var entityByKey: [Int64: String] = [:]
        var members: [String: [Int]] = [:]
        for (position, node) in map.nodes.enumerated() {
            guard model.entity(named: node.entity)?.isAbstract == false else {
                throw DecantError(
                    .malformedInput, "node \(node.key) is of \(node.entity), not a concrete entity of the model",
                    at: Location(
                        path: path, offset: Int(map.header.mapDataOffset), entity: node.entity,
                        object: "$objects[\(node.index)]"))
            }
            entityByKey[node.key] = node.entity
            members[node.entity, default: []].append(position)
        }
        self.entityByKey = entityByKey
        let nodes = map.nodes
        self.plan = model.entities.compactMap { entity in
            members[entity.name].map { list in (entity.name, list.sorted { nodes[$0].key < nodes[$1].key }) }
        }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        guard step < plan.count, let map else { return false }
        let archive = map.archive
        let (entityName, members) = plan[step]
        guard let layout = RecordLayout(entity: entityName, in: model), let entity = model.entity(named: entityName)
        else {
            throw DecantError(.internalError, "no layout for \(entityName)", at: Location(path: path))
        }
        // Where each persistent attribute sits among the node's slots (the one order BinaryStoreSlots decides).
        let slots = BinaryStoreSlots.slots(of: entity, in: model)
        var slotOfAttribute: [String: Int] = [:]
        for (index, slot) in slots.enumerated() {
            if case .attribute(let attribute) = slot { slotOfAttribute[attribute.name] = index }
        }
        batch.removeAll(newLayout: layout)
        let end = min(members.count, offset + max(1, batchSize))
        for position in members[offset..<end] {
            let node = map.nodes[position]
            let named = node.named.map { Dictionary($0, uniquingKeysWith: { first, _ in first }) }
            if named == nil && node.slots.count != slots.count {
                throw try map.inNode(node, keyPath: "NSAttributeValues") {
                    DecantError(
                        .malformedInput,
                        "the node has \(node.slots.count) attribute slots; \(entityName) has \(slots.count) properties")
                }
            }
            batch.beginRecord(id: .primaryKey(node.key))
            for attribute in layout.attributes {
                let raw: PropertyListValue? =
                    if let named {
                        named[attribute.name]
                    } else {
                        slotOfAttribute[attribute.name].map { node.slots[$0] }
                    }
                let value = try map.inNode(node, keyPath: attribute.name) {
                    try raw.map { try decode($0, as: attribute.type, in: archive) } ?? .null
                }
                batch.append(value, as: attribute.type)
            }
            for relationship in layout.relationships {
                let keys = node.related.first { $0.name == relationship.name }?.keys ?? []
                let references = try keys.map { key in
                    try map.inNode(node, keyPath: relationship.name) { try reference(key, of: relationship) }
                }
                if relationship.isToMany {
                    batch.appendReferenceList(references)
                } else {
                    guard references.count <= 1 else {
                        throw try map.inNode(node, keyPath: relationship.name) {
                            DecantError(
                                .malformedInput, "the to-one \(relationship.name) names \(references.count) objects")
                        }
                    }
                    batch.appendReference(references.first)
                }
            }
            batch.endRecord()
        }
        offset = end
        if offset >= members.count {
            step += 1
            offset = 0
        }
        return true
    }

    /// The object with primary key `key`, checked against the relationship's destination.
    private func reference(_ key: Int64, of relationship: Relationship) throws -> ObjectReference {
        guard let entity = entityByKey[key] else {
            throw DecantError(
                .malformedInput, "\(relationship.name) refers to \(key), which is not an object of this store")
        }
        if let destination = relationship.destinationEntity, entity != destination,
            let concrete = model.entity(named: entity),
            !model.ancestors(of: concrete).contains(where: { $0.name == destination })
        {
            throw DecantError(
                .malformedInput,
                "\(relationship.name) refers to \(key), a \(entity), where the model expects a \(destination)")
        }
        return ObjectReference(entity: entity, id: .primaryKey(key))
    }

    private func isNull(_ value: PropertyListValue, in archive: KeyedArchive) throws -> Bool {
        if value.isNull || value == KeyedArchiveWriter.null { return true }
        if case .uid(let uid) = value, let object = try? archive.object(at: Int(uid)), object.className == "NSNull" {
            return true
        }
        return false
    }

    private func decode(_ value: PropertyListValue, as type: AttributeType, in archive: KeyedArchive) throws -> Value {
        if try isNull(value, in: archive) { return .null }
        let decoded: Value?
        switch type {
        case .string: decoded = try archive.string(value).map(Value.string)
        case .uri: decoded = try archive.url(value).map(Value.uri)
        case .integer16, .integer32, .integer64: decoded = try archive.integer(value).map(Value.integer)
        case .boolean: decoded = try archive.bool(value).map(Value.bool)
        case .float, .double: decoded = try archive.double(value).map(Value.double)
        case .decimal:
            // An NSDecimalNumber, as Core Data keeps a Decimal attribute; text or a plain number also read.
            if let object = try archive.object(for: value), object.fields.contains("NS.mantissa") {
                return .decimal(try ArchivedDecimal.decimal(from: object))
            }
            if let integer = try? archive.integer(value) { return .decimal(Decimal(integer)) }
            if let real = try? archive.double(value) { return .decimal(Decimal(real)) }
            guard let text = try archive.string(value) else { return .null }
            if text == NumberText.decimalNotANumber { return .decimal(.nan) }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN else {
                throw DecantError(.malformedInput, "'\(text)' is not a decimal")
            }
            decoded = .decimal(decimal)
        case .date: decoded = try archive.date(value).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary: decoded = try archive.data(value).map(Value.data)
        case .transformable:
            // A data value as it is; an object graph (Core Data keeps the value itself in the node) as the keyed
            // archive the default transformer would have written.
            if let data = try? archive.data(value) {
                decoded = .transformable(data)
            } else {
                decoded = .transformable(try ArchiveSubgraph.archivedData(of: value, in: archive))
            }
        case .uuid: decoded = try archive.uuid(value).map(Value.uuid)
        case .undefined, .objectID, .composite:
            throw DecantError(.unsupportedFormat, "attributes of type \(type.modelName) are not stored")
        }
        return decoded ?? .null
    }
}

@available(*, unavailable, message: "a reader owns its position in the store; use it from one task")
extension BinaryStoreReader: Sendable {}
