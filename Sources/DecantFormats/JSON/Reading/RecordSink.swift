import DecantCore
import DecantCodecs
import Foundation

/// One attribute value read from JSON, in the storage class it goes into a batch with.
enum CellValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case externalData(String)
    /// The model's default value of an attribute the input does not mention, of the attribute's type.
    case modelDefault(Value, AttributeType)

    /// A decimal's text as a cell that keeps it exactly: an integer when it is one, a real when the text is the
    /// shortest text of a Double (what writers produce from a stored real), else the text itself.
    static func decimal(_ text: String) -> CellValue {
        if JSONNumberSyntax.isInteger(text), let integer = Int64(text), String(integer) == text {
            return .integer(integer)
        }
        if let real = Double(text), real.isFinite, real.description == text { return .real(real) }
        return .text(text)
    }

    /// The value as the text that identifies an object by key (`42`, `Ann`, a UUID in upper case).
    var keyText: String? {
        switch self {
        case .null, .externalData: nil
        case .modelDefault(let value, _):
            switch value {
            case .integer(let integer): String(integer)
            case .double(let real): real.description
            case .string(let text), .uri(let text): text
            case .uuid(let uuid): uuid.uuidString
            default: nil
            }
        case .integer(let value): String(value)
        case .real(let value): value.description
        case .text(let text): text
        case .blob(let data):
            data.count == 16
                ? data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString
                : data.base64EncodedString()
        }
    }
}

/// One object read from JSON, ready to go into a batch.
struct DecodedRecord {
    var entity: String
    var id: RecordID
    var cells: [CellValue]
    var relationships: [RelationshipValue]
    /// Whether nothing can refer to the object (``RecordBatch/beginRecord(anonymous:)``; `id` is external).
    var isAnonymous = false
}

/// Collects records into one batch per entity and hands out batches that are full, then, at the end, the rest.
///
/// Each entity has a slot (in the order its first record came): a reader that knows the slot fills that entity's
/// batch in place with ``withBatch(slot:_:)``. When a batch is full, the partly filled batches of the other
/// hierarchies go out before it: a record usually refers to objects read before it (a nested folder, a tag named
/// earlier), and a store writer resolves a reference to an object it has already written from memory, where one to
/// an object still waiting in the sink must be staged and resolved at the end. Batches of one hierarchy keep their
/// order, since its entities share a table whose keys are given in the order records arrive.
struct BatchSink {
    let batchSize: Int
    /// Per slot: the batch being filled.
    private var pending: [RecordBatch] = []
    /// Per slot: the root entity of its entity's hierarchy.
    private var roots: [String] = []
    private var slots: [String: Int] = [:]
    private var ready: [RecordBatch] = []
    private var readyIndex = 0
    /// The root entity of an entity's hierarchy (the entity itself until the reader knows the model).
    var rootOf: (String) -> String = { $0 }

    init(batchSize: Int) {
        self.batchSize = max(1, batchSize)
    }

    /// Whether a full batch is waiting.
    var hasReady: Bool { readyIndex < ready.count }

    /// The slot of `layout`'s entity.
    mutating func slot(for entity: String, layout: RecordLayout) -> Int {
        if let slot = slots[entity] { return slot }
        pending.append(RecordBatch(layout: layout))
        roots.append(rootOf(entity))
        slots[entity] = pending.count - 1
        return pending.count - 1
    }

    /// Lets `body` append (whole records) to the batch of `slot`; a batch that is full then becomes ready.
    mutating func withBatch<R>(slot: Int, _ body: (inout RecordBatch) throws -> R) rethrows -> R {
        let result = try body(&pending[slot])
        if pending[slot].count >= batchSize {
            for other in pending.indices where other != slot && roots[other] != roots[slot] {
                moveToReady(other)
            }
            moveToReady(slot)
        }
        return result
    }

    /// Moves the batch of `slot` to the ready ones, if it holds records.
    private mutating func moveToReady(_ slot: Int) {
        guard pending[slot].count > 0 else { return }
        let layout = pending[slot].layout
        ready.append(pending[slot])
        pending[slot] = RecordBatch(layout: layout)
    }

    /// Adds a record of `layout`'s entity.
    mutating func append(_ record: DecodedRecord, layout: RecordLayout) {
        withBatch(slot: slot(for: record.entity, layout: layout)) { batch in
            if record.isAnonymous, case .external(let name) = record.id {
                batch.beginRecord(anonymous: name)
            } else {
                batch.beginRecord(id: record.id)
            }
            for cell in record.cells { batch.append(cell) }
            for relationship in record.relationships {
                switch relationship {
                case .toOne(let reference): batch.appendReference(reference)
                case .toMany(let list): batch.appendReferenceList(list)
                case .viaInverse: batch.appendViaInverse()
                }
            }
            batch.endRecord()
        }
    }

    /// Moves every partly filled batch to the ready ones.
    mutating func flush() {
        for slot in pending.indices { moveToReady(slot) }
    }

    /// The next ready batch, if any.
    mutating func popReady() -> RecordBatch? {
        guard readyIndex < ready.count else { return nil }
        let batch = ready[readyIndex]
        readyIndex += 1
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
        return batch
    }
}

extension RecordBatch {
    /// Appends a cell read from JSON.
    mutating func append(_ cell: CellValue) {
        switch cell {
        case .null: appendNull()
        case .integer(let value): appendInteger(value)
        case .real(let value): appendReal(value)
        case .text(let text): appendText(text)
        case .blob(let data): appendBlob(data)
        case .externalData(let name): appendExternalDataReference(name)
        case .modelDefault(let value, let type): append(value, as: type)
        }
    }
}
