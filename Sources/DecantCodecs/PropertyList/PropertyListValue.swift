public import Foundation

/// One value of a property list, binary or XML, including the keyed archiver's UIDs.
///
/// ```swift
/// let value = try PropertyListValue.decode(from: data, path: "VersionInfo.plist")
/// let current = value["NSManagedObjectModel_CurrentVersionName"]?.stringValue
/// ```
public enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// A signed integer (binary property lists store at most 64 significant bits).
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date, as seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    /// Raw bytes.
    case data(Data)
    /// A keyed archiver object reference (`CF$UID` in XML).
    case uid(UInt64)
    /// An ordered array.
    case array([PropertyListValue])
    /// A set, in the order it was stored.
    case set([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary(PropertyListDictionary)
    /// The binary format's null marker (`0x00`); Apple's writers never emit it.
    case null
}

extension PropertyListValue {
    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The integer, if this is an integer, or a real with an exact integer value.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The number as a `Double`, if this is a real or an integer.
    public var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The Boolean, if this is a Boolean or the integer 0 or 1.
    public var boolValue: Bool? {
        switch self {
        case .bool(let value): value
        case .integer(0): false
        case .integer(1): true
        default: nil
        }
    }

    /// The seconds since 2001-01-01, if this is a date.
    public var dateValue: Double? {
        if case .date(let value) = self { value } else { nil }
    }

    /// The bytes, if this is data.
    public var dataValue: Data? {
        if case .data(let value) = self { value } else { nil }
    }

    /// The object index, if this is a UID.
    public var uidValue: UInt64? {
        if case .uid(let value) = self { value } else { nil }
    }

    /// The elements, if this is an array or a set.
    public var arrayValue: [PropertyListValue]? {
        switch self {
        case .array(let elements), .set(let elements): elements
        default: nil
        }
    }

    /// The dictionary, if this is a dictionary.
    public var dictionaryValue: PropertyListDictionary? {
        if case .dictionary(let value) = self { value } else { nil }
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The value for `key`, if this is a dictionary that has it.
    public subscript(key: String) -> PropertyListValue? {
        dictionaryValue?[key]
    }

    /// The element at `index`, if this is an array or set that long.
    public subscript(index: Int) -> PropertyListValue? {
        guard let elements = arrayValue, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// A short name of the value's kind, for error messages ("string", "dictionary", …).
    public var kindName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "Boolean"
        case .date: "date"
        case .data: "data"
        case .uid: "UID"
        case .array: "array"
        case .set: "set"
        case .dictionary: "dictionary"
        case .null: "null"
        }
    }
}

extension PropertyListValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// Creates a string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates a real value.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// Creates a Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates an array value.
    public init(arrayLiteral elements: PropertyListValue...) { self = .array(elements) }
    /// Creates a dictionary value, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        self = .dictionary(PropertyListDictionary(elements))
    }
}
