import DecantCore
import DecantCodecs
import Foundation

/// Reads one NDJSON line of Decant's own form straight into its entity's batch, from the bytes: the shape
/// ``JSONRecordWriter`` writes (`{"@id":"Note/p12","date":"2024-05-19T18:14:06.84Z","text":"milk",…}`), each
/// value as ``DocumentObjectDecoder`` would read it.
///
/// It takes only what it reads exactly as the tree path does: keys in the layout's order (any may be missing),
/// strings without escapes, values of the attribute's own kinds. For anything else — an escape, a key out of order,
/// twice or unknown, a nested value, a number that does not fit, a value of the wrong kind, malformed text — it
/// gives up on the line, leaving the batch as it was, and the reader parses that line into a tree as before, so
/// results and messages stay the tree path's.
final class DocumentLineDecoder {
    /// One entity as the line decoder uses it (a class: a line borrows it without copying the plan).
    private final class Entry {
        let name: [UInt8]
        let plan: EntityPlan
        /// Per property (attributes, then relationships): its key's UTF-8 bytes.
        let keys: [[UInt8]]
        let types: [AttributeType]
        var sinkSlot: Int?

        init(name: [UInt8], plan: EntityPlan) {
            self.name = name
            self.plan = plan
            let layout = plan.layout
            keys = layout.attributes.map { Array($0.name.utf8) } + layout.relationships.map { Array($0.name.utf8) }
            types = layout.attributes.map(\.type)
        }
    }

    private var plans: ModelPlan
    private var entries: [Entry] = []
    private var last = -1
    /// Lines read so far (for tests: which path lines took).
    private(set) var decodedLines = 0

    init(model: ObjectModel) {
        plans = ModelPlan(model: model)
    }

    /// Decodes `line` (without its line feed) into its entity's batch in `sink`; false, with nothing added, when
    /// the line is not of the form this decoder reads.
    func decode(_ line: UnsafeBufferPointer<UInt8>, into sink: inout BatchSink) -> Bool {
        var cursor = LineCursor(line)
        guard cursor.take(UInt8(ascii: "{")), cursor.takeKey("@id"), cursor.take(UInt8(ascii: "\"")) else {
            return false
        }
        // `Entity/id`: the entity up to the first slash.
        let entityStart = cursor.position
        guard let slash = cursor.plainASCII(until: UInt8(ascii: "/")), slash > entityStart else { return false }
        cursor.position = slash + 1
        let idStart = cursor.position
        guard let idEnd = cursor.plainASCII(until: UInt8(ascii: "\"")), idEnd > idStart else { return false }
        cursor.position = idEnd + 1
        guard let entry = entry(named: UnsafeBufferPointer(rebasing: line[entityStart..<slash])) else { return false }
        let id = Self.recordID(UnsafeBufferPointer(rebasing: line[idStart..<idEnd]))
        let slot: Int
        if let known = entry.sinkSlot {
            slot = known
        } else {
            slot = sink.slot(for: entry.plan.layout.entityName, layout: entry.plan.layout)
            entry.sinkSlot = slot
        }
        return sink.withBatch(slot: slot) { batch in
            let mark = batch.mark
            batch.beginRecord(id: id)
            if decodeMembers(&cursor, entry: entry, into: &batch) {
                batch.endRecord()
                decodedLines += 1
                return true
            }
            batch.rollBack(to: mark)
            return false
        }
    }

    /// Whether `bytes` spell `name`.
    @inline(__always)
    private static func equal(_ name: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == bytes.count else { return false }
        return name.withUnsafeBufferPointer { name in
            name.isEmpty || memcmp(name.baseAddress!, bytes.baseAddress!, name.count) == 0
        }
    }

    /// The entry of the entity named by `name`, or nil when the model has none that may have objects.
    private func entry(named name: UnsafeBufferPointer<UInt8>) -> Entry? {
        if last >= 0, Self.equal(entries[last].name, name) { return entries[last] }
        if let index = entries.firstIndex(where: { Self.equal($0.name, name) }) {
            last = index
            return entries[index]
        }
        let text = String(decoding: name, as: UTF8.self)
        guard let plan = plans.plan(for: text), !plan.entity.isAbstract else { return nil }
        entries.append(Entry(name: Array(name), plan: plan))
        last = entries.count - 1
        return entries[last]
    }

    /// An identity as `RecordID(jsonText:)` reads it.
    private static func recordID(_ bytes: UnsafeBufferPointer<UInt8>) -> RecordID {
        if let key = RecordID.plainPrimaryKey(utf8: bytes) { return .primaryKey(key) }
        return RecordID(jsonText: String(decoding: bytes, as: UTF8.self))
    }

    /// The members after `"@id"`, then the end of the line.
    private func decodeMembers(_ cursor: inout LineCursor, entry: Entry, into batch: inout RecordBatch) -> Bool {
        let attributeCount = entry.types.count
        let width = entry.keys.count
        var next = 0
        func fill(upTo end: Int) {
            while next < end {
                if next < attributeCount {
                    batch.appendNull()
                } else {
                    let index = next - attributeCount
                    if entry.plan.carriedByInverse[index] {
                        batch.appendViaInverse()
                    } else if entry.plan.layout.relationships[index].isToMany {
                        batch.appendReferenceList([])
                    } else {
                        batch.appendReference(nil)
                    }
                }
                next += 1
            }
        }
        while true {
            cursor.skipBlanks()
            guard let byte = cursor.peek() else { return false }
            if byte == UInt8(ascii: "}") {
                cursor.position += 1
                cursor.skipBlanks()
                guard cursor.isAtEnd else { return false }
                fill(upTo: width)
                return true
            }
            guard byte == UInt8(ascii: ",") else { return false }
            cursor.position += 1
            guard let key = cursor.key() else { return false }
            // The key must come later in the layout than the one before: else it is out of order, twice or unknown.
            var found = next
            while found < width, !Self.equal(entry.keys[found], key) { found += 1 }
            guard found < width else { return false }
            let position = found
            fill(upTo: position)
            cursor.skipBlanks()
            if position < attributeCount {
                guard attribute(&cursor, type: entry.types[position], into: &batch) else { return false }
            } else {
                guard relationship(&cursor, index: position - attributeCount, plan: entry.plan, into: &batch) else {
                    return false
                }
            }
            next = position + 1
        }
    }

    /// One attribute value, as `AttributeDecoder(mode: .document)` reads it.
    private func attribute(_ cursor: inout LineCursor, type: AttributeType, into batch: inout RecordBatch) -> Bool {
        guard let byte = cursor.peek() else { return false }
        switch byte {
        case UInt8(ascii: "n"):
            guard cursor.takeWord("null") else { return false }
            batch.appendNull()
            return true
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            guard type == .boolean else { return false }
            if cursor.takeWord("true") {
                batch.appendInteger(1)
            } else if cursor.takeWord("false") {
                batch.appendInteger(0)
            } else {
                return false
            }
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let (number, isInteger) = cursor.number() else { return false }
            switch type {
            case .integer16, .integer32, .integer64:
                guard isInteger, let value = Self.integer(number) else { return false }
                batch.appendInteger(value)
            case .double, .float, .date:
                guard let value = Double(String(decoding: number, as: UTF8.self)) else { return false }
                batch.appendReal(value)
            case .decimal:
                batch.append(CellValue.decimal(String(decoding: number, as: UTF8.self)))
            default:
                return false
            }
            return true
        case UInt8(ascii: "\""):
            guard let text = cursor.string() else { return false }
            switch type {
            case .string, .uri:
                batch.appendText(utf8: UnsafeRawBufferPointer(text))
            case .date:
                if let special = Self.special(text) {
                    batch.appendReal(special)
                } else if case .success(let seconds) = ExactDate.referenceSeconds(
                    isoUTF8: UnsafeRawBufferPointer(text))
                {
                    batch.appendReal(seconds)
                } else {
                    return false
                }
            case .double, .float:
                guard let special = Self.special(text) else { return false }
                batch.appendReal(special)
            case .decimal:
                let string = String(decoding: text, as: UTF8.self)
                guard JSONNumberSyntax.isValidDecimal(string) else { return false }
                batch.append(CellValue.decimal(string))
            case .uuid:
                guard let uuid = UUID(uuidString: String(decoding: text, as: UTF8.self)) else { return false }
                withUnsafeBytes(of: uuid.uuid) { batch.appendBlob(raw: $0) }
            case .binary, .transformable:
                guard let data = Data(base64Encoded: String(decoding: text, as: UTF8.self)) else { return false }
                batch.appendBlob(data)
            default:
                return false
            }
            return true
        default:
            return false
        }
    }

    /// A relationship's value: an object id or null (to-one), an array of object ids (to-many).
    private func relationship(
        _ cursor: inout LineCursor, index: Int, plan: EntityPlan, into batch: inout RecordBatch
    ) -> Bool {
        func reference(_ cursor: inout LineCursor) -> ObjectReference? {
            guard cursor.peek() == UInt8(ascii: "\""), let text = cursor.string(),
                let reference = ObjectReference(jsonText: String(decoding: text, as: UTF8.self)),
                plan.destinations[index].contains(reference.entity)
            else { return nil }
            return reference
        }
        if plan.layout.relationships[index].isToMany {
            guard cursor.take(UInt8(ascii: "[")) else { return false }
            var list: [ObjectReference] = []
            cursor.skipBlanks()
            if !cursor.take(UInt8(ascii: "]")) {
                while true {
                    cursor.skipBlanks()
                    guard let member = reference(&cursor) else { return false }
                    list.append(member)
                    cursor.skipBlanks()
                    if cursor.take(UInt8(ascii: "]")) { break }
                    guard cursor.take(UInt8(ascii: ",")) else { return false }
                }
            }
            batch.appendReferenceList(list)
            return true
        }
        if cursor.takeWord("null") {
            batch.appendReference(nil)
            return true
        }
        guard let member = reference(&cursor) else { return false }
        batch.appendReference(member)
        return true
    }

    /// `NaN`, `Infinity` or `-Infinity`, the strings Decant writes for doubles that are not finite.
    private static func special(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard text.count <= 9, let first = text.first,
            first == UInt8(ascii: "N") || first == UInt8(ascii: "I") || first == UInt8(ascii: "-")
        else { return nil }
        if text.elementsEqual("NaN".utf8) { return .nan }
        if text.elementsEqual("Infinity".utf8) { return .infinity }
        if text.elementsEqual("-Infinity".utf8) { return -.infinity }
        return nil
    }

    /// A JSON integer's value, or nil when it does not fit an Int64.
    static func integer(_ digits: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = digits.first == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in digits.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte - 0x30)
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (sum, overflowed) =
                negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowed else { return nil }
            value = sum
        }
        return value
    }
}

/// A place in one line's bytes, with the few JSON tokens the line decoders read; every reader returns nil or false,
/// without consuming, for anything else.
struct LineCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position == bytes.count }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Skips spaces, tabs and carriage returns.
    mutating func skipBlanks() {
        while position < bytes.count {
            let byte = bytes[position]
            guard byte == 0x20 || byte == 0x09 || byte == 0x0D else { return }
            position += 1
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        skipBlanks()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    mutating func takeWord(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
            memcmp(word.utf8Start, bytes.baseAddress! + position, count) == 0
        else { return false }
        position += count
        return true
    }

    /// `"key":` where the key is `name`.
    mutating func takeKey(_ name: StaticString) -> Bool {
        guard let key = key(), key.count == name.utf8CodeUnitCount,
            memcmp(name.utf8Start, key.baseAddress!, key.count) == 0
        else { return false }
        skipBlanks()
        return true
    }

    /// `"key":` with a key of printable ASCII without escapes.
    mutating func key() -> UnsafeBufferPointer<UInt8>? {
        let start = position
        guard take(UInt8(ascii: "\"")), let end = plainASCII(until: UInt8(ascii: "\"")) else {
            position = start
            return nil
        }
        let key = UnsafeBufferPointer(rebasing: bytes[position..<end])
        position = end + 1
        guard take(UInt8(ascii: ":")) else {
            position = start
            return nil
        }
        return key
    }

    /// Where `stop` is, from here on, when only printable ASCII other than quote and backslash comes before it.
    func plainASCII(until stop: UInt8) -> Int? {
        var index = position
        while index < bytes.count {
            let byte = bytes[index]
            if byte == stop { return index }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// A string without escapes or control characters, in valid UTF-8 (at its opening quote): its bytes.
    mutating func string() -> UnsafeBufferPointer<UInt8>? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        var index = position + 1
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 || byte == UInt8(ascii: "\\") { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let text = UnsafeBufferPointer(rebasing: bytes[position + 1..<index])
        // The scanner's rules (Unicode table 3-7), without making a String of the text to check it.
        guard ascii || UTF8Validation.firstInvalidByte(in: UnsafeRawBufferPointer(text)) == nil else { return nil }
        position = index + 1
        return text
    }

    /// A JSON number of at most `JSONScanner.maximumNumberLength` characters, and whether it is an integer (no
    /// fraction, no exponent).
    mutating func number() -> (UnsafeBufferPointer<UInt8>, Bool)? {
        let start = position
        // What follows must end the value.
        guard
            let (index, isInteger) = JSONNumberSyntax.scan(
                bytes, from: start, maximumLength: JSONScanner.maximumNumberLength)
        else { return nil }
        switch bytes[index] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0D: break
        default: return nil
        }
        position = index
        return (UnsafeBufferPointer(rebasing: bytes[start..<index]), isInteger)
    }
}
