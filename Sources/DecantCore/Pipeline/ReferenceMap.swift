/// Remembers, per scope, one object for an object: for each member a mapping lists on a to-many, the owner that
/// listed it first (``OwedLinks``). Keyed sets have ``KeySet``; this is their map, and grows with the store as they do:
/// `DecantSQLite` adds one that spills to a temporary file past a bound (``KeySetFactory/makeReferenceMap()``).
///
/// ```swift
/// let owners = keySets.makeReferenceMap()
/// try owners.setIfAbsent(track, for: location, in: "track")
/// let owner = try owners.value(for: location, in: "track")   // track
/// ```
public protocol ReferenceMap: AnyObject {
    /// How many keys the map holds, in all scopes.
    var count: Int { get }
    /// The scopes that hold a key.
    var scopes: Set<String> { get }
    /// Sets `value` for `key` in `scope` unless `key` has one there already (the first one stays).
    func setIfAbsent(_ value: ObjectReference, for key: ObjectReference, in scope: String) throws
    /// The value of `key` in `scope`, if set.
    func value(for key: ObjectReference, in scope: String) throws -> ObjectReference?
    /// Forgets `key`'s value in `scope` where that is cheap: always in memory; a map that spilled may keep a spilled
    /// one, so a caller that walks the map (``forEach(_:)``) must check each entry again.
    func removeValue(for key: ObjectReference, in scope: String) throws
    /// Calls `body` with every entry held (scope, key, value), in no particular order.
    func forEach(_ body: (String, ObjectReference, ObjectReference) throws -> Void) throws
}

/// A reference map held wholly in memory: for small inputs and tests.
public final class InMemoryReferenceMap: ReferenceMap {
    private var entries: [String: [ObjectReference: ObjectReference]] = [:]

    /// Creates an empty map.
    public init() {}

    public var count: Int { entries.values.reduce(0) { $0 + $1.count } }
    public var scopes: Set<String> { Set(entries.keys) }

    public func setIfAbsent(_ value: ObjectReference, for key: ObjectReference, in scope: String) {
        if entries[scope]?[key] == nil { entries[scope, default: [:]][key] = value }
    }

    public func value(for key: ObjectReference, in scope: String) -> ObjectReference? { entries[scope]?[key] }

    public func removeValue(for key: ObjectReference, in scope: String) {
        entries[scope]?[key] = nil
        if entries[scope]?.isEmpty == true { entries[scope] = nil }
    }

    public func forEach(_ body: (String, ObjectReference, ObjectReference) throws -> Void) rethrows {
        for (scope, pairs) in entries {
            for (key, value) in pairs { try body(scope, key, value) }
        }
    }
}

@available(*, unavailable)
extension InMemoryReferenceMap: Sendable {}
