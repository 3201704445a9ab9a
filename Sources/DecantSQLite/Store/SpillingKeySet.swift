public import DecantCore
public import Foundation
import GRDB

/// A ``KeySet`` for inputs of any size: up to `bound` keys live in memory; past that they move to a temporary SQLite
/// file, so memory stays bounded however large the input. The file goes with the set.
///
/// ```swift
/// let seen = SpillingKeySet(bound: 500_000)
/// if try !seen.insert(.integer(12), in: "Note") { print("seen before") }
/// ```
public final class SpillingKeySet: KeySet {
    private let bound: Int
    private let directory: URL?
    private var memory = InMemoryKeySet()
    private var spill: SpillDatabase?
    public private(set) var count = 0
    /// Keys moved to the temporary file so far.
    public private(set) var spilledCount = 0
    /// The folder of the temporary file, once the set has spilled; removed with the set.
    public var spillFolder: URL? { spill?.folder }

    /// Creates a set that keeps at most `bound` keys in memory and spills to a folder it makes in `directory` (the
    /// system's temporary directory when nil).
    public init(bound: Int = 4_000_000, in directory: URL? = nil) {
        self.bound = max(1, bound)
        self.directory = directory
    }

    public func insert(_ key: SetKey, in scope: String) throws -> Bool {
        if spill == nil {
            // Nothing on disk yet: one lookup in memory answers.
            guard memory.insert(key, in: scope) else { return false }
            count += 1
            if memory.count > bound { try spillMemory() }
            return true
        }
        if memory.contains(key, in: scope) { return false }
        if spill != nil, try spilled(key, in: scope) { return false }
        _ = memory.insert(key, in: scope)
        count += 1
        if memory.count > bound { try spillMemory() }
        return true
    }

    public func contains(_ key: SetKey, in scope: String) throws -> Bool {
        if memory.contains(key, in: scope) { return true }
        return try spill != nil && spilled(key, in: scope)
    }

    private func spilled(_ key: SetKey, in scope: String) throws -> Bool {
        guard let spill else { return false }
        do {
            return try spill.queue.inDatabase { db in
                let statement = try db.cachedStatement(sql: "SELECT 1 FROM keys WHERE scope = ? AND key = ?")
                return try Int.fetchOne(statement, arguments: [scope, key.databaseValue]) != nil
            }
        } catch {
            throw DecantError(
                .ioError, "cannot look up \(key.text) in the temporary file of a spilling set",
                at: Location(path: spill.folder.path, entity: scope), underlyingError: error)
        }
    }

    private func spillMemory() throws {
        do {
            let spill = try self.spill ?? SpillDatabase(prefix: "decant-keys", in: directory, schema: Self.schema)
            self.spill = spill
            try spill.queue.write { db in
                let statement = try db.makeStatement(sql: "INSERT INTO keys (scope, key) VALUES (?, ?)")
                try memory.forEach { scope, key in try statement.execute(arguments: [scope, key.databaseValue]) }
            }
        } catch {
            throw DecantError(
                .ioError, "cannot spill a set of \(memory.count) keys to a temporary file", underlyingError: error)
        }
        spilledCount += memory.count
        memory = InMemoryKeySet()
    }

    /// `key` has no declared type, so an integer and the text of its digits stay distinct keys.
    private static let schema = "CREATE TABLE keys (scope TEXT, key, PRIMARY KEY (scope, key)) WITHOUT ROWID"
}

@available(*, unavailable)
extension SpillingKeySet: Sendable {}

extension KeySetFactory {
    /// Sets that keep at most `bound` keys each in memory and spill the rest to a temporary file in `directory`
    /// (the system's temporary directory when nil) (``SpillingKeySet``).
    public static func spilling(bound: Int = 4_000_000, in directory: URL? = nil) -> KeySetFactory {
        KeySetFactory { SpillingKeySet(bound: bound, in: directory) }
    }
}

extension SetKey {
    fileprivate var databaseValue: DatabaseValue {
        switch self {
        case .integer(let value): value.databaseValue
        case .text(let value): value.databaseValue
        }
    }

    fileprivate var text: String {
        switch self {
        case .integer(let value): "\(value)"
        case .text(let value): value
        }
    }
}
