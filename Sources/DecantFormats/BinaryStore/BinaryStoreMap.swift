import DecantCore
import DecantCodecs
import Foundation

/// A binary store's file opened and checked (section 6 of the formats spec): the header, the metadata archive's
/// entries and the `mapData` archive's nodes, slot values still as archive fields. Shared by ``BinaryStoreFile``
/// (without a model) and ``BinaryStoreReader`` (with one).
struct BinaryStoreMap {
    /// One `NSDictionaryMapNode`.
    struct Node {
        var key: Int64
        var entity: String
        /// `NSAttributeValues`, as archive fields.
        var slots: [PropertyListValue]
        /// `NSAttributes` (name → value), the form Core Data's reader accepts when `NSAttributeValues` is absent.
        var named: [(key: String, value: PropertyListValue)]?
        var related: [BinaryStoreFile.Related]
        /// The node's `$objects` index.
        var index: Int
    }

    let path: String
    let header: BinaryStoreHeader
    let metadataArchive: KeyedArchive
    let metadataEntries: [(key: String, value: PropertyListValue)]
    let archive: KeyedArchive
    let nodes: [Node]

    /// Opens a non-empty store file.
    init(data: Data, path: String) throws {
        self.path = path
        let bytes = [UInt8](data)
        let header = try BinaryStoreHeader(bytes, path: path)
        self.header = header
        func slice(_ offset: UInt64, _ length: UInt64) -> Data {
            Data(bytes[Int(offset)..<Int(offset + length)])
        }
        let metaLocation = Location(path: path, offset: Int(header.metadataOffset))
        let metaArchive = try Self.located(metaLocation) {
            try KeyedArchive(data: slice(header.metadataOffset, header.metadataLength), path: path)
        }
        metadataArchive = metaArchive
        guard
            let entries = try Self.located(
                metaLocation, { try metaArchive.stringKeyedEntries(metaArchive.topValue(forKey: "metadata")) })
        else {
            throw DecantError(.malformedInput, "the metadata archive holds no metadata dictionary", at: metaLocation)
        }
        metadataEntries = entries

        let mapLocation = Location(path: path, offset: Int(header.mapDataOffset))
        let mapArchive = try Self.located(mapLocation) {
            try KeyedArchive(data: slice(header.mapDataOffset, header.mapDataLength), path: path)
        }
        archive = mapArchive
        guard
            let mapEntries = try Self.located(
                mapLocation, { try mapArchive.dictionaryEntries(mapArchive.topValue(forKey: "mapData")) })
        else {
            throw DecantError(.malformedInput, "the mapData archive has no mapData dictionary", at: mapLocation)
        }
        var nodes: [Node] = []
        var seen: [Int64: String] = [:]
        for entry in mapEntries {
            let node = try Self.located(mapLocation) { try Self.node(entry, in: mapArchive) }
            guard seen.updateValue(node.entity, forKey: node.key) == nil else {
                throw DecantError(
                    .malformedInput, "primary key \(node.key) is used by two nodes",
                    at: Location(
                        path: path, offset: mapLocation.offset, entity: node.entity, object: "$objects[\(node.index)]"))
            }
            nodes.append(node)
        }
        // Every key a node names is a node of the file (both sides of an inverse pair are stored).
        for node in nodes {
            for related in node.related {
                for key in related.keys where seen[key] == nil {
                    throw DecantError(
                        .malformedInput, "\(related.name) refers to \(key), which is not an object of this store",
                        at: Location(
                            path: path, offset: mapLocation.offset, entity: node.entity,
                            object: "\(node.entity)/p\(node.key)", keyPath: related.name))
                }
            }
        }
        self.nodes = nodes
    }

    /// One map entry: the dictionary key (an NSNumber) and an `NSDictionaryMapNode`.
    private static func node(
        _ entry: (key: PropertyListValue, value: PropertyListValue), in archive: KeyedArchive
    ) throws -> Node {
        guard let object = try archive.object(for: entry.value), object.className != nil else {
            throw DecantError(.malformedInput, "a mapData entry whose value is no node object")
        }
        func fail(_ message: String, key: String? = nil) -> DecantError {
            DecantError(.malformedInput, message, at: Location(object: "$objects[\(object.index)]", keyPath: key))
        }
        guard let entity = try archive.string(forKey: "NSEntityName", in: object) else {
            throw fail("the node has no NSEntityName", key: "NSEntityName")
        }
        // NSPrimaryKey64; Core Data's reader falls back on NSKey (archived reference data) when it is absent.
        guard
            let key = try archive.integer(forKey: "NSPrimaryKey64", in: object)
                ?? archive.integer(forKey: "NSKey", in: object)
        else {
            throw fail("the \(entity) node has no NSPrimaryKey64", key: "NSPrimaryKey64")
        }
        if let mapKey = try archive.integer(entry.key), mapKey != key {
            throw fail(
                "the \(entity) node's NSPrimaryKey64 \(key) differs from its map key \(mapKey)", key: "NSPrimaryKey64")
        }
        var slots: [PropertyListValue] = []
        var named: [(key: String, value: PropertyListValue)]?
        if let values = try archive.elements(forKey: "NSAttributeValues", in: object) {
            slots = values
        } else if let attributes = try archive.stringKeyedEntries(forKey: "NSAttributes", in: object) {
            named = attributes
        } else {
            throw fail(
                "the \(entity) node \(key) has neither NSAttributeValues nor NSAttributes", key: "NSAttributeValues")
        }
        var related: [BinaryStoreFile.Related] = []
        for (name, value) in try archive.stringKeyedEntries(forKey: "NSRelatedNodes", in: object) ?? [] {
            let list = try archive.inField("NSRelatedNodes", of: object) { () throws -> BinaryStoreFile.Related in
                guard let members = try archive.elements(value) else {
                    throw fail("the \(entity) node \(key)'s \(name) is no array of keys", key: "NSRelatedNodes")
                }
                let keys = try members.map { member in
                    guard let memberKey = try archive.integer(member) else {
                        throw fail("the \(entity) node \(key)'s \(name) holds a nil key", key: "NSRelatedNodes")
                    }
                    return memberKey
                }
                let holder = try archive.object(for: value)
                return BinaryStoreFile.Related(
                    name: name, keys: keys, isToMany: holder?.isKind(of: "NSMutableArray") ?? false)
            }
            related.append(list)
        }
        return Node(key: key, entity: entity, slots: slots, named: named, related: related, index: object.index)
    }

    /// Runs `body`, giving a ``DecantError`` without a file the store's path and the archive's offset.
    static func located<T>(_ location: Location, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DecantError {
            var located = error.located(at: location)
            if located.location?.offset == nil { located.location?.offset = location.offset }
            throw located
        }
    }

    /// Runs `body`, placing a ``DecantError`` at `node` (its entity and key) in the map archive.
    func inNode<T>(_ node: Node, keyPath: String? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as DecantError {
            if let entry = error.location?.object { error.message += " (\(entry))" }
            error.location = Location(
                path: path, offset: Int(header.mapDataOffset), entity: node.entity,
                object: "\(node.entity)/p\(node.key)", keyPath: keyPath ?? error.location?.keyPath)
            throw error
        }
    }
}
