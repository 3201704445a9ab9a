public import DecantCore
public import Foundation
import GRDB

/// A ``ReferenceMap`` for inputs of any size, whose memory stays bounded however large the input: at most `bound`
/// entries live in memory; past that they move to a temporary SQLite file (one transaction), where a look-up finds
/// them through the table's primary key. The file goes with the map.
///
/// ```swift
/// let owners = SpillingReferenceMap(bound: 100_000)
/// try owners.setIfAbsent(track, for: location, in: "track")
/// ```
public final class SpillingReferenceMap: ReferenceMap {
    /// The entries kept in memory by default before spilling.
    public static let defaultBound = 131_072

    private let bound: Int
    private let directory: URL?
    private var memory: [String: [ObjectReference: ObjectReference]] = [:]
    private var memoryCount = 0
    private var spill: SpillDatabase?

    public private(set) var count = 0
    public private(set) var scopes: Set<String> = []
    /// Entries moved to the temporary file so far.
    public private(set) var spilledCount = 0
    /// The folder of the temporary file, once the map has spilled; removed with the map.
    public var spillFolder: URL? { spill?.folder }

    /// Creates a map that keeps at most `bound` entries in memory and spills to a folder it makes in `directory`
    /// (the system's temporary directory when nil).
    public init(bound: Int = SpillingReferenceMap.defaultBound, in directory: URL? = nil) {
        self.bound = max(1, bound)
        self.directory = directory
    }

    public func setIfAbsent(_ value: ObjectReference, for key: ObjectReference, in scope: String) throws {
        if memory[scope]?[key] != nil { return }
        if spill != nil, try spilledValue(for: key, in: scope) != nil { return }
        memory[scope, default: [:]][key] = value
        memoryCount += 1
        count += 1
        scopes.insert(scope)
        if memoryCount > bound { try flush() }
    }

    public func value(for key: ObjectReference, in scope: String) throws -> ObjectReference? {
        if let value = memory[scope]?[key] { return value }
        guard spill != nil else { return nil }
        return try spilledValue(for: key, in: scope)
    }

    /// Moves every entry in memory to the temporary file, making it the first time.
    private func flush() throws {
        let spill = try self.spill ?? SpillDatabase(prefix: "decant-links", in: directory, schema: Self.schema)
        self.spill = spill
        try spill.queue.inDatabase { db in
            try db.inTransaction {
                let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO entries VALUES (?, ?, ?)")
                for (scope, entries) in memory {
                    for (key, value) in entries {
                        try insert.execute(arguments: [scope, Self.text(of: key), Self.text(of: value)])
                    }
                }
                return .commit
            }
        }
        spilledCount += memoryCount
        memory.removeAll()
        memoryCount = 0
    }

    private func spilledValue(for key: ObjectReference, in scope: String) throws -> ObjectReference? {
        guard let spill else { return nil }
        let text = try spill.queue.inDatabase { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM entries WHERE scope = ? AND key = ?"),
                arguments: [scope, Self.text(of: key)])
        }
        return text.flatMap(Self.reference(of:))
    }

    private static let schema =
        "CREATE TABLE entries (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (scope, key)) "
        + "WITHOUT ROWID"

    /// A reference as one text: the entity, a separator that tells the kind of id (U+0001 a primary key, U+0002 an
    /// external id), the id. Entity names hold no control characters.
    static func text(of reference: ObjectReference) -> String {
        switch reference.id {
        case .primaryKey(let key): "\(reference.entity)\u{1}\(key)"
        case .external(let name): "\(reference.entity)\u{2}\(name)"
        }
    }

    /// The reference ``text(of:)`` wrote.
    static func reference(of text: String) -> ObjectReference? {
        guard let separator = text.firstIndex(where: { $0 == "\u{1}" || $0 == "\u{2}" }) else { return nil }
        let entity = String(text[..<separator])
        let id = String(text[text.index(after: separator)...])
        if text[separator] == "\u{1}" { return Int64(id).map { ObjectReference(entity: entity, id: .primaryKey($0)) } }
        return ObjectReference(entity: entity, id: .external(id))
    }
}

@available(*, unavailable)
extension SpillingReferenceMap: Sendable {}
