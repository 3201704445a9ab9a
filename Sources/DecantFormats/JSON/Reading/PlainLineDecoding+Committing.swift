import DecantCore
import DecantCodecs
import Foundation

extension PlainObjectImporter {
    // MARK: Committing

    /// The object `mention` names, a nested one defined and appended (its inverse pointing at `owner`).
    mutating func commit(
        _ mention: ScannedMention, scratch: LineScratch, relationship index: Int, of entity: LineEntity,
        owner: ObjectReference, into sink: inout BatchSink
    ) -> ObjectReference {
        guard let destination = scannedDestination(of: entity, relationship: index) else { return owner }
        let name = destination.name
        switch mention {
        case .key(let key, let found):
            // The entity of the object defined under the key, as resolveMentions found it; else one awaited.
            return ObjectReference(entity: found ?? name, id: .external(key))
        case .nested(let position):
            let object = scratch.nested[position]
            let id: RecordID
            if let key = object.key {
                if let known = object.known { return ObjectReference(entity: known, id: .external(key)) }
                defined[destination.root, default: [:]][ExactKey(key)] = name
                unresolved.removeValue(forKey: ExactKey(destination.root, key))
                id = .external(key)
            } else {
                generated += 1
                id = .external("#\(generated)")
            }
            var values = destination.emptyValues
            if let inverse = entity.plan.inverses[index],
                let inverseIndex = destination.plan.layout.relationshipIndex(inverse.name)
            {
                if !inverse.isToMany {
                    values[inverseIndex] = .toOne(owner)
                } else if !destination.carriedByInverse[inverseIndex] {
                    values[inverseIndex] = .toMany([owner])
                }
            }
            let slot = sinkSlot(of: destination, in: &sink)
            sink.withBatch(slot: slot) { batch in
                batch.beginRecord(id: id)
                Self.append(object.cells, scratch.bytes, to: &batch)
                for value in values { Self.append(value, to: &batch) }
                batch.endRecord()
            }
            return ObjectReference(entity: name, id: id)
        }
    }

    /// A relationship's value when the object gives none.
    static func emptyValue(_ plan: EntityPlan, _ index: Int) -> RelationshipValue {
        if plan.carriedByInverse[index] { return .viaInverse }
        return plan.layout.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
    }

    static func append(_ cells: [ScannedCell], _ bytes: [UInt8], to batch: inout RecordBatch) {
        bytes.withUnsafeBytes { bytes in
            for cell in cells {
                switch cell.kind {
                case .absent, .null: batch.appendNull()
                case .integer: batch.appendInteger(cell.integer)
                case .real: batch.appendReal(cell.real)
                case .text: batch.appendText(utf8: UnsafeRawBufferPointer(rebasing: bytes[cell.start..<cell.end]))
                }
            }
        }
    }

    static func append(_ value: RelationshipValue, to batch: inout RecordBatch) {
        switch value {
        case .toOne(let reference): batch.appendReference(reference)
        case .toMany(let list): batch.appendReferenceList(list)
        case .viaInverse: batch.appendViaInverse()
        }
    }

    // MARK: Values

    /// The key text of a cell read as a key attribute's value (``CellValue/keyText``), nil for null.
    static func keyText(_ cell: ScannedCell, _ bytes: [UInt8]) -> String? {
        switch cell.kind {
        case .absent, .null: nil
        case .integer: String(cell.integer)
        case .real: cell.real.description
        case .text: bytes.withUnsafeBufferPointer { String(decoding: $0[cell.start..<cell.end], as: UTF8.self) }
        }
    }

    /// A JSON integer's value when it fits `type` (the plain range check), else nil.
    static func integer(_ digits: UnsafeBufferPointer<UInt8>, type: AttributeType) -> Int64? {
        guard let value = DocumentLineDecoder.integer(digits) else { return nil }
        switch type {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max) ~= value ? value : nil
        case .integer32: return Int64(Int32.min)...Int64(Int32.max) ~= value ? value : nil
        default: return value
        }
    }

    /// A JSON string (at its opening quote) appended to `bytes` as the scanner reads it: escapes decoded, UTF-8
    /// checked; false, with `bytes` possibly extended, for a control character, a bad escape or an unpaired
    /// surrogate, invalid UTF-8 or a missing closing quote.
    static func string(_ cursor: inout LineCursor, into bytes: inout [UInt8]) -> Bool {
        let source = cursor.bytes
        guard cursor.position < source.count, source[cursor.position] == UInt8(ascii: "\"") else { return false }
        var index = cursor.position + 1
        var ascii = true
        let rawStart = index
        while index < source.count {
            // The run up to a quote, a backslash or a control character, at once.
            var end = index
            while end < source.count {
                let byte = source[end]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                if byte >= 0x80 { ascii = false }
                end += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[index..<end]))
            index = end
            guard index < source.count else { return false }
            let byte = source[index]
            if byte == UInt8(ascii: "\"") {
                // Escapes are ASCII: the raw bytes are valid UTF-8 exactly when the decoded ones are.
                guard ascii
                    || UTF8Validation.firstInvalidByte(
                        in: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: source[rawStart..<index]))) == nil
                else { return false }
                cursor.position = index + 1
                return true
            }
            guard byte == UInt8(ascii: "\\"), index + 1 < source.count else { return false }
            index += 1
            if let simple = JSONEscape.simple(source[index]) {
                bytes.append(simple)
            } else {
                guard source[index] == UInt8(ascii: "u"), let unit = hexUnit(source, at: index + 1) else {
                    return false
                }
                index += 4
                var value = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    guard index + 6 < source.count, source[index + 1] == UInt8(ascii: "\\"),
                        source[index + 2] == UInt8(ascii: "u"), let low = hexUnit(source, at: index + 3),
                        (0xDC00...0xDFFF).contains(low)
                    else { return false }
                    index += 6
                    value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return false
                }
                guard let scalar = Unicode.Scalar(value) else { return false }
                UTF8.encode(scalar) { bytes.append($0) }
            }
            index += 1
        }
        return false
    }

    /// The four hexadecimal digits at `position`, as a UTF-16 unit.
    private static func hexUnit(_ source: UnsafeBufferPointer<UInt8>, at position: Int) -> UInt16? {
        guard position + 4 <= source.count else { return nil }
        var unit: UInt16 = 0
        for byte in source[position..<position + 4] {
            guard let digit = JSONEscape.hexDigit(byte) else { return nil }
            unit = unit << 4 | digit
        }
        return unit
    }
}
