public import DecantCore
public import Foundation

/// Writes a Core Data binary store (`NSBinaryStoreType`, section 6 of the formats spec; **experimental**: no Apple
/// sample was available to check it against).
///
/// The file is the 64-byte header, then the `mapData` keyed archive, then the `metadata` keyed archive. `mapData` is
/// an `NSMutableDictionary` from each object's reference data (an `NSNumber`, the store-wide primary key, 1…n) to an
/// `NSDictionaryMapNode` (superclass `NSStoreMapNode`) with Decant's key names, since Apple's are not known:
/// `NSEntityName`, `NSReferenceData`, `NSVersionNumber` (1) and `NSAttributeValues`, one slot per persistent property
/// in ``RecordLayout`` order (attributes by name, then relationships by name), `$null` for nil. Values are archived as
/// Foundation does: strings, `NSNumber`s, `NSDate`, `NSData`, `NSUUID`, `NSURL`; decimals as their text; a to-one as
/// the destination's reference data, a to-many as an `NSArray` of them (ordered ones in order). The metadata is the
/// model version's hashes and digest, `NSStoreType` `Binary` and `NSStoreUUID`.
///
/// Objects are held in memory until ``finish()``, which writes the store where the writer was told (a job's staging
/// location), or, made with ``init(creating:model:storeUUID:)``, beside the destination and renames it into place.
/// ```swift
/// var writer = try BinaryStoreWriter(creating: url, model: model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class BinaryStoreWriter: RecordWriter {
    /// The model version the store is written for.
    public let model: ObjectModel
    /// The store UUID written into the metadata.
    public let storeUUID: String

    private struct ObjectKey: Hashable {
        var root: String
        var id: RecordID
    }

    /// Where the store is written.
    private let target: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:storeUUID:)``).
    private var lease: DestinationLease?
    private let displayPath: String
    private var records: [Record] = []
    private var finished = false

    /// Starts a store at `url` for `model`; nothing appears there until ``finish()``, which writes it beside `url`
    /// and renames it into place (a ``DestinationLease``).
    public convenience init(creating url: URL, model: ObjectModel, storeUUID: String = UUID().uuidString.uppercased()) throws {
        let lease = try DestinationLease(destination: url)
        try self.init(writingAt: lease.staging, model: model, storeUUID: storeUUID)
        self.lease = lease
    }

    /// Starts a store for `model` to be written at `url` by ``finish()``: where the job tells it (its staging
    /// location), and only there.
    public init(writingAt url: URL, model: ObjectModel, storeUUID: String = UUID().uuidString.uppercased()) throws {
        self.model = model
        self.storeUUID = storeUUID
        self.target = url
        self.displayPath = url.displayPath
    }

    deinit {
        if !finished { try? FileManager.default.removeItem(at: target) }
    }

    public func write(_ batch: RecordBatch) throws {
        for row in 0..<batch.count {
            let record = batch.record(at: row)
            for (value, attribute) in zip(record.values, batch.layout.attributes) {
                if case .externalDataReference = value {
                    throw DecantError(
                        .unsupportedFormat, "a binary store cannot hold a reference to a missing external file",
                        at: Location(
                            path: displayPath, entity: record.entity, object: "\(record.reference)",
                            keyPath: attribute.name))
                }
            }
            records.append(record)
        }
    }

    public func finish() throws {
        guard !finished else { return }
        let file = try render()
        do {
            try file.write(to: target)
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw DecantError(
                .cannotCreateOutput, "cannot write the binary store", at: Location(path: displayPath), underlyingError: error)
        }
        try lease?.commit()
        finished = true
        records = []
    }

    public func abandon() {
        guard !finished else { return }
        finished = true
        records = []
        try? FileManager.default.removeItem(at: target)
    }

    private func key(_ reference: ObjectReference) -> ObjectKey {
        let root = model.entity(named: reference.entity).map { model.root(of: $0).name } ?? reference.entity
        return ObjectKey(root: root, id: reference.id)
    }

    private func render() throws -> Data {
        var keys: [ObjectKey: Int] = [:]
        for (position, record) in records.enumerated() {
            guard keys.updateValue(position + 1, forKey: key(record.reference)) == nil else {
                throw DecantError(
                    .malformedInput, "object \(record.reference) was written twice",
                    at: Location(path: displayPath, entity: record.entity, object: "\(record.reference)"))
            }
        }
        var layouts: [String: RecordLayout] = [:]
        for entity in model.entities { layouts[entity.name] = RecordLayout(entity: entity.name, in: model) }
        func target(_ reference: ObjectReference, of record: Record, _ name: String) throws -> Int {
            guard let key = keys[key(reference)] else {
                throw DecantError(
                    .malformedInput, "\(name) refers to \(reference), which is not among the objects written",
                    at: Location(path: displayPath, entity: record.entity, object: "\(record.reference)", keyPath: name)
                )
            }
            return key
        }
        // To-many relationships carried by their inverse: gathered from the to-one side.
        var carried: [Int: [String: [Int]]] = [:]
        for (position, record) in records.enumerated() {
            guard let layout = layouts[record.entity] else { continue }
            for (relationship, value) in zip(layout.relationships, record.relationships) {
                guard case .toOne(let reference?) = value, let inverse = relationship.inverseName else { continue }
                carried[try target(reference, of: record, relationship.name), default: [:]][inverse, default: []]
                    .append(position + 1)
            }
        }

        var archive = KeyedArchiveWriter()
        let chain = ["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"]
        var nodeKeys: [PropertyListValue] = []
        var nodes: [PropertyListValue] = []
        for (position, record) in records.enumerated() {
            guard let layout = layouts[record.entity] else {
                throw DecantError(
                    .modelMismatch, "the model has no entity \(record.entity)",
                    at: Location(path: displayPath, entity: record.entity))
            }
            var slots: [PropertyListValue] = []
            for (value, attribute) in zip(record.values, layout.attributes) {
                slots.append(Self.archive(value, as: attribute.type, into: &archive))
            }
            for (relationship, value) in zip(layout.relationships, record.relationships) {
                switch value {
                case .toOne(let reference):
                    slots.append(
                        try reference.map {
                            archive.addValue(.integer(Int64(try target($0, of: record, relationship.name)))).uid
                        }
                            ?? KeyedArchiveWriter.null)
                case .toMany(let references):
                    let members = try references.map {
                        archive.addValue(.integer(Int64(try target($0, of: record, relationship.name)))).uid
                    }
                    slots.append(archive.addArray(members).uid)
                case .viaInverse:
                    let members = (carried[position + 1]?[relationship.name] ?? []).map {
                        archive.addValue(.integer(Int64($0))).uid
                    }
                    slots.append(archive.addArray(members).uid)
                }
            }
            let node = archive.addObject(
                className: chain[0], classes: chain,
                fields: [
                    "NSEntityName": archive.addString(record.entity).uid,
                    "NSReferenceData": .integer(Int64(position + 1)),
                    "NSVersionNumber": .integer(1),
                    "NSAttributeValues": archive.addArray(slots).uid,
                ])
            nodeKeys.append(archive.addValue(.integer(Int64(position + 1))).uid)
            nodes.append(node.uid)
        }
        let map = archive.addDictionary(keys: nodeKeys, values: nodes, className: "NSMutableDictionary")
        let mapData = try Self.encode(archive, root: map, topKey: "mapData")

        var meta = KeyedArchiveWriter()
        let hashes = model.entityVersionHashes
        let names = hashes.keys.sorted()
        let hashDictionary = meta.addDictionary(
            keys: names.map { meta.addString($0).uid },
            values: names.map { meta.addValue(.data(hashes[$0] ?? Data())).uid })
        let identifiers = model.versionIdentifiers.map { meta.addString($0).uid }
        let entries: [(String, PropertyListValue)] = [
            ("NSPersistenceFrameworkVersion", meta.addValue(.integer(1344)).uid),
            ("NSStoreModelVersionHashes", hashDictionary.uid),
            ("NSStoreModelVersionHashesDigest", meta.addString(ObjectModel.versionHashesDigest(of: hashes)).uid),
            ("NSStoreModelVersionHashesVersion", meta.addValue(.integer(3)).uid),
            ("NSStoreModelVersionIdentifiers", meta.addArray(identifiers).uid),
            ("NSStoreType", meta.addString("Binary").uid),
            ("NSStoreUUID", meta.addString(storeUUID).uid),
        ]
        let metadata = meta.addDictionary(
            keys: entries.map { meta.addString($0.0).uid }, values: entries.map(\.1), className: "NSMutableDictionary")
        let metadataData = try Self.encode(meta, root: metadata, topKey: "metadata")

        let header = BinaryStoreHeader(
            metadataLength: metadataData.count, mapDataLength: mapData.count, nextPrimaryKey: records.count + 1)
        var file = Data(header.bytes)
        file.append(mapData)
        file.append(metadataData)
        return file
    }

    /// The archive with `$top = {topKey: root}`.
    private static func encode(_ archive: KeyedArchiveWriter, root: KeyedArchiveWriter.Reference, topKey: String) throws
        -> Data
    {
        guard case .dictionary(var plist) = try archive.propertyList(root: root) else {
            throw DecantError(.internalError, "the archive is not a dictionary")
        }
        plist["$top"] = .dictionary([topKey: root.uid])
        return BinaryPropertyListWriter().write(.dictionary(plist))
    }

    /// One attribute value as Foundation archives it; nil as `$null`.
    private static func archive(_ value: Value, as type: AttributeType, into archive: inout KeyedArchiveWriter)
        -> PropertyListValue
    {
        switch value {
        case .null, .externalDataReference: return KeyedArchiveWriter.null
        case .string(let text): return archive.addString(text).uid
        case .integer(let number): return archive.addValue(.integer(number)).uid
        case .bool(let flag): return archive.addValue(.bool(flag)).uid
        case .double(let number): return archive.addValue(.real(number)).uid
        case .decimal(let decimal): return archive.addString(decimal.description).uid
        case .date(let date):
            return archive.addObject(
                className: "NSDate", fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)]
            )
            .uid
        case .data(let data), .transformable(let data): return archive.addValue(.data(data)).uid
        case .uuid(let uuid):
            return archive.addObject(
                className: "NSUUID", fields: ["NS.uuidbytes": .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })]
            ).uid
        case .uri(let text):
            return archive.addObject(
                className: "NSURL",
                fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": archive.addString(text).uid]
            ).uid
        case .composite(let elements):
            // As Core Data hands a composite out: a dictionary keyed by element name.
            let names = elements.keys.sorted()
            let keys = names.map { archive.addString($0).uid }
            let values = names.map { Self.archive(elements[$0] ?? .null, as: .undefined, into: &archive) }
            return archive.addDictionary(keys: keys, values: values).uid
        }
    }
}

@available(*, unavailable, message: "a writer owns its pending output; use it from one task")
extension BinaryStoreWriter: Sendable {}
