public import Foundation

/// A keyed-archive value decoded into a plain tree: Foundation's value classes become cases, other objects keep
/// their class name and fields. Made by ``KeyedArchive/decodeTree(_:maximumDepth:)`` for small acyclic content
/// such as transformable attribute values.
///
/// ```swift
/// let value = try archive.decodeRootTree()
/// if case .object("MyApp.Note", let fields) = value { … }
/// ```
public indirect enum ArchivedValue: Sendable, Hashable {
    /// nil (UID 0 or a `$null` entry).
    case null
    /// A string (inline, `NSString` or `NSMutableString`).
    case string(String)
    /// An integer NSNumber.
    case integer(Int64)
    /// A floating-point NSNumber.
    case real(Double)
    /// A Boolean NSNumber.
    case bool(Bool)
    /// Bytes (inline, `NSData` or `NSMutableData`).
    case data(Data)
    /// A date, as seconds since 2001-01-01.
    case date(Double)
    /// An `NSUUID`.
    case uuid(UUID)
    /// An `NSURL`, as its absolute string.
    case url(String)
    /// An array, set or ordered set, in archive order.
    case array([ArchivedValue])
    /// A dictionary, in archive order; keys may be any value.
    case dictionary([Entry])
    /// Any other object: its class name and its coder keys in archive order.
    case object(className: String, fields: [Field])

    /// One key-value pair of a ``dictionary(_:)``.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: ArchivedValue
        /// The value.
        public var value: ArchivedValue

        /// Creates an entry.
        public init(key: ArchivedValue, value: ArchivedValue) {
            self.key = key
            self.value = value
        }
    }

    /// One coder key of an ``object(className:fields:)``.
    public struct Field: Sendable, Hashable {
        /// The coder key.
        public var name: String
        /// The decoded value.
        public var value: ArchivedValue

        /// Creates a field.
        public init(name: String, value: ArchivedValue) {
            self.name = name
            self.value = value
        }
    }

    /// The value of field `name`, if this is an object that has it.
    public subscript(field name: String) -> ArchivedValue? {
        guard case .object(_, let fields) = self else { return nil }
        return fields.first { $0.name == name }?.value
    }

    /// The value for the string key `key`, if this is a dictionary that has it.
    public subscript(key: String) -> ArchivedValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.key == .string(key) }?.value
    }
}
