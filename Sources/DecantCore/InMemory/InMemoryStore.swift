/// Objects of one model held in memory, per concrete entity: a source and a sink for the record pipeline that
/// needs no file, for programs that build or inspect records and for tests.
///
/// The store keeps the batches it is given as they are (flat cells, see ``RecordBatch``), so every value, a
/// decimal's or a date's included, reads back bit for bit, and identities and relationship values
/// (``RelationshipValue/viaInverse`` too) are kept as written.
///
/// ```swift
/// var store = InMemoryStore(model: notes)
/// try store.insert(Record(entity: "Note", id: .primaryKey(1), values: [.null, "milk", nil]))
/// var reader = store.makeReader()
/// var writer = try JSONFormat().makeWriter(at: out, model: notes, options: FormatOptions())
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
///
/// Filling one from any reader:
/// ```swift
/// var writer = InMemoryStore.Writer(model: reader.model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// let notes = writer.store.records(of: "Note")
/// ```
///
/// ## Topics
/// ### Creating and filling
/// - ``init(model:)``
/// - ``insert(_:)-(Record)``
/// - ``insert(_:)-(RecordBatch)``
/// ### Reading
/// - ``records(of:)``
/// - ``counts``
/// - ``makeReader(batchSize:)``
/// ### The pipeline
/// - ``Reader``
/// - ``Writer``
public struct InMemoryStore: Sendable {
    /// The model every object follows.
    public let model: ObjectModel
    /// The layout of every entity of the model, by name.
    private let layouts: [String: RecordLayout]
    /// The batches of each concrete entity, in the order they were inserted.
    private var batches: [String: [RecordBatch]] = [:]

    /// Creates an empty store for `model`.
    public init(model: ObjectModel) {
        self.model = model
        var layouts: [String: RecordLayout] = [:]
        for entity in model.entities {
            if let layout = RecordLayout(entity: entity.name, in: model) { layouts[entity.name] = layout }
        }
        self.layouts = layouts
    }

    /// The layout records of `entity` follow in this store.
    /// - Throws: `.usage` when the model has no such entity.
    public func layout(of entity: String) throws -> RecordLayout {
        guard let layout = layouts[entity] else {
            throw DecantError(
                .usage, "the model \(model.versionName ?? "(unnamed)") has no entity \(entity)",
                at: Location(path: "<memory>", entity: entity))
        }
        return layout
    }

    /// Adds one object. A decimal value is kept exactly (as its text), every other value as
    /// ``RecordBatch/append(_:as:)`` stores it.
    /// - Throws: `.usage` when the model has no such entity or the record has the wrong number of values.
    public mutating func insert(_ record: Record) throws {
        let layout = try layout(of: record.entity)
        guard record.values.count == layout.attributes.count, record.relationships.count == layout.relationships.count
        else {
            throw DecantError(
                .usage,
                "a \(record.entity) record has \(layout.attributes.count) values and \(layout.relationships.count) "
                    + "relationships, not \(record.values.count) and \(record.relationships.count)",
                at: Location(path: "<memory>", entity: record.entity, object: record.reference.description))
        }
        var list = batches[record.entity] ?? []
        var batch = list.popLast() ?? RecordBatch(layout: layout)
        if batch.count >= 1024 {
            list.append(batch)
            batch = RecordBatch(layout: layout)
        }
        batch.appendExactly(record)
        list.append(batch)
        batches[record.entity] = list
    }

    /// Adds every object of a batch, kept as it is.
    /// - Throws: `.usage` when the batch's layout is not this model's layout of its entity.
    public mutating func insert(_ batch: RecordBatch) throws {
        let name = batch.layout.entityName
        guard try layout(of: name) == batch.layout else {
            throw DecantError(
                .usage,
                "the batch's layout of \(name) is not the one the model \(model.versionName ?? "(unnamed)") gives",
                at: Location(path: "<memory>", entity: name))
        }
        guard batch.count > 0 else { return }
        batches[name, default: []].append(batch)
    }

    /// Every object of the concrete entity `entity` (sub-entities not included), in insertion order.
    public func records(of entity: String) -> [Record] {
        (batches[entity] ?? []).flatMap { batch in (0..<batch.count).map { batch.record(at: $0) } }
    }

    /// The number of objects per concrete entity; entities without objects are left out.
    public var counts: [String: Int] {
        batches.compactMapValues { list in
            let count = list.reduce(0) { $0 + $1.count }
            return count > 0 ? count : nil
        }
    }

    /// Removes every object.
    public mutating func removeAll() {
        batches.removeAll()
    }

    /// The batches of one entity, for the reader.
    func storedBatches(of entity: String) -> [RecordBatch] {
        batches[entity] ?? []
    }

    /// A reader of every object, entity by entity in model order.
    public func makeReader(batchSize: Int = 1024) -> Reader {
        Reader(store: self, batchSize: batchSize)
    }
}
