public import DecantCore
public import Foundation

/// Reads a Core Data binary store (`NSBinaryStoreType`, section 6 of the formats spec; **experimental**) as written
/// by ``BinaryStoreWriter``: header, `mapData` archive, `metadata` archive. The model is the version of
/// `FormatOptions.bundle` whose hashes equal the metadata's (the store carries no model). Objects come one entity at
/// a time in model order, by reference data; ids are `RecordID.primaryKey(referenceData)`. A zero-length file is an
/// empty store of the bundle's chosen version.
///
/// **Memory.** A whole-file format: the decoded `mapData` archive stays in memory, about 3.9 KB per object of four
/// short attributes and two relationships (324 bytes of file each; measured by `WholeFileMemoryTests` on 20 000 such
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
    /// The primary-key counter from the header (the next key to assign).
    public let nextPrimaryKey: UInt64
    /// Records per batch.
    public var batchSize = 256

    private struct Node {
        var key: Int64
        var entity: String
        var slots: [PropertyListValue]
        var index: Int
    }

    private let path: String
    private let archive: KeyedArchive?
    private let nodes: [Node]
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
            nextPrimaryKey = 1
            archive = nil
            nodes = []
            entityByKey = [:]
            plan = []
            return
        }
        let bytes = [UInt8](data)
        let header = try BinaryStoreHeader(bytes, path: path)
        nextPrimaryKey = header.nextPrimaryKey
        func slice(_ offset: UInt64, _ length: UInt64) -> Data {
            Data(bytes[Int(offset)..<Int(offset + length)])
        }
        let metaArchive = try Self.open(
            slice(header.metadataOffset, header.metadataLength), path: path, offset: header.metadataOffset)
        let plist = try Self.metadata(of: metaArchive, path: path, offset: header.metadataOffset)
        metadata = StoreMetadata(storeUUID: plist["NSStoreUUID"]?.stringValue ?? "", plist: plist)
        guard metadata.storeType == "Binary" else {
            throw DecantError(
                .malformedInput, "NSStoreType is \(metadata.storeType ?? "missing"), not Binary",
                at: Location(path: path, offset: Int(header.metadataOffset)))
        }
        model = try ModelMatch.resolve(
            storeHashes: metadata.entityVersionHashes, storeIdentifiers: metadata.versionIdentifiers,
            bundle: options.bundle, cachedModel: nil,
            missingModelAdvice: "a binary store carries no model; give its model with --model", at: here)

        let mapArchive = try Self.open(
            slice(header.mapDataOffset, header.mapDataLength), path: path, offset: header.mapDataOffset)
        archive = mapArchive
        let mapLocation = Location(path: path, offset: Int(header.mapDataOffset))
        guard
            let entries = try Self.located(
                mapLocation, { try mapArchive.dictionaryEntries(mapArchive.topValue(forKey: "mapData")) })
        else {
            throw DecantError(.malformedInput, "the mapData archive has no mapData dictionary", at: mapLocation)
        }
        var nodes: [Node] = []
        var entityByKey: [Int64: String] = [:]
        var members: [String: [Int]] = [:]
        for entry in entries {
            let node = try Self.located(mapLocation) { () throws -> Node in
                guard let key = try mapArchive.integer(entry.key), let object = try mapArchive.object(for: entry.value)
                else {
                    throw DecantError(.malformedInput, "a mapData entry without reference data or node")
                }
                guard let entity = try mapArchive.string(forKey: "NSEntityName", in: object) else {
                    throw DecantError(
                        .malformedInput, "node \(key) has no NSEntityName",
                        at: Location(object: "$objects[\(object.index)]", keyPath: "NSEntityName"))
                }
                let slots = try mapArchive.elements(forKey: "NSAttributeValues", in: object) ?? []
                return Node(key: key, entity: entity, slots: slots, index: object.index)
            }
            guard model.entity(named: node.entity)?.isAbstract == false else {
                throw DecantError(
                    .malformedInput, "node \(node.key) is of \(node.entity), not a concrete entity of the model",
                    at: Location(
                        path: path, offset: Int(header.mapDataOffset), entity: node.entity,
                        object: "$objects[\(node.index)]"))
            }
            guard entityByKey.updateValue(node.entity, forKey: node.key) == nil else {
                throw DecantError(.malformedInput, "reference data \(node.key) is used twice", at: mapLocation)
            }
            members[node.entity, default: []].append(nodes.count)
            nodes.append(node)
        }
        self.nodes = nodes
        self.entityByKey = entityByKey
        self.plan = model.entities.compactMap { entity in
            members[entity.name].map { list in (entity.name, list.sorted { nodes[$0].key < nodes[$1].key }) }
        }
    }

    /// Runs `body`, giving a ``DecantError`` without a file the store's path and the archive's offset.
    private static func located<T>(_ location: Location, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DecantError {
            var located = error.located(at: location)
            if located.location?.offset == nil { located.location?.offset = location.offset }
            throw located
        }
    }

    /// Runs `body`, placing a ``DecantError`` at the object and property being decoded; the archive entry the
    /// codec named, if any, goes into the message.
    private static func inObject<T>(_ location: Location, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as DecantError {
            if let entry = error.location?.object { error.message += " (\(entry))" }
            error.location = location
            throw error
        }
    }

    private static func open(_ data: Data, path: String, offset: UInt64) throws -> KeyedArchive {
        try located(Location(path: path, offset: Int(offset))) { try KeyedArchive(data: data, path: path) }
    }

    /// The metadata dictionary (root key `metadata`) as a property-list dictionary.
    private static func metadata(of archive: KeyedArchive, path: String, offset: UInt64) throws
        -> PropertyListDictionary
    {
        let location = Location(path: path, offset: Int(offset))
        let tree = try located(location) { try archive.decodeTree(archive.topValue(forKey: "metadata")) }
        guard case .dictionary = tree, case .dictionary(let plist) = plistValue(tree) else {
            throw DecantError(.malformedInput, "the metadata archive holds no metadata dictionary", at: location)
        }
        return plist
    }

    private static func plistValue(_ value: ArchivedValue) -> PropertyListValue {
        switch value {
        case .null, .object: return .null
        case .string(let text), .url(let text): return .string(text)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .bool(let flag): return .bool(flag)
        case .data(let data): return .data(data)
        case .date(let seconds): return .date(seconds)
        case .uuid(let uuid): return .string(uuid.uuidString)
        case .array(let elements): return .array(elements.map(plistValue))
        case .dictionary(let entries):
            var dictionary = PropertyListDictionary()
            for entry in entries {
                if case .string(let key) = entry.key { dictionary[key] = plistValue(entry.value) }
            }
            return .dictionary(dictionary)
        }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        guard step < plan.count, let archive else { return false }
        let (entityName, members) = plan[step]
        guard let layout = RecordLayout(entity: entityName, in: model) else {
            throw DecantError(.internalError, "no layout for \(entityName)", at: Location(path: path))
        }
        batch.removeAll(newLayout: layout)
        let end = min(members.count, offset + max(1, batchSize))
        for position in members[offset..<end] {
            let node = nodes[position]
            let here = Location(path: path, entity: entityName, object: "\(entityName)/p\(node.key)")
            guard node.slots.count == layout.attributes.count + layout.relationships.count else {
                throw DecantError(
                    .malformedInput,
                    "the node has \(node.slots.count) property slots; \(entityName) has "
                        + "\(layout.attributes.count + layout.relationships.count) persistent properties", at: here)
            }
            batch.beginRecord(id: .primaryKey(node.key))
            for (slot, attribute) in layout.attributes.enumerated() {
                var at = here
                at.keyPath = attribute.name
                let value = try Self.inObject(at) { try decode(node.slots[slot], as: attribute.type, in: archive) }
                batch.append(value, as: attribute.type)
            }
            for (index, relationship) in layout.relationships.enumerated() {
                var at = here
                at.keyPath = relationship.name
                let raw = node.slots[layout.attributes.count + index]
                try Self.inObject(at) {
                    func reference(_ value: PropertyListValue) throws -> ObjectReference {
                        guard let key = try archive.integer(value) else {
                            throw DecantError(.malformedInput, "a relationship member is nil")
                        }
                        guard let entity = entityByKey[key] else {
                            throw DecantError(
                                .malformedInput,
                                "\(relationship.name) refers to \(key), which is not an object of this store")
                        }
                        if let destination = relationship.destinationEntity, entity != destination,
                            let concrete = model.entity(named: entity),
                            !model.ancestors(of: concrete).contains(where: { $0.name == destination })
                        {
                            throw DecantError(
                                .malformedInput,
                                "\(relationship.name) refers to \(key), a \(entity), where the model expects a "
                                    + destination)
                        }
                        return ObjectReference(entity: entity, id: .primaryKey(key))
                    }
                    if relationship.isToMany {
                        batch.appendReferenceList(try (archive.elements(raw) ?? []).map(reference))
                    } else {
                        batch.appendReference(try isNull(raw, in: archive) ? nil : reference(raw))
                    }
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
            guard let text = try archive.string(value) else { return .null }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN else {
                throw DecantError(.malformedInput, "'\(text)' is not a decimal")
            }
            decoded = .decimal(decimal)
        case .date: decoded = try archive.date(value).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary: decoded = try archive.data(value).map(Value.data)
        case .transformable: decoded = try archive.data(value).map(Value.transformable)
        case .uuid: decoded = try archive.uuid(value).map(Value.uuid)
        case .undefined, .objectID, .composite:
            throw DecantError(.unsupportedFormat, "attributes of type \(type.modelName) are not stored")
        }
        return decoded ?? .null
    }
}

@available(*, unavailable, message: "a reader owns its position in the store; use it from one task")
extension BinaryStoreReader: Sendable {}
