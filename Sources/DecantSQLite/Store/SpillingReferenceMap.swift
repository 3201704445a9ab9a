public import DecantCore
public import Foundation
import GRDB

/// A ``ReferenceMap`` for inputs of any size, whose memory stays bounded however large the input: at most `bound`
/// entries live in memory; past that they move to a temporary SQLite file (one transaction), where a look-up finds
/// them through the table's primary key. A Bloom filter of a fixed 4 MiB in front of the file answers most look-ups
/// of a key never spilled (every first listing of a member) without reading it. The file goes with the map.
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
    /// The spilled keys (their texts' hashes), made with the file.
    private var filter: BloomFilter?

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
        // (spilledValue asks the file only when the filter says the key may be there.)
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

    /// Forgets an entry held in memory; a spilled one stays in the file (a walk sees it: its caller checks again).
    public func removeValue(for key: ObjectReference, in scope: String) {
        guard memory[scope]?.removeValue(forKey: key) != nil else { return }
        memoryCount -= 1
        count -= 1
    }

    public func forEach(_ body: (String, ObjectReference, ObjectReference) throws -> Void) throws {
        for (scope, entries) in memory {
            for (key, value) in entries { try body(scope, key, value) }
        }
        guard let spill else { return }
        // Read a page at a time, in key order, so that a walk of millions of entries holds one page in memory.
        var after: (scope: String, key: String)?
        while true {
            let page: [(String, String, String)] = try spill.queue.inDatabase { db in
                let rows: [Row]
                if let after {
                    rows = try Row.fetchAll(
                        db.cachedStatement(
                            sql: "SELECT scope, key, value FROM entries WHERE (scope, key) > (?, ?) "
                                + "ORDER BY scope, key LIMIT 4096"),
                        arguments: [after.scope, after.key])
                } else {
                    rows = try Row.fetchAll(
                        db.cachedStatement(sql: "SELECT scope, key, value FROM entries ORDER BY scope, key LIMIT 4096"))
                }
                return rows.map { ($0[0], $0[1], $0[2]) }
            }
            guard let last = page.last else { return }
            for (scope, keyText, valueText) in page {
                // An entry spilled and then set again in memory is walked once, from memory.
                guard let key = Self.reference(of: keyText), let value = Self.reference(of: valueText),
                    memory[scope]?[key] == nil
                else { continue }
                try body(scope, key, value)
            }
            after = (last.0, last.1)
        }
    }

    /// Moves every entry in memory to the temporary file, making it the first time.
    private func flush() throws {
        let spill = try self.spill ?? SpillDatabase(prefix: "decant-links", in: directory, schema: Self.schema)
        self.spill = spill
        var filter = self.filter ?? BloomFilter(words: (4 << 20) / 8)
        try spill.queue.inDatabase { db in
            try db.inTransaction {
                let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO entries VALUES (?, ?, ?)")
                for (scope, entries) in memory {
                    for (key, value) in entries {
                        let text = Self.text(of: key)
                        filter.insert(Self.hash(scope, text))
                        try insert.execute(arguments: [scope, text, Self.text(of: value)])
                    }
                }
                return .commit
            }
        }
        self.filter = filter
        spilledCount += memoryCount
        memory.removeAll()
        memoryCount = 0
    }

    private func spilledValue(for key: ObjectReference, in scope: String) throws -> ObjectReference? {
        guard let spill, let filter else { return nil }
        let keyText = Self.text(of: key)
        guard filter.mayContain(Self.hash(scope, keyText)) else { return nil }
        let text = try spill.queue.inDatabase { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM entries WHERE scope = ? AND key = ?"),
                arguments: [scope, keyText])
        }
        return text.flatMap(Self.reference(of:))
    }

    /// The filter's hash of a key in a scope (FNV-1a over both texts: stable, and the same for equal texts).
    private static func hash(_ scope: String, _ key: String) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in scope.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        // Spread the high bits the filter's probes read.
        hash ^= hash >> 29
        hash = hash &* 0xBF58_476D_1CE4_E5B9
        hash ^= hash >> 32
        return Int64(bitPattern: hash)
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
