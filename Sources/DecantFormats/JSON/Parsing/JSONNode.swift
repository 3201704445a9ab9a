import DecantCore
import DecantCodecs

/// One parsed JSON value with the place it starts at, for messages.
struct JSONNode: Sendable {
    /// The value.
    var value: JSONValue
    /// 1-based line of the value's first character.
    var line: Int
    /// 1-based column (in characters) of the value's first character.
    var column: Int
}

/// A JSON value. Numbers keep their text, so a reader can decide how to read it exactly (an Int64, a Double, a
/// decimal) without a round trip through Double.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// What the value is, for "expected …, found …" messages.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One key of a JSON object, with the place of the key.
struct JSONMember: Sendable {
    var key: String
    var line: Int
    var column: Int
    var node: JSONNode
}

extension JSONValue {
    /// The text of a JSON number, when the value is one.
    var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    /// The string, when the value is one.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The members, when the value is an object.
    var members: [JSONMember]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

/// JSON number syntax (RFC 8259): `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
enum JSONNumberSyntax {
    /// Whether `text` is a decimal attribute's value as JSON holds it: one JSON number, or `NaN`, the text
    /// `NSDecimalNumber.notANumber` has (a SQLite store keeps it as that text, as one of artsy's fixtures does).
    static func isValidDecimal(_ text: some StringProtocol) -> Bool {
        text == NumberText.decimalNotANumber || isValid(text)
    }

    /// Whether `text` is exactly one JSON number.
    static func isValid(_ text: some StringProtocol) -> Bool {
        var bytes = text.utf8.makeIterator()
        var next = bytes.next()
        if next == UInt8(ascii: "-") { next = bytes.next() }
        guard let first = next, isDigit(first) else { return false }
        next = bytes.next()
        if first != UInt8(ascii: "0") {
            while let byte = next, isDigit(byte) { next = bytes.next() }
        }
        if next == UInt8(ascii: ".") {
            next = bytes.next()
            guard let byte = next, isDigit(byte) else { return false }
            while let byte = next, isDigit(byte) { next = bytes.next() }
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            next = bytes.next()
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { next = bytes.next() }
            guard let byte = next, isDigit(byte) else { return false }
            while let byte = next, isDigit(byte) { next = bytes.next() }
        }
        return next == nil
    }

    /// Whether `text` is a JSON number without fraction or exponent.
    static func isInteger(_ text: some StringProtocol) -> Bool {
        isValid(text)
            && !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Where the JSON number that starts at `start` ends, and whether it is an integer (no fraction, no exponent);
    /// nil when the bytes there are no valid number, when it runs to the end of `bytes` (more may follow) or when it
    /// is longer than `maximumLength`. Callers read anything else the slow way, which reports it.
    @inline(__always)
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, maximumLength: Int
    ) -> (end: Int, isInteger: Bool)? {
        var end = start
        func digits() -> Int {
            let first = end
            while end < bytes.count, isDigit(bytes[end]) { end += 1 }
            return end - first
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
        guard end < bytes.count, isDigit(bytes[end]) else { return nil }
        if bytes[end] == UInt8(ascii: "0") {
            end += 1
            if end < bytes.count, isDigit(bytes[end]) { return nil }
        } else {
            _ = digits()
        }
        var isInteger = true
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            isInteger = false
            guard digits() > 0 else { return nil }
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
            end += 1
            isInteger = false
            if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
            guard digits() > 0 else { return nil }
        }
        guard end < bytes.count, end - start <= maximumLength else { return nil }
        return (end, isInteger)
    }
}
