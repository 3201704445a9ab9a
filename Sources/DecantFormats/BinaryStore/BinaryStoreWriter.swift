public import DecantCore
import DecantCodecs
public import Foundation

/// Writes a Core Data binary store (`NSBinaryStoreType`, section 6 of the formats spec) with Apple's layout, so
/// that Core Data opens it: the 64-byte header, the `mapData` keyed archive, the `metadata` keyed archive, as
/// ``BinaryStoreFile/encoded()`` writes them.
///
/// Each object is an `NSDictionaryMapNode` keyed by its primary key (store-wide, 1…n in the order written):
/// `NSPrimaryKey64`, `NSEntityName`, `NSAttributeValues` with one slot per property of the entity in Core Data's
/// order (``BinaryStoreSlots``; relationship, transient and fetched-property slots `NSNull`, nil as `NSNull`), and
/// `NSRelatedNodes` (relationship name → `NSArray` of one key for a to-one, `NSMutableArray` for a to-many, both
/// sides of an inverse pair, empty ones left out). Values are archived as Foundation does: strings, `NSNumber`s,
/// `NSDate`, `NSData`, `NSUUID`, `NSURL`, a transformable value's object graph inline (bytes that are no keyed
/// archive as `NSData`); decimals as their text (Decant's choice: its codecs do not read `NSDecimalNumber` yet). The
/// metadata holds the keys a SQLite store's has (`NSStoreType` `Binary`, `NSStoreUUID`, hashes as data, digest,
/// checksum, identifiers, framework version); the header's counter is the highest key.
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
        var keys: [ObjectKey: Int64] = [:]
        for (position, record) in records.enumerated() {
            guard keys.updateValue(Int64(position + 1), forKey: key(record.reference)) == nil else {
                throw DecantError(
                    .malformedInput, "object \(record.reference) was written twice",
                    at: Location(path: displayPath, entity: record.entity, object: "\(record.reference)"))
            }
        }
        var layouts: [String: (layout: RecordLayout, slots: [BinaryStoreSlots.Slot])] = [:]
        for entity in model.entities {
            if let layout = RecordLayout(entity: entity.name, in: model) {
                layouts[entity.name] = (layout, BinaryStoreSlots.slots(of: entity, in: model))
            }
        }
        func target(_ reference: ObjectReference, of record: Record, _ name: String) throws -> Int64 {
            guard let key = keys[key(reference)] else {
                throw DecantError(
                    .malformedInput, "\(name) refers to \(reference), which is not among the objects written",
                    at: Location(path: displayPath, entity: record.entity, object: "\(record.reference)", keyPath: name)
                )
            }
            return key
        }
        // To-many relationships carried by their inverse: gathered from the to-one side.
        var carried: [Int64: [String: [Int64]]] = [:]
        for (position, record) in records.enumerated() {
            guard let layout = layouts[record.entity]?.layout else { continue }
            for (relationship, value) in zip(layout.relationships, record.relationships) {
                guard case .toOne(let reference?) = value, let inverse = relationship.inverseName else { continue }
                carried[try target(reference, of: record, relationship.name), default: [:]][inverse, default: []]
                    .append(Int64(position + 1))
            }
        }
        var nodes: [BinaryStoreFile.Node] = []
        nodes.reserveCapacity(records.count)
        for (position, record) in records.enumerated() {
            let key = Int64(position + 1)
            guard let (layout, slots) = layouts[record.entity] else {
                throw DecantError(
                    .modelMismatch, "the model has no entity \(record.entity)",
                    at: Location(path: displayPath, entity: record.entity))
            }
            var values: [String: Value] = [:]
            for (value, attribute) in zip(record.values, layout.attributes) { values[attribute.name] = value }
            let filled = slots.map { slot -> BinaryStoreValue in
                guard case .attribute(let attribute) = slot, let value = values[attribute.name] else { return .null }
                return value == .null ? .null : .value(value)
            }
            var related: [BinaryStoreFile.Related] = []
            for (relationship, value) in zip(layout.relationships, record.relationships) {
                let members: [Int64]
                switch value {
                case .toOne(let reference):
                    members = try reference.map { [try target($0, of: record, relationship.name)] } ?? []
                case .toMany(let references):
                    members = try references.map { try target($0, of: record, relationship.name) }
                case .viaInverse:
                    members = carried[key]?[relationship.name] ?? []
                }
                related.append(.init(name: relationship.name, keys: members, isToMany: relationship.isToMany))
            }
            nodes.append(BinaryStoreFile.Node(key: key, entity: record.entity, slots: filled, related: related))
        }
        var plist = StoreMetadata.fresh(for: model, frameworkVersion: Self.frameworkVersion, storeUUID: storeUUID).plist
        plist["_NSAutoVacuumLevel"] = nil
        plist["NSStoreType"] = .string("Binary")
        plist["NSStoreUUID"] = .string(storeUUID)
        let metadata = plist.map { BinaryStoreFile.MetadataEntry(key: $0.0, value: .plist($0.1)) }
        let file = BinaryStoreFile(primaryKeyCounter: Int64(records.count), metadata: metadata, nodes: nodes)
        do {
            return try file.encoded()
        } catch var error as DecantError {
            error.location = error.location ?? Location(path: displayPath)
            throw error
        }
    }

    /// The `NSPersistenceFrameworkVersion` written (the XML store's and SQLite writer's).
    static let frameworkVersion = 1344
}

@available(*, unavailable, message: "a writer owns its pending output; use it from one task")
extension BinaryStoreWriter: Sendable {}
