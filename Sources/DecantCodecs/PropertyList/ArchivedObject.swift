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
    ///
    /// An object read from a binary archive keeps only its fields and its `$class`, and puts the entry back together
    /// when asked: most readers never look at it.
    public var value: PropertyListValue {
        get {
            if let storedValue { return storedValue }
            guard let classEntry else { return .dictionary(fields) }
            var pairs = Array(zip(fields.keys, fields.values))
            pairs.insert(("$class", classEntry.reference), at: min(max(classEntry.position, 0), pairs.count))
            return .dictionary(PropertyListDictionary(pairs))
        }
        set { storedValue = newValue }
    }
    /// The entry as given, when it was given whole.
    private var storedValue: PropertyListValue?
    /// `$class` as written and its position among the entry's keys.
    package var classEntry: ClassEntry?

    /// The `$class` value of an entry and where it stood among the keys.
    package struct ClassEntry: Sendable, Hashable {
        package var reference: PropertyListValue
        package var position: Int

        package init(reference: PropertyListValue, position: Int) {
            self.reference = reference
            self.position = position
        }
    }

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
        self.storedValue = value
        if case .dictionary(let entry) = value, let reference = entry["$class"] {
            self.classEntry = ClassEntry(reference: reference, position: entry.keys.firstIndex(of: "$class") ?? 0)
        }
    }

    /// An object read from a binary archive: its fields and `$class`, the entry rebuilt only when asked for.
    package init(index: Int, className: String, classes: [String], fields: PropertyListDictionary, classEntry: ClassEntry) {
        self.index = index
        self.className = className
        self.classes = classes
        self.fields = fields
        self.classEntry = classEntry
    }

    /// The `$objects` index of the object's class dictionary, when `$class` is a reference.
    package var classIndex: Int? {
        classEntry?.reference.uidValue.map { Int(truncatingIfNeeded: $0) }
    }

    /// The value stored under the coder key `key`.
    public subscript(key: String) -> PropertyListValue? { fields[key] }

    /// Whether the object's class or one of its superclasses is named `className`.
    public func isKind(of className: String) -> Bool {
        self.className == className || classes.contains(className)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.index == rhs.index && lhs.className == rhs.className && lhs.classes == rhs.classes
            && lhs.fields == rhs.fields && lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(className)
        hasher.combine(fields)
    }
}
