import DecantCore
import Foundation

/// One attribute value read from JSON, in the storage class it goes into a batch with.
enum CellValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case externalData(String)

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
}

/// Collects records into one batch per entity and hands out batches that are full, then, at the end, the rest.
struct BatchSink {
    let batchSize: Int
    private var pending: [String: RecordBatch] = [:]
    /// Entities in the order their first record came, for the final flush.
    private var order: [String] = []
    private var ready: [RecordBatch] = []
    private var readyIndex = 0

    init(batchSize: Int) {
        self.batchSize = max(1, batchSize)
    }

    /// Whether a full batch is waiting.
    var hasReady: Bool { readyIndex < ready.count }

    /// Adds a record of `layout`'s entity.
    mutating func append(_ record: DecodedRecord, layout: RecordLayout) {
        var batch: RecordBatch
        if let existing = pending.removeValue(forKey: record.entity) {
            batch = existing
        } else {
            batch = RecordBatch(layout: layout)
            if !order.contains(record.entity) { order.append(record.entity) }
        }
        batch.beginRecord(id: record.id)
        for cell in record.cells {
            switch cell {
            case .null: batch.appendNull()
            case .integer(let value): batch.appendInteger(value)
            case .real(let value): batch.appendReal(value)
            case .text(let text): batch.appendText(text)
            case .blob(let data): batch.appendBlob(data)
            case .externalData(let name): batch.appendExternalDataReference(name)
            }
        }
        for relationship in record.relationships {
            switch relationship {
            case .toOne(let reference): batch.appendReference(reference)
            case .toMany(let list): batch.appendReferenceList(list)
            case .viaInverse: batch.appendViaInverse()
            }
        }
        batch.endRecord()
        if batch.count >= batchSize {
            ready.append(batch)
        } else {
            pending[record.entity] = batch
        }
    }

    /// Moves every partly filled batch to the ready ones.
    mutating func flush() {
        for name in order {
            if let batch = pending.removeValue(forKey: name), batch.count > 0 { ready.append(batch) }
        }
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
