import DecantCore
import DecantCodecs
import Foundation

/// The text forms of attribute values in delimited text, chosen so that every value reads back bit for bit:
///
/// - integers in decimal; booleans `true`/`false` (read also as `yes`/`no`/`1`/`0` or any integer);
/// - doubles and floats as the shortest text that reads back to the same double (`0.1`, `1e-05`, `inf`, `nan`);
/// - decimals as stored: an integer, the shortest round-trip text of a double, or the exact decimal text;
/// - dates in ISO 8601, UTC, with as many fractional digits as the stored double needs
///   (`2024-05-01T09:30:00.25Z`), and as seconds since 2001-01-01 (Core Data's reference date) outside the years
///   1–9999; read also with a time-zone offset, without seconds, or as a date alone (midnight UTC);
/// - binary and transformable values in base64, a missing externally stored file as `_EXTERNAL_DATA/<name>`;
/// - UUIDs in their canonical upper-case form; strings and URIs as they are.
enum CSVValueText {
    /// What one field holds once parsed for its attribute type.
    enum Parsed: Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
        case externalData(String)

        /// Appends the value to `batch` as a cell.
        func append(to batch: inout RecordBatch) {
            switch self {
            case .null: batch.appendNull()
            case .integer(let value): batch.appendInteger(value)
            case .real(let value): batch.appendReal(value)
            case .text(let text): batch.appendText(text)
            case .blob(let bytes): batch.appendBlob(bytes)
            case .externalData(let name): batch.appendExternalDataReference(name)
            }
        }
    }

    /// The prefix of a reference to a missing externally stored file in a binary column (not base64: `_` is not
    /// in its alphabet).
    static let externalDataPrefix = "_EXTERNAL_DATA/"

    /// Whether a field's text is the value itself, so that a quoted empty field is an empty value rather than nil.
    static func isTextual(_ type: AttributeType) -> Bool {
        switch type {
        case .string, .uri, .binary, .transformable, .undefined, .objectID, .composite: true
        default: false
        }
    }

    /// What a field of `type` should hold, for messages.
    static func expectation(for type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: "an integer"
        case .boolean: "true or false"
        case .double, .float: "a number"
        case .decimal: "a decimal number"
        case .date: "an ISO 8601 date (2024-05-01T09:30:00Z) or seconds since 2001-01-01"
        case .binary, .transformable: "base64"
        case .uuid: "a UUID"
        default: "text"
        }
    }

    // MARK: Parsing

    /// Parses the (non-nil) text of a field for an attribute of `type`; nil when it does not fit the type.
    static func parse(_ text: String, as type: AttributeType) -> Parsed? {
        if isTextual(type) && type != .binary && type != .transformable { return .text(text) }
        let trimmed = trimmingSpaces(text)
        switch type {
        case .integer16, .integer32, .integer64:
            return Int64(trimmed).map(Parsed.integer)
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "yes": return .integer(1)
            case "false", "no": return .integer(0)
            default: return Int64(trimmed).map(Parsed.integer)
            }
        case .double, .float:
            return parseDouble(trimmed).map(Parsed.real)
        case .decimal:
            if let integer = Int64(trimmed) { return .integer(integer) }
            if let real = parseDouble(trimmed), real.description == trimmed { return .real(real) }
            return isDecimalLiteral(trimmed) || trimmed == NumberText.decimalNotANumber ? .text(trimmed) : nil
        case .date:
            return parseDate(trimmed).map(Parsed.real)
        case .binary, .transformable:
            if trimmed.hasPrefix(externalDataPrefix) {
                let name = String(trimmed.dropFirst(externalDataPrefix.count))
                return name.isEmpty || name.contains("/") ? nil : .externalData(name)
            }
            return Data(base64Encoded: trimmed).map { .blob(Array($0)) }
        case .uuid:
            return UUID(uuidString: trimmed).map { uuid in .blob(withUnsafeBytes(of: uuid.uuid) { Array($0) }) }
        default:
            return .text(text)
        }
    }

    /// A double from its text: Swift's grammar (`1.5`, `-2e-3`, `inf`, `nan`), nothing around it.
    static func parseDouble(_ text: String) -> Double? {
        guard let first = text.utf8.first, first != 0x20, first != 0x09 else { return nil }
        return Double(text)
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmingSpaces(_ text: String) -> String {
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last,
            first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09
        else { return text }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    /// `[+-]digits[.digits][(e|E)[+-]digits]`, with at least one digit before or after the point.
    static func isDecimalLiteral(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        if let sign = bytes.first, sign == 0x2B || sign == 0x2D { bytes = bytes.dropFirst() }
        let integer = bytes.prefix { (0x30...0x39).contains($0) }
        bytes = bytes.dropFirst(integer.count)
        var fraction = bytes.prefix(0)
        if bytes.first == 0x2E {
            bytes = bytes.dropFirst()
            fraction = bytes.prefix { (0x30...0x39).contains($0) }
            bytes = bytes.dropFirst(fraction.count)
        }
        guard !integer.isEmpty || !fraction.isEmpty else { return false }
        if let e = bytes.first, e == 0x65 || e == 0x45 {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == 0x2B || sign == 0x2D { bytes = bytes.dropFirst() }
            let exponent = bytes.prefix { (0x30...0x39).contains($0) }
            guard !exponent.isEmpty else { return false }
            bytes = bytes.dropFirst(exponent.count)
        }
        return bytes.isEmpty
    }

    // MARK: Formatting

    /// The text of a non-nil cell of an attribute of `type`, or nil for a nil cell. Text and blob cells are read
    /// from `batch`'s storage.
    static func format(_ cell: RecordBatch.Cell, as type: AttributeType, in batch: RecordBatch) -> String? {
        switch cell.kind {
        case .null, .viaInverse, .referenceList, .reference, .externalReference:
            return nil
        case .integer:
            return formatInteger(cell.integer, as: type)
        case .real:
            return formatReal(Double(bitPattern: UInt64(bitPattern: cell.integer)), as: type)
        case .text:
            return batch.withBytes(of: cell) { String(decoding: $0, as: UTF8.self) }
        case .blob:
            return batch.withBytes(of: cell) { bytes in
                if type == .uuid && bytes.count == 16 {
                    return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)).uuidString
                }
                return Data(bytes).base64EncodedString()
            }
        case .externalDataReference:
            return externalDataPrefix + batch.withBytes(of: cell) { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The text of an integer cell of an attribute of `type`.
    static func formatInteger(_ integer: Int64, as type: AttributeType) -> String {
        switch type {
        case .boolean where integer == 0 || integer == 1: integer == 1 ? "true" : "false"
        case .double, .float: Double(integer).description
        case .date: formatDate(Double(integer))
        default: String(integer)
        }
    }

    /// The text of a real cell of an attribute of `type`.
    static func formatReal(_ real: Double, as type: AttributeType) -> String {
        switch type {
        case .date: formatDate(real)
        case .integer16, .integer32, .integer64, .boolean:
            real.rounded() == real && abs(real) < 9.2e18 ? String(Int64(real)) : real.description
        default: real.description
        }
    }

    /// The canonical text of a parsed value of `type`: what the writer writes for it (for key values, which must
    /// be spelled alike wherever they appear).
    static func canonical(_ value: Parsed, as type: AttributeType) -> String? {
        switch value {
        case .null: return nil
        case .integer(let integer): return formatInteger(integer, as: type)
        case .real(let real): return formatReal(real, as: type)
        case .text(let text): return text
        case .blob(let bytes):
            if type == .uuid && bytes.count == 16 {
                return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)).uuidString }
            }
            return Data(bytes).base64EncodedString()
        case .externalData(let name): return externalDataPrefix + name
        }
    }

    // MARK: Dates

    /// A date as ISO 8601 in UTC that reads back to the same double (``ExactDate``); where there is no such text
    /// (years outside 1–9999, not finite, -0.0), the seconds themselves.
    static func formatDate(_ seconds: Double) -> String {
        ExactDate.text(referenceSeconds: seconds) ?? seconds.description
    }

    /// A date from ISO 8601 (``ExactDate/referenceSeconds(iso:)``) or from seconds since 2001-01-01.
    static func parseDate(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes[4] == 0x2D, bytes[7] == 0x2D else {
            return isDecimalLiteral(text) || ["inf", "-inf", "nan"].contains(text) ? Double(text) : nil
        }
        guard case .success(let seconds) = ExactDate.referenceSeconds(iso: text) else { return nil }
        return seconds
    }
}
