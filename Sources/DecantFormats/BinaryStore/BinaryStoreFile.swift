public import DecantCore
public import DecantCodecs
public import Foundation

/// One value of a binary store as its file holds it: a slot of a node's `NSAttributeValues` or a metadata value.
public enum BinaryStoreValue: Sendable, Hashable {
    /// `NSNull`: nil in a slot (Apple never writes the archive's `$null` there; an NSArray cannot hold nil).
    case null
    /// A property-list value kept with its own type (string, integer, real, Boolean, data); a dictionary or array
    /// is written as `NSMutableDictionary` / `NSArray` of its members.
    case plist(PropertyListValue)
    /// An object graph kept as archived (`NSDate`, `NSMutableString`, `NSDictionary`, `NSColor`, app classes…):
    /// a keyed archive of its own (`$top` key `root`), copied back inline when written.
    case archived(Data)
    /// A Decant value, archived as Foundation archives it (a transformable value's archive inline, as its graph).
    case value(Value)
}

/// A binary store (`NSBinaryStoreType`, section 6 of the formats spec) as its file holds it, without a model:
/// the header's primary-key counter, the metadata entries in file order, and one node per object with its primary
/// key, entity name, positional attribute slots and related nodes by relationship name. What Decant can say about
/// a store whose model is unknown (Apple's binary stores are written by apps that ship their model inside), and
/// what it writes back unchanged: ``encoded()`` writes Apple's layout, which ``BinaryStoreWriter`` also uses.
///
/// ```swift
/// let file = try BinaryStoreFile(data: Data(contentsOf: url), path: url.path)
/// let counts = Dictionary(grouping: file.nodes, by: \.entity).mapValues(\.count)
/// try file.encoded().write(to: copy)
/// ```
public struct BinaryStoreFile: Sendable, Hashable {
    /// One object: `NSDictionaryMapNode`.
    public struct Node: Sendable, Hashable {
        /// `NSPrimaryKey64`, unique in the store (not per entity).
        public var key: Int64
        /// `NSEntityName`.
        public var entity: String
        /// `NSAttributeValues`: one slot per property of the entity, in the order ``BinaryStoreSlots`` decides.
        public var slots: [BinaryStoreValue]
        /// `NSRelatedNodes`, in file order; empty relationships are left out when written.
        public var related: [Related]

        /// A node.
        public init(key: Int64, entity: String, slots: [BinaryStoreValue], related: [Related] = []) {
            self.key = key
            self.entity = entity
            self.slots = slots
            self.related = related
        }
    }

    /// One relationship of a node: its name and the primary keys of its members.
    public struct Related: Sendable, Hashable {
        /// The relationship's name.
        public var name: String
        /// The members' primary keys, in order.
        public var keys: [Int64]
        /// A to-many (`NSMutableArray`) rather than a to-one (`NSArray` of one key).
        public var isToMany: Bool

        /// A relationship entry.
        public init(name: String, keys: [Int64], isToMany: Bool) {
            self.name = name
            self.keys = keys
            self.isToMany = isToMany
        }
    }

    /// One metadata key and its value.
    public struct MetadataEntry: Sendable, Hashable {
        /// The key (`NSStoreType`, `NSStoreModelVersionHashes`, or one the app set).
        public var key: String
        /// The value.
        public var value: BinaryStoreValue

        /// An entry.
        public init(key: String, value: BinaryStoreValue) {
            self.key = key
            self.value = value
        }
    }

    /// The header's primary-key counter: the highest key ever handed out (written at least as high as every node's).
    public var primaryKeyCounter: Int64
    /// The `metadata` archive's dictionary, in file order.
    public var metadata: [MetadataEntry]
    /// The `mapData` archive's nodes, in file order.
    public var nodes: [Node]

    /// A store of these parts.
    public init(primaryKeyCounter: Int64, metadata: [MetadataEntry], nodes: [Node]) {
        self.primaryKeyCounter = primaryKeyCounter
        self.metadata = metadata
        self.nodes = nodes
    }

    /// Reads the whole store at `url`.
    /// - Throws: ``DecantError``: `.fileNotFound`, `.ioError`, or as ``init(data:path:)``.
    public init(contentsOf url: URL) throws {
        try self.init(data: try Data(wholeFile: url, what: "the binary store"), path: url.displayPath)
    }

    /// Reads the store in `data`; `path` labels errors. A zero-length file is an empty store without metadata.
    /// - Throws: ``DecantError`` `.malformedInput` naming the file and the byte offset of the header field or the
    ///   archive, and for a node its entity, archive object and key.
    public init(data: Data, path: String) throws {
        guard !data.isEmpty else {
            self.init(primaryKeyCounter: 0, metadata: [], nodes: [])
            return
        }
        let map = try BinaryStoreMap(data: data, path: path)
        let metaLocation = Location(path: path, offset: Int(map.header.metadataOffset))
        let values = try map.metadataEntries.map { entry in
            try BinaryStoreMap.located(metaLocation) {
                MetadataEntry(key: entry.key, value: try map.metadataArchive.storeValue(entry.value))
            }
        }
        let nodes = try map.nodes.map { node in
            try map.inNode(node) {
                Node(
                    key: node.key, entity: node.entity, slots: try node.slots.map { try map.archive.storeValue($0) },
                    related: node.related)
            }
        }
        self.init(primaryKeyCounter: Int64(bitPattern: map.header.nextPrimaryKey), metadata: values, nodes: nodes)
    }

    /// The metadata as Decant reads any store's (hashes, identifiers, UUID, app keys).
    /// - Throws: ``DecantError`` when an archived value does not decode.
    public func storeMetadata() throws -> StoreMetadata {
        var plist = PropertyListDictionary()
        for entry in metadata { plist[entry.key] = try entry.value.propertyListValue() }
        return StoreMetadata(storeUUID: plist["NSStoreUUID"]?.stringValue ?? "", plist: plist)
    }

    /// The file: the 64-byte header, the `mapData` archive, the `metadata` archive, with Apple's class names and
    /// keys (section 6): nodes are `NSDictionaryMapNode`s in an `NSMutableDictionary` keyed by their primary keys,
    /// nil slots `NSNull` objects, to-ones `NSArray`s and to-manys `NSMutableArray`s of keys.
    /// - Throws: ``DecantError`` `.malformedInput` when an archived value does not decode.
    public func encoded() throws -> Data {
        var map = BinaryStoreEncoder()
        let chain = ["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"]
        var keys: [PropertyListValue] = []
        var objects: [PropertyListValue] = []
        for node in nodes {
            let reference = map.writer.reserveObject()
            let slots = try node.slots.map { try map.encode($0) }
            var fields: PropertyListDictionary = [
                "NSPrimaryKey64": .integer(node.key),
                "NSEntityName": map.writer.addString(node.entity).uid,
                "NSAttributeValues": map.writer.addArray(slots).uid,
            ]
            let related = node.related.filter { !$0.keys.isEmpty }
            if !related.isEmpty {
                let names = related.map { map.writer.addString($0.name).uid }
                let lists = related.map { entry in
                    map.writer.addArray(
                        entry.keys.map { map.writer.addValue(.integer($0)).uid },
                        className: entry.isToMany ? "NSMutableArray" : "NSArray"
                    ).uid
                }
                fields["NSRelatedNodes"] =
                    map.writer.addDictionary(keys: names, values: lists, className: "NSMutableDictionary").uid
            }
            map.writer.setObject(reference, className: chain[0], classes: chain, fields: fields)
            keys.append(map.writer.addValue(.integer(node.key)).uid)
            objects.append(reference.uid)
        }
        let root = map.writer.addDictionary(keys: keys, values: objects, className: "NSMutableDictionary")
        let mapData = try map.encodedData(root: root, topKey: "mapData")

        var meta = BinaryStoreEncoder()
        let names = metadata.map { meta.writer.addString($0.key).uid }
        let values = try metadata.map { try meta.encode($0.value) }
        let metadataRoot = meta.writer.addDictionary(keys: names, values: values)
        let metadataData = try meta.encodedData(root: metadataRoot, topKey: "metadata")

        let counter = max(primaryKeyCounter, nodes.map(\.key).max() ?? 0)
        let header = BinaryStoreHeader(
            metadataLength: metadataData.count, mapDataLength: mapData.count, nextPrimaryKey: Int(counter))
        var file = Data(header.bytes)
        file.append(mapData)
        file.append(metadataData)
        return file
    }
}

extension BinaryStoreValue {
    /// The value as a property list, archived graphs decoded (objects Decant has no case for become null).
    func propertyListValue() throws -> PropertyListValue {
        switch self {
        case .null: return .null
        case .plist(let value): return value
        case .archived(let data): return Self.plist(try KeyedArchive(data: data).decodeRootTree())
        case .value(let value): return value.propertyListValue
        }
    }

    static func plist(_ value: ArchivedValue) -> PropertyListValue {
        switch value {
        case .null, .object: return .null
        case .string(let text), .url(let text): return .string(text)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .bool(let flag): return .bool(flag)
        case .data(let data): return .data(data)
        case .date(let seconds): return .date(seconds)
        case .uuid(let uuid): return .string(uuid.uuidString)
        case .array(let elements): return .array(elements.map(plist))
        case .dictionary(let entries):
            var dictionary = PropertyListDictionary()
            for entry in entries {
                if case .string(let key) = entry.key { dictionary[key] = plist(entry.value) }
            }
            return .dictionary(dictionary)
        }
    }
}

extension Value {
    /// The value as a property list (for metadata built from Decant values).
    fileprivate var propertyListValue: PropertyListValue {
        switch self {
        case .null, .externalDataReference: return .null
        case .string(let text), .uri(let text): return .string(text)
        case .integer(let number): return .integer(number)
        case .bool(let flag): return .bool(flag)
        case .double(let number): return .real(number)
        case .decimal(let decimal): return .string(decimal.description)
        case .date(let date): return .date(date.timeIntervalSinceReferenceDate)
        case .data(let data), .transformable(let data): return .data(data)
        case .uuid(let uuid): return .string(uuid.uuidString)
        case .composite(let elements):
            return .dictionary(PropertyListDictionary(elements.sorted { $0.key < $1.key }.map { ($0.key, $0.value.propertyListValue) }))
        }
    }
}

extension KeyedArchive {
    /// A slot or metadata value of this archive, without a model: `NSNull` (or nil) as ``BinaryStoreValue/null``,
    /// plain entries with their plist type, any other object as its own archive.
    func storeValue(_ raw: PropertyListValue) throws -> BinaryStoreValue {
        switch try resolve(raw) {
        case nil: return .null
        case .inline(let value): return .plist(value)
        case .object(let object):
            if object.className == "NSNull" { return .null }
            return .archived(try ArchiveSubgraph.archivedData(of: raw, in: self))
        }
    }
}

/// Writes one archive of a binary store: values as Foundation archives them, one shared `NSNull`.
struct BinaryStoreEncoder {
    var writer = KeyedArchiveWriter()
    private var null: KeyedArchiveWriter.Reference?

    mutating func nullObject() -> PropertyListValue {
        if let null { return null.uid }
        let reference = writer.addObject(className: "NSNull", fields: [:])
        null = reference
        return reference.uid
    }

    mutating func encode(_ value: BinaryStoreValue) throws -> PropertyListValue {
        switch value {
        case .null: return nullObject()
        case .plist(let plist): return try encode(plist)
        case .archived(let data): return try ArchiveSubgraph.inline(rootOf: data, into: &writer)
        case .value(let value): return try encode(value)
        }
    }

    private mutating func encode(_ plist: PropertyListValue) throws -> PropertyListValue {
        switch plist {
        case .null: return nullObject()
        case .dictionary(let dictionary):
            var keys: [PropertyListValue] = []
            var values: [PropertyListValue] = []
            for (key, element) in dictionary {
                keys.append(writer.addString(key).uid)
                values.append(try encode(element))
            }
            return writer.addDictionary(keys: keys, values: values, className: "NSMutableDictionary").uid
        case .array(let elements):
            return writer.addArray(try elements.map { try encode($0) }).uid
        case .set(let elements):
            return writer.addArray(try elements.map { try encode($0) }, className: "NSSet").uid
        case .uid:
            throw DecantError(.malformedInput, "a reference outside an archive cannot be stored")
        default:
            return writer.addValue(plist).uid
        }
    }

    /// One Decant value as Foundation archives it.
    private mutating func encode(_ value: Value) throws -> PropertyListValue {
        switch value {
        case .null: return nullObject()
        case .externalDataReference:
            throw DecantError(.unsupportedFormat, "a binary store cannot hold a reference to a missing external file")
        case .string(let text): return writer.addString(text).uid
        case .integer(let number): return writer.addValue(.integer(number)).uid
        case .bool(let flag): return writer.addValue(.bool(flag)).uid
        case .double(let number): return writer.addValue(.real(number)).uid
        case .decimal(let decimal):
            return writer.addObject(
                className: ArchivedDecimal.className, classes: ArchivedDecimal.classes,
                fields: try ArchivedDecimal.fields(of: decimal)
            ).uid
        case .date(let date):
            let time = PropertyListValue.real(date.timeIntervalSinceReferenceDate)
            return writer.addObject(className: "NSDate", fields: ["NS.time": time]).uid
        case .data(let data): return writer.addValue(.data(data)).uid
        case .transformable(let data):
            // Core Data keeps a transformable value's object graph in the node, not the transformer's bytes.
            guard (try? KeyedArchive(data: data)) != nil else { return writer.addValue(.data(data)).uid }
            return try ArchiveSubgraph.inline(rootOf: data, into: &writer)
        case .uuid(let uuid):
            return writer.addObject(
                className: "NSUUID", fields: ["NS.uuidbytes": .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })]
            ).uid
        case .composite:
            // Composites (iOS 17) come from SwiftData, whose stores are SQLite; no binary store holding one has been
            // seen, so its encoding is unknown, and Decant does not guess it.
            throw DecantError(
                .unsupportedFormat,
                "a binary store cannot hold composite attribute values (SwiftData keeps them in SQLite stores); "
                    + "write a SQLite store or JSON instead")
        case .uri(let text):
            let relative = writer.addString(text).uid
            return writer.addObject(
                className: "NSURL", fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": relative]
            ).uid
        }
    }

    /// The archive with `$top = {topKey: root}`.
    func encodedData(root: KeyedArchiveWriter.Reference, topKey: String) throws -> Data {
        guard case .dictionary(var plist) = try writer.propertyList(root: root) else {
            throw DecantError(.internalError, "the archive is not a dictionary")
        }
        plist["$top"] = .dictionary([topKey: root.uid])
        return BinaryPropertyListWriter().write(.dictionary(plist))
    }
}
