import DecantCore
import DecantCodecs
import Foundation

/// The attribute `type` tokens of the XML store and the text form of each value (section 5 of the formats spec).
enum XMLStoreValueText {
    /// The token Core Data writes for an attribute type.
    static func token(for type: AttributeType) -> String? {
        switch type {
        case .string: "string"
        case .integer16: "int16"
        case .integer32: "int32"
        case .integer64: "int64"
        case .decimal: "decimal"
        case .float: "float"
        case .double: "double"
        case .boolean: "bool"
        case .date: "date"
        case .binary: "binary"
        case .transformable: "transformable"
        case .uuid: "uuid"
        case .uri: "uri"
        case .undefined, .objectID, .composite: nil
        }
    }

    /// The attribute type a token stands for.
    static func type(forToken token: String) -> AttributeType? {
        switch token {
        case "string": .string
        case "int16": .integer16
        case "int32": .integer32
        case "int64": .integer64
        case "decimal": .decimal
        case "float": .float
        case "double": .double
        case "bool": .boolean
        case "date": .date
        case "binary": .binary
        case "transformable": .transformable
        case "uuid": .uuid
        case "uri": .uri
        default: nil
        }
    }

    /// Whether a value written with `token` may be read as an attribute of `type`.
    static func token(_ token: String, fits type: AttributeType) -> Bool {
        guard let written = Self.type(forToken: token) else { return false }
        if written == type { return true }
        // Transformable values are the transformer's bytes; a store may call them binary.
        return type == .transformable && written == .binary
    }

    /// Parses the text of a value of `type`; nil when the text is not such a value.
    static func value(_ text: String, as type: AttributeType) -> Value? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch type {
        case .string: return .string(text)
        case .uri: return .uri(trimmed)
        case .integer16, .integer32, .integer64:
            guard let number = Int64(trimmed) else { return nil }
            if type == .integer16 && Int16(exactly: number) == nil { return nil }
            if type == .integer32 && Int32(exactly: number) == nil { return nil }
            return .integer(number)
        case .boolean:
            switch trimmed {
            case "1", "YES", "true": return .bool(true)
            case "0", "NO", "false": return .bool(false)
            default: return nil
            }
        case .float, .double:
            return Double(trimmed).map(Value.double)
        case .decimal:
            if trimmed == NumberText.decimalNotANumber { return .decimal(.nan) }
            guard let decimal = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN
            else { return nil }
            return .decimal(decimal)
        case .date:
            guard let seconds = Double(trimmed), seconds.isFinite else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary, .transformable:
            guard let data = Data(base64Encoded: text.filter { !$0.isWhitespace }) else { return nil }
            return type == .binary ? .data(data) : .transformable(data)
        case .uuid:
            return UUID(uuidString: trimmed).map(Value.uuid)
        case .undefined, .objectID, .composite:
            return nil
        }
    }

    /// The text of a value (not yet XML-escaped; binary values as Apple lays them out), nil for a value the XML
    /// store cannot hold.
    static func text(of value: Value) -> String? {
        switch value {
        case .null, .externalDataReference, .composite: return nil
        case .string(let text), .uri(let text): return text
        case .integer(let number): return String(number)
        case .bool(let flag): return flag ? "1" : "0"
        case .double(let number): return number.description
        case .decimal(let decimal): return decimal.description
        case .date(let date): return realText(date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid): return uuid.uuidString
        case .data(let data), .transformable(let data):
            // Apple: the first 76 base64 characters, a line feed, the entire rest on one line, a line feed.
            let base64 = data.base64EncodedString()
            guard base64.utf8.count > 76 else { return base64 + "\n" }
            let cut = base64.index(base64.startIndex, offsetBy: 76)
            return String(base64[..<cut]) + "\n" + String(base64[cut...]) + "\n"
        }
    }

    /// A double as plain decimal text with many fraction digits, as Core Data writes dates, when that text reads
    /// back as the same double; otherwise Swift's shortest round-trip text.
    static func realText(_ number: Double) -> String {
        guard number.isFinite else { return number.description }
        let long = String(format: "%.20f", number)
        return Double(long) == number ? long : number.description
    }
}
