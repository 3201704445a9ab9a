/// Remembers which primary key each external object id (an XML store's `z102`, a JSON id) received, per scope
/// (a table, an entity hierarchy). Writers need it: a reference may arrive before or after its object.
///
/// ```swift
/// let key = try identities.key(for: "z102", scope: "ZNOTE") { nextKey() }
/// ```
public protocol IdentityMap: AnyObject {
    /// The key `name` has in `scope`, allocating one with `allocate` the first time it is asked for.
    func key(for name: String, scope: String, allocate: () -> Int64) throws -> Int64
}

/// An identity map held wholly in memory: for small inputs and tests. Formats with unbounded inputs use one that
/// spills to disk.
public final class InMemoryIdentityMap: IdentityMap {
    private var keys: [String: [String: Int64]] = [:]

    /// Creates an empty map.
    public init() {}

    public func key(for name: String, scope: String, allocate: () -> Int64) throws -> Int64 {
        if let known = keys[scope]?[name] { return known }
        let allocated = allocate()
        keys[scope, default: [:]][name] = allocated
        return allocated
    }
}

@available(*, unavailable)
extension InMemoryIdentityMap: Sendable {}
