public import Foundation

/// One attribute value as every format exchanges it.
///
/// ```swift
/// let when: Value = .date(Date(timeIntervalSinceReferenceDate: 737057646.84))
/// let text: Value = "milk"          // string literal
/// ```
public enum Value: Sendable, Hashable {
    /// No value (nil).
    case null
    /// Integer 16/32/64.
    case integer(Int64)
    /// Double or Float.
    case double(Double)
    /// Decimal.
    case decimal(Decimal)
    /// String.
    case string(String)
    /// Boolean.
    case bool(Bool)
    /// Date.
    case date(Date)
    /// Binary data.
    case data(Data)
    /// UUID.
    case uuid(UUID)
    /// URI, as its absolute string.
    case uri(String)
    /// A transformable attribute's stored bytes (the transformer's output, usually a keyed archive).
    case transformable(Data)
    /// An externally stored binary value whose file was missing from the input, kept as a reference to that file
    /// name (`--missing-external-data keep`); a Core Data SQLite output stores the same reference.
    case externalDataReference(String)
    /// A composite attribute's value (iOS 17+, SwiftData's Codable structs and enums): its elements' values keyed by
    /// element name, as Core Data hands it out (an `NSDictionary`). An element without a value is absent or null.
    case composite([String: Value])

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    /// Creates a string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates the null value.
    public init(nilLiteral: ()) { self = .null }
}
