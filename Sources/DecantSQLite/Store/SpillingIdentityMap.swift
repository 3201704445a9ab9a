public import DecantCore
import Foundation
import GRDB

/// An ``IdentityMap`` for inputs of any size: up to `bound` entries live in memory; past that they move to a
/// temporary SQLite file, so memory stays bounded however large the input.
///
/// ```swift
/// let identities = SpillingIdentityMap(bound: 500_000)
/// let key = try identities.key(for: "z102", scope: "ZNOTE") { nextKey() }
/// ```
public final class SpillingIdentityMap: IdentityMap {
    private let bound: Int
    private var memory: [Key: Int64] = [:]
    private var spill: SpillDatabase?
    /// Entries moved to the temporary file so far.
    public private(set) var spilledCount = 0

    private struct Key: Hashable {
        var scope: String
        var name: String
    }

    /// Creates a map that keeps at most `bound` entries in memory.
    public init(bound: Int = 500_000) {
        self.bound = max(1, bound)
    }

    /// The key `name` has in `scope`, allocating one with `allocate` the first time it is asked for.
    public func key(for name: String, scope: String, allocate: () -> Int64) throws -> Int64 {
        let key = Key(scope: scope, name: name)
        if let known = memory[key] { return known }
        if let spill {
            let stored: Int64?
            do {
                stored = try spill.queue.read { db in
                    try Int64.fetchOne(
                        db, sql: "SELECT key FROM identities WHERE scope = ? AND name = ?", arguments: [scope, name])
                }
            } catch {
                throw DecantError(
                    .ioError, "cannot look up object \(name) in the identity map's temporary file",
                    at: Location(entity: scope, object: name), underlyingError: error)
            }
            if let stored { return stored }
        }
        let allocated = allocate()
        memory[key] = allocated
        if memory.count > bound { try spillMemory() }
        return allocated
    }

    private func spillMemory() throws {
        do {
            let spill = try self.spill ?? SpillDatabase(prefix: "decant-ids", in: nil, schema: Self.schema)
            self.spill = spill
            try spill.queue.write { db in
                let statement = try db.makeStatement(sql: "INSERT INTO identities (scope, name, key) VALUES (?, ?, ?)")
                for (key, value) in memory { try statement.execute(arguments: [key.scope, key.name, value]) }
            }
            spilledCount += memory.count
            memory.removeAll()
        } catch {
            throw DecantError(.ioError, "cannot spill the identity map to a temporary file", underlyingError: error)
        }
    }

    private static let schema =
        "CREATE TABLE identities (scope TEXT, name TEXT, key INTEGER, PRIMARY KEY (scope, name)) WITHOUT ROWID"
}

@available(*, unavailable)
extension SpillingIdentityMap: Sendable {}
