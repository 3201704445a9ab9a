/// A property-list dictionary: string keys in insertion order, with lookup by key.
///
/// ```swift
/// var dictionary: PropertyListDictionary = ["name": "Note", "count": 3]
/// dictionary["count"] = .integer(4)
/// print(dictionary.keys)   // ["name", "count"]
/// ```
///
/// Equality and hashing ignore the order of the keys, as property-list dictionaries do.
public struct PropertyListDictionary: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The keys, in insertion order.
    public private(set) var keys: [String] = []
    /// The values, parallel to ``keys``.
    public private(set) var values: [PropertyListValue] = []
    /// Key → position, kept only past ``indexThreshold`` keys; smaller dictionaries (an archived object's handful
    /// of coder keys) are searched in order, which saves a hash table per dictionary.
    private var positions: [String: Int] = [:]
    private static let indexThreshold = 16

    /// Creates an empty dictionary.
    public init() {}

    /// Creates an empty dictionary with room for `minimumCapacity` entries.
    public init(minimumCapacity: Int) {
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }

    /// Creates a dictionary from key-value pairs in order; a repeated key keeps its first position and last value.
    public init(_ pairs: some Sequence<(String, PropertyListValue)>) {
        for (key, value) in pairs { self[key] = value }
    }

    /// Creates a dictionary from a literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        self.init(elements)
    }

    /// The number of entries.
    public var count: Int { keys.count }

    /// Whether the dictionary has no entries.
    public var isEmpty: Bool { keys.isEmpty }

    private func position(of key: String) -> Int? {
        keys.count > Self.indexThreshold ? positions[key] : keys.firstIndex(of: key)
    }

    /// The value for `key`; setting `nil` removes the entry, setting a new key appends it.
    public subscript(key: String) -> PropertyListValue? {
        get { position(of: key).map { values[$0] } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    values[position] = newValue
                } else {
                    keys.remove(at: position)
                    values.remove(at: position)
                    positions =
                        keys.count > Self.indexThreshold
                        ? Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }) : [:]
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
                if keys.count == Self.indexThreshold + 1 {
                    positions = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
                } else if keys.count > Self.indexThreshold {
                    positions[key] = keys.count - 1
                }
            }
        }
    }

    /// Whether `key` has an entry.
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// Iterates over the entries in insertion order.
    public func makeIterator() -> some IteratorProtocol<(key: String, value: PropertyListValue)> {
        zip(keys, values).lazy.map { (key: $0, value: $1) }.makeIterator()
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in zip(lhs.keys, lhs.values) where rhs[key] != value {
            return false
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the entries' own hashes commutatively.
        var combined = 0
        for (key, value) in zip(keys, values) {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(value)
            combined = combined &+ entry.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
