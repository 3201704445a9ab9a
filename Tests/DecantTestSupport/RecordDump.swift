public import DecantCore

/// Drains a reader into comparable text, one line per record, per entity: for round-trip tests.
///
/// ``cells(of:)`` renders every cell as it is stored (storage class, a real's bit pattern, text and bytes in
/// hexadecimal), so two dumps are equal only when every value is equal bit for bit; ``records(of:)`` collects
/// ``Record``s, equal when the values are (a date stored as an integer equals the same date stored as a real).
///
/// ```swift
/// var reader = store.makeReader()
/// #expect(try RecordDump.cells(of: &reader) == expected)
/// ```
public enum RecordDump {
    /// Every record's cells, per entity, in the order read.
    public static func cells(of reader: inout some RecordReader) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return result }
        var batch = RecordBatch(layout: layout)
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count {
                result[batch.layout.entityName, default: []].append(line(row: row, of: batch))
            }
        }
        return result
    }

    /// Every record, per entity, in the order read.
    public static func records(of reader: inout some RecordReader) throws -> [String: [Record]] {
        var result: [String: [Record]] = [:]
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return result }
        var batch = RecordBatch(layout: layout)
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count { result[batch.layout.entityName, default: []].append(batch.record(at: row)) }
        }
        return result
    }

    /// One record's identity and cells as text.
    public static func line(row: Int, of batch: RecordBatch) -> String {
        var parts = ["\(batch.layout.entityName)/\(batch.id(at: row))"]
        let names = batch.layout.attributes.map(\.name) + batch.layout.relationships.map(\.name)
        for column in 0..<batch.width {
            let cell = batch.cell(row: row, column: column)
            let text: String
            switch cell.kind {
            case .null: text = "null"
            case .integer: text = "int:\(cell.integer)"
            case .real: text = "real:" + String(UInt64(bitPattern: cell.integer), radix: 16)
            case .text: text = "text:" + hex(batch, cell)
            case .blob: text = "blob:" + hex(batch, cell)
            case .externalDataReference: text = "file:" + hex(batch, cell)
            case .reference, .externalReference: text = "ref:\(batch.reference(of: cell))"
            case .referenceList:
                let start = Int(cell.integer)
                text =
                    "refs:"
                    + batch.references[start..<start + Int(cell.length)]
                    .map { batch.reference(of: $0).description }.joined(separator: ",")
            case .viaInverse: text = "viaInverse"
            }
            parts.append("\(names[column])=\(text)")
        }
        return parts.joined(separator: " ")
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hex(_ batch: RecordBatch, _ cell: RecordBatch.Cell) -> String {
        batch.withBytes(of: cell) { bytes in
            var text = [UInt8]()
            text.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }
}
