/// One entry of a keyed archive's `$objects`, with its class resolved.
///
/// ```swift
/// let entity = try archive.object(at: 5)
/// if entity.isKind(of: "NSEntityDescription") { print(entity["NSEntityName"] ?? .null) }
/// ```
///
/// Plain entries (strings, numbers, data written inline in `$objects`) have no class name and no fields;
/// their value is in ``value``.
public struct ArchivedObject: Sendable, Hashable {
    /// The index in `$objects`.
    public var index: Int
    /// The `$classname` of the object's class, or `nil` for a plain entry.
    public var className: String?
    /// The class and its superclasses from `$classes`, most specific first; empty for a plain entry.
    public var classes: [String]
    /// The object's coder keys and values, without `$class`, as written (references stay `.uid`).
    public var fields: PropertyListDictionary
    /// The raw `$objects` entry.
    public var value: PropertyListValue

    /// Creates an object description; ``KeyedArchive/object(at:)`` is the usual way to get one.
    public init(
        index: Int,
        className: String?,
        classes: [String],
        fields: PropertyListDictionary,
        value: PropertyListValue
    ) {
        self.index = index
        self.className = className
        self.classes = classes
        self.fields = fields
        self.value = value
    }

    /// The value stored under the coder key `key`.
    public subscript(key: String) -> PropertyListValue? { fields[key] }

    /// Whether the object's class or one of its superclasses is named `className`.
    public func isKind(of className: String) -> Bool {
        self.className == className || classes.contains(className)
    }
}
