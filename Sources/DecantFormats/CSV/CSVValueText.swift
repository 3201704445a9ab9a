import DecantCore
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
            return isDecimalLiteral(trimmed) ? .text(trimmed) : nil
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

    /// Seconds from 1970-01-01 to 2001-01-01.
    private static let referenceOffset: Int64 = 978_307_200

    /// A date as ISO 8601 in UTC whose fraction is exactly the shortest decimal text of `seconds` (so it reads back
    /// to the same double); outside the years 1–9999, or not finite, the seconds themselves.
    static func formatDate(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 3e11, let plain = PlainDecimal(seconds) else {
            return seconds.description
        }
        guard var whole = Int64(plain.integerDigits) else { return seconds.description }
        var fraction = plain.fractionDigits
        if plain.isNegative {
            whole = -whole
            if !fraction.isEmpty {
                whole -= 1
                fraction = complement(fraction)
            }
        }
        let unix = whole + referenceOffset
        let days = floorDivide(unix, 86_400)
        let secondOfDay = unix - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        guard (1...9999).contains(year) else { return seconds.description }
        var text =
            pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if !fraction.isEmpty { text += "." + fraction }
        return text + "Z"
    }

    /// A date from ISO 8601 (`YYYY-MM-DD`, then optionally `T` or a space, `HH:MM`, `:SS`, a fraction, and `Z` or an
    /// offset `±HH:MM`, `±HHMM`, `±HH`; UTC without one) or from seconds since 2001-01-01.
    static func parseDate(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes[4] == 0x2D, bytes[7] == 0x2D else {
            return isDecimalLiteral(text) || ["inf", "-inf", "nan"].contains(text) ? Double(text) : nil
        }
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(4), reader.skip(0x2D), let month = reader.number(2), reader.skip(0x2D),
            let day = reader.number(2), (1...12).contains(month), day >= 1, day <= daysInMonth(year, month)
        else { return nil }
        var hour: Int64 = 0
        var minute: Int64 = 0
        var second: Int64 = 0
        var fraction = ""
        var offset: Int64 = 0
        if !reader.atEnd && (reader.skip(0x54) || reader.skip(0x74) || reader.skip(0x20)) {
            guard let h = reader.number(2), reader.skip(0x3A), let m = reader.number(2), h < 24, m < 60 else {
                return nil
            }
            hour = h
            minute = m
            if reader.skip(0x3A) {
                guard let s = reader.number(2), s < 60 else { return nil }
                second = s
                if reader.skip(0x2E) || reader.skip(0x2C) {
                    let digits = reader.digits()
                    guard !digits.isEmpty else { return nil }
                    fraction = digits
                }
            }
            if reader.skip(0x5A) || reader.skip(0x7A) {
                offset = 0
            } else if let sign = reader.peek, sign == 0x2B || sign == 0x2D {
                reader.index += 1
                guard let offsetHours = reader.number(2), offsetHours < 24 else { return nil }
                var offsetMinutes: Int64 = 0
                if reader.skip(0x3A) {
                    guard let value = reader.number(2) else { return nil }
                    offsetMinutes = value
                } else if !reader.atEnd {
                    guard let value = reader.number(2) else { return nil }
                    offsetMinutes = value
                }
                guard offsetMinutes < 60 else { return nil }
                offset = (offsetHours * 3600 + offsetMinutes * 60) * (sign == 0x2D ? -1 : 1)
            }
        }
        guard reader.atEnd else { return nil }
        var whole =
            days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
            - referenceOffset
        while fraction.hasSuffix("0") { fraction.removeLast() }
        guard !fraction.isEmpty else { return Double(whole) }
        // The seconds as exact decimal text, which Double reads with correct rounding: the inverse of formatDate.
        if whole >= 0 { return Double("\(whole).\(fraction)") }
        whole += 1
        return Double("-\(-whole).\(complement(fraction))")
    }

    /// `10^n − digits` as `n` digits without trailing zeros, for `n` = the number of digits (not all zero).
    private static func complement(_ digits: String) -> String {
        var result = Array(digits.utf8)
        guard let last = result.lastIndex(where: { $0 != 0x30 }) else { return digits }
        result[last] = 0x30 + 10 - (result[last] - 0x30)
        for index in result.indices where index < last { result[index] = 0x30 + 9 - (result[index] - 0x30) }
        while result.last == 0x30 { result.removeLast() }
        return String(decoding: result, as: UTF8.self)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day number since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// The shortest round-trip text of a double, written without an exponent: sign, integer digits, fraction digits
/// (no trailing zeros).
struct PlainDecimal {
    var isNegative: Bool
    var integerDigits: String
    var fractionDigits: String

    /// Nil for infinities and NaN.
    init?(_ value: Double) {
        guard value.isFinite else { return nil }
        var text = value.description
        isNegative = text.hasPrefix("-")
        if isNegative { text.removeFirst() }
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let parsed = Int(text[text.index(after: e)...]) else { return nil }
            exponent = parsed
            text = String(text[..<e])
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
        var point = parts[0].count + exponent  // digits before the decimal point
        if point < 0 {
            digits = String(repeating: "0", count: -point) + digits
            point = 0
        }
        if point > digits.count { digits += String(repeating: "0", count: point - digits.count) }
        var integer = String(digits.prefix(point))
        var fraction = String(digits.dropFirst(point))
        while integer.count > 1 && integer.hasPrefix("0") { integer.removeFirst() }
        if integer.isEmpty { integer = "0" }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        integerDigits = integer
        fractionDigits = fraction
    }
}

/// Reads fixed-width digit groups and separators from ASCII bytes.
private struct DigitReader {
    var bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// Exactly `count` digits as a number.
    mutating func number(_ count: Int) -> Int64? {
        guard index + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[index..<index + count] {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        index += count
        return value
    }

    /// Every digit from here on, as text.
    mutating func digits() -> String {
        let start = index
        while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
