/// A key a ``KeySet`` holds: a primary key, or text (an external object id, a uniqueness constraint's values).
public enum SetKey: Sendable, Hashable {
    /// An integer key.
    case integer(Int64)
    /// A text key.
    case text(String)

    /// The key of an object identity.
    public init(_ id: RecordID) {
        switch id {
        case .primaryKey(let key): self = .integer(key)
        case .external(let name): self = .text(name)
        }
    }
}

/// A set of keys that grows with the input, in named scopes (an entity, a uniqueness constraint): the identities a
/// validator has seen, the objects a migration removes. Inputs of any size use one that spills to disk, as identity
/// maps do (``IdentityMap``).
///
/// ```swift
/// let seen = keySets.makeKeySet()
/// if try !seen.insert(.text("milk"), in: "Tag#0") { print("duplicate") }
/// let known = try seen.contains(ObjectReference(entity: "Note", id: .primaryKey(3)))
/// ```
public protocol KeySet: AnyObject {
    /// How many keys the set holds, in all scopes.
    var count: Int { get }
    /// Adds `key` to `scope`; returns whether it was not there yet.
    func insert(_ key: SetKey, in scope: String) throws -> Bool
    /// Whether `scope` holds `key`.
    func contains(_ key: SetKey, in scope: String) throws -> Bool
}

extension KeySet {
    /// Whether the set holds no key.
    public var isEmpty: Bool { count == 0 }

    /// Adds an object's identity, scoped by its entity; returns whether it was not there yet.
    public func insert(_ reference: ObjectReference) throws -> Bool {
        try insert(SetKey(reference.id), in: reference.entity)
    }

    /// Whether the set holds an object's identity, scoped by its entity.
    public func contains(_ reference: ObjectReference) throws -> Bool {
        try contains(SetKey(reference.id), in: reference.entity)
    }
}

/// A key set held wholly in memory: for small inputs and tests. Integer keys that come densely, as a store's primary
/// keys do, are held as bits (``IntegerBitmap``, at most 16,384 chunks of 4,096 integers: 8 MiB); other integers
/// and texts in hash sets.
public final class InMemoryKeySet: KeySet {
    // Integers and text apart: hashing a bare Int64 or String costs about half of hashing a SetKey. Scopes are
    // numbered, and the last one is remembered: consecutive keys nearly always share their scope (an entity).
    private var scopes: [String: Int] = [:]
    private var names: [String] = []
    private var bitmaps: [IntegerBitmap] = []
    private var integers: [Set<Int64>] = []
    private var texts: [Set<String>] = []
    private var bitmapChunks = 0
    private var lastScope = ""
    private var lastIndex = -1
    public private(set) var count = 0

    /// The chunks of bits a set may make, in all scopes.
    private static let bitmapChunkLimit = 16_384

    /// Creates an empty set.
    public init() {}

    private func index(of scope: String, creating: Bool) -> Int? {
        if lastIndex >= 0 && scope == lastScope { return lastIndex }
        let index: Int
        if let known = scopes[scope] {
            index = known
        } else {
            guard creating else { return nil }
            index = names.count
            scopes[scope] = index
            names.append(scope)
            bitmaps.append(IntegerBitmap())
            integers.append([])
            texts.append([])
        }
        lastScope = scope
        lastIndex = index
        return index
    }

    public func insert(_ key: SetKey, in scope: String) -> Bool {
        guard let index = index(of: scope, creating: true) else { return false }
        let inserted: Bool
        switch key {
        case .integer(let value):
            let chunks = bitmaps[index].chunkCount
            if let new = bitmaps[index].insert(value, mayGrow: bitmapChunks < Self.bitmapChunkLimit) {
                bitmapChunks += bitmaps[index].chunkCount - chunks
                inserted = new
            } else {
                inserted = integers[index].insert(value).inserted
            }
        case .text(let value): inserted = texts[index].insert(value).inserted
        }
        if inserted { count += 1 }
        return inserted
    }

    public func contains(_ key: SetKey, in scope: String) -> Bool {
        guard let index = index(of: scope, creating: false) else { return false }
        switch key {
        case .integer(let value): return bitmaps[index].contains(value) ?? integers[index].contains(value)
        case .text(let value): return texts[index].contains(value)
        }
    }
}

@available(*, unavailable)
extension InMemoryKeySet: Sendable {}

/// Makes the ``KeySet``s a job needs: in memory by default; `DecantSQLite` adds `.spilling(bound:in:)`, whose sets
/// keep dense integers as bits and move other keys to a temporary file past a bound.
///
/// ```swift
/// var validator = ModelValidator(model: v3, collectsRejects: true, keySets: .spilling(bound: 100_000))
/// ```
public struct KeySetFactory: Sendable {
    private let make: @Sendable () -> any KeySet
    private let makeMap: @Sendable () -> any ReferenceMap

    /// A factory calling `make` for every set and `makeMap` for every reference map (in memory by default).
    public init(
        _ make: @escaping @Sendable () -> any KeySet,
        maps makeMap: @escaping @Sendable () -> any ReferenceMap = { InMemoryReferenceMap() }
    ) {
        self.make = make
        self.makeMap = makeMap
    }

    /// A new, empty set.
    public func makeKeySet() -> any KeySet { make() }

    /// A new, empty reference map (``ReferenceMap``), kept as this factory's sets are.
    public func makeReferenceMap() -> any ReferenceMap { makeMap() }

    /// Sets held wholly in memory (``InMemoryKeySet``).
    public static let inMemory = KeySetFactory { InMemoryKeySet() }
}
