import Foundation

extension RecordBatch {
    /// Appends record `row` of `source` (same layout) cell for cell: the storage class of every value, the
    /// identity and every reference are kept exactly, unlike a round trip through ``Record``.
    mutating func appendRow(_ row: Int, of source: RecordBatch) {
        beginRecord(id: source.id(at: row))
        for column in 0..<source.width {
            let cell = source.cell(row: row, column: column)
            switch cell.kind {
            case .null: appendNull()
            case .integer, .real: append(cell)
            case .text: source.withBytes(of: cell) { appendText(utf8: $0) }
            case .blob: source.withBytes(of: cell) { appendBlob(raw: $0) }
            case .externalDataReference:
                appendExternalDataReference(source.withBytes(of: cell) { String(decoding: $0, as: UTF8.self) })
            case .reference, .externalReference: appendReference(source.reference(of: cell))
            case .referenceList:
                let start = Int(cell.integer)
                appendReferenceList(
                    source.references[start..<start + Int(cell.length)].map { source.reference(of: $0) })
            case .viaInverse: appendViaInverse()
            }
        }
        endRecord()
    }

    /// Appends a record like ``append(_:)-(Record)``, except that a decimal is kept as its exact text rather than
    /// rounded to a Double (a Core Data SQLite store converts the text to its number when it stores it).
    mutating func appendExactly(_ record: Record) {
        beginRecord(id: record.id)
        for (value, attribute) in zip(record.values, layout.attributes) {
            if case .decimal(let decimal) = value, attribute.type == .decimal {
                appendText(decimal.description)
            } else {
                append(value, as: attribute.type)
            }
        }
        for value in record.relationships {
            switch value {
            case .toOne(let reference): appendReference(reference)
            case .toMany(let list): appendReferenceList(list)
            case .viaInverse: appendViaInverse()
            }
        }
        endRecord()
    }
}
