internal import CSQLite
public import DecantCore
public import Foundation
import GRDB

/// A ``KeySet`` for inputs of any size, whose memory stays bounded however large the input:
/// - integer keys that come densely, as a store's primary keys do, are held as bits (``IntegerBitmap``): four
///   million of them in half a megabyte, never spilled; at most 16,384 chunks of 4,096 integers (8 MiB) a set;
/// - other keys (texts, integers the bitmaps do not take) live in memory up to `bound` keys (and 32 bytes of text a
///   key on average); past that they move to a temporary SQLite file, sorted, in one transaction. A Bloom filter of a
///   fixed 4 MiB in front of the file answers most look-ups of a key never seen without reading it.
///
/// Texts compare as Swift's `String`s do (canonically equivalent texts are one key), on disk as in memory: the file
/// holds each text with its hash, and a look-up compares the texts of that hash. The file goes with the set.
///
/// ```swift
/// let seen = SpillingKeySet(bound: 500_000)
/// if try !seen.insert(.integer(12), in: "Note") { print("seen before") }
/// ```
public final class SpillingKeySet: KeySet {
    /// The keys kept in memory by default before spilling (not counting the bitmaps').
    public static let defaultBound = 131_072

    private let bound: Int
    private let textBytesBound: Int
    private let directory: URL?
    private let bitmapChunkLimit: Int
    private let filterWords: Int

    private var scopeNumbers: [String: Int] = [:]
    private var lastScope = ""
    private var lastNumber = -1
    /// Per scope: its dense integers, and the integers and texts kept in memory that have not spilled.
    private var bitmaps: [IntegerBitmap] = []
    private var integers: [Set<Int64>] = []
    private var texts: [Set<String>] = []
    private var bitmapChunks = 0
    private var memoryCount = 0
    private var memoryTextBytes = 0
    private var filter: BloomFilter?
    private var spill: SpillFile?

    public private(set) var count = 0
    /// Keys moved to the temporary file so far.
    public private(set) var spilledCount = 0
    /// The folder of the temporary file, once the set has spilled; removed with the set.
    public var spillFolder: URL? { spill?.database.folder }

    /// Creates a set that keeps at most `bound` keys in memory besides its bitmaps and spills to a folder it makes in
    /// `directory` (the system's temporary directory when nil).
    public convenience init(bound: Int = SpillingKeySet.defaultBound, in directory: URL? = nil) {
        self.init(bound: bound, in: directory, bitmapChunks: 16_384, filterBytes: 4 << 20)
    }

    /// A set as ``init(bound:in:)`` makes, with at most `bitmapChunks` chunks of bits (0: integers are kept as other
    /// keys are) and a Bloom filter of `filterBytes` (rounded to a power of two, at least 8): for tests.
    package init(bound: Int, in directory: URL?, bitmapChunks: Int, filterBytes: Int) {
        self.bound = max(1, bound)
        self.textBytesBound = self.bound.multipliedReportingOverflow(by: 32).overflow ? .max : self.bound * 32
        self.directory = directory
        self.bitmapChunkLimit = max(0, bitmapChunks)
        var words = 1
        while words < filterBytes / 8 { words <<= 1 }
        self.filterWords = words
    }

    private func number(of scope: String, creating: Bool) -> Int? {
        if lastNumber >= 0 && scope == lastScope { return lastNumber }
        let number: Int
        if let known = scopeNumbers[scope] {
            number = known
        } else {
            guard creating else { return nil }
            number = bitmaps.count
            scopeNumbers[scope] = number
            bitmaps.append(IntegerBitmap())
            integers.append([])
            texts.append([])
        }
        lastScope = scope
        lastNumber = number
        return number
    }

    public func insert(_ key: SetKey, in scope: String) throws -> Bool {
        guard let number = number(of: scope, creating: true) else { return false }
        switch key {
        case .integer(let value):
            let chunks = bitmaps[number].chunkCount
            if let new = bitmaps[number].insert(value, mayGrow: bitmapChunks < bitmapChunkLimit) {
                bitmapChunks += bitmaps[number].chunkCount - chunks
                if new { count += 1 }
                return new
            }
            let file: ((Int64) throws -> Bool)? =
                filter == nil ? nil : { try self.spilled($0, in: number, scope: scope) }
            guard try Self.admit(value, to: &integers[number], unlessIn: file) else { return false }
        case .text(let value):
            let file: ((String) throws -> Bool)? =
                filter == nil ? nil : { try self.spilled($0, in: number, scope: scope) }
            guard try Self.admit(value, to: &texts[number], unlessIn: file) else { return false }
            memoryTextBytes += value.utf8.count
        }
        count += 1
        memoryCount += 1
        if memoryCount > bound || memoryTextBytes > textBytesBound { try spillMemory() }
        return true
    }

    /// Adds `value` to `memory` unless it is there or `file` holds it; returns whether it was new. Inserted first
    /// (one hash in the common case, a key never seen), and taken back when the file holds it.
    private static func admit<Key: Hashable>(
        _ value: Key, to memory: inout Set<Key>, unlessIn file: ((Key) throws -> Bool)?
    ) throws -> Bool {
        guard memory.insert(value).inserted else { return false }
        guard let file else { return true }
        let held: Bool
        do { held = try file(value) } catch {
            memory.remove(value)
            throw error
        }
        if held { memory.remove(value) }
        return !held
    }

    public func contains(_ key: SetKey, in scope: String) throws -> Bool {
        guard let number = number(of: scope, creating: false) else { return false }
        switch key {
        case .integer(let value):
            if let held = bitmaps[number].contains(value) { return held }
            if integers[number].contains(value) { return true }
            return try filter != nil && spilled(value, in: number, scope: scope)
        case .text(let value):
            if texts[number].contains(value) { return true }
            return try filter != nil && spilled(value, in: number, scope: scope)
        }
    }

    /// Whether the file holds the integer `value` of scope `number`.
    private func spilled(_ value: Int64, in number: Int, scope: String) throws -> Bool {
        guard let filter, let spill, filter.mayContain(Self.hash(value, in: number)) else { return false }
        do {
            return try spill.contains(value, in: number)
        } catch {
            throw DecantError(
                .ioError, "cannot look up \(value) in the temporary file of a spilling set",
                at: Location(path: spill.database.folder.path, entity: scope), underlyingError: error)
        }
    }

    /// Whether the file holds the text `value` of scope `number`.
    private func spilled(_ value: String, in number: Int, scope: String) throws -> Bool {
        let hash = Self.hash(value, in: number)
        guard let filter, let spill, filter.mayContain(hash) else { return false }
        do {
            return try spill.contains(value, hash: hash, in: number)
        } catch {
            throw DecantError(
                .ioError, "cannot look up \(value) in the temporary file of a spilling set",
                at: Location(path: spill.database.folder.path, entity: scope), underlyingError: error)
        }
    }

    /// Moves every key held in memory (not the bitmaps') to the file, sorted as its index is, in one transaction.
    private func spillMemory() throws {
        var filter = self.filter ?? BloomFilter(words: filterWords)
        do {
            let spill = try self.spill ?? SpillFile(in: directory)
            self.spill = spill
            try spill.write { insertInteger, insertText in
                for number in integers.indices {
                    for value in integers[number].sorted() {
                        try insertInteger(number, value)
                        filter.insert(Self.hash(value, in: number))
                    }
                    let hashed = texts[number].map { (hash: Self.hash($0, in: number), text: $0) }
                    for (hash, text) in hashed.sorted(by: { $0.hash < $1.hash }) {
                        try insertText(number, hash, text)
                        filter.insert(hash)
                    }
                }
            }
        } catch {
            throw DecantError(
                .ioError, "cannot spill a set of \(memoryCount) keys to a temporary file",
                at: Location(path: spill?.database.folder.path), underlyingError: error)
        }
        self.filter = filter
        spilledCount += memoryCount
        memoryCount = 0
        memoryTextBytes = 0
        for number in integers.indices {
            integers[number].removeAll(keepingCapacity: true)
            texts[number].removeAll(keepingCapacity: true)
        }
    }

    /// A text's hash in scope `number`: `Hasher`'s (seeded per process, as the file lives no longer than it), equal
    /// for texts Swift takes as equal.
    private static func hash(_ text: String, in number: Int) -> Int64 {
        var hasher = Hasher()
        hasher.combine(number)
        hasher.combine(text)
        return Int64(hasher.finalize())
    }

    /// An integer's hash in scope `number`, for the filter only (the file looks integers up by value).
    private static func hash(_ value: Int64, in number: Int) -> Int64 {
        // SplitMix64's finalizer: every bit of the key and the scope reaches every bit of the hash.
        var bits = UInt64(bitPattern: value) &+ UInt64(number + 1) &* 0x9E37_79B9_7F4A_7C15
        bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int64(bitPattern: bits ^ (bits >> 31))
    }
}

@available(*, unavailable)
extension SpillingKeySet: Sendable {}

extension KeySetFactory {
    /// Sets that keep dense integer keys as bits and at most `bound` other keys each in memory, spilling the rest to a
    /// temporary file in `directory` (the system's temporary directory when nil) (``SpillingKeySet``).
    /// Its reference maps spill past as many entries (``SpillingReferenceMap``).
    public static func spilling(bound: Int = SpillingKeySet.defaultBound, in directory: URL? = nil) -> KeySetFactory {
        KeySetFactory(
            { SpillingKeySet(bound: bound, in: directory) }, maps: { SpillingReferenceMap(bound: bound, in: directory) })
    }
}

/// A Bloom filter of a fixed size whose every key sets 4 bits of one 64-bit word: a look-up reads one word. At 8
/// bits a key (4 million keys in 4 MiB) about one key never seen in 30 is taken for one that might be there.
struct BloomFilter {
    private var words: [UInt64]

    /// A filter of `words` words, a power of two.
    init(words: Int) {
        self.words = Array(repeating: 0, count: words)
    }

    private func place(_ hash: Int64) -> (word: Int, mask: UInt64) {
        let bits = UInt64(bitPattern: hash)
        var mask: UInt64 = 0
        for probe in 0..<4 { mask |= 1 << ((bits >> UInt64(40 + 6 * probe)) & 63) }
        return (Int(truncatingIfNeeded: bits) & (words.count - 1), mask)
    }

    mutating func insert(_ hash: Int64) {
        let (word, mask) = place(hash)
        words[word] |= mask
    }

    /// False when no key of this hash was inserted; true when one may have been.
    func mayContain(_ hash: Int64) -> Bool {
        let (word, mask) = place(hash)
        return words[word] & mask == mask
    }
}

/// The temporary file of a spilling set: integers by scope and value, texts by scope and hash (``SpillDatabase``),
/// with the statements that write and look them up.
private final class SpillFile {
    let database: SpillDatabase
    private var findInteger: Statement?
    private var findText: Statement?

    init(in directory: URL?) throws {
        database = try SpillDatabase(prefix: "decant-keys", in: directory, schema: Self.schema)
    }

    deinit {
        // Statements are finalized before the connection closes and the folder goes.
        findInteger = nil
        findText = nil
        database.close()
    }

    /// Runs `body` in one transaction with the functions that add an integer (scope, value) and a text (scope, hash,
    /// text); rolls back when it throws.
    func write(
        _ body: (
            _ insertInteger: (Int, Int64) throws -> Void, _ insertText: (Int, Int64, String) throws -> Void
        ) throws -> Void
    ) throws {
        try database.queue.inDatabase { db in
            let integers = try db.makeStatement(sql: "INSERT INTO integers VALUES (?, ?)")
            let texts = try db.makeStatement(sql: "INSERT INTO texts VALUES (?, ?, ?)")
            try db.inTransaction {
                try body(
                    { number, value in
                        let handle = integers.sqliteStatement
                        sqlite3_bind_int64(handle, 1, Int64(number))
                        sqlite3_bind_int64(handle, 2, value)
                        try Self.step(handle, db)
                    },
                    { number, hash, text in
                        let handle = texts.sqliteStatement
                        sqlite3_bind_int64(handle, 1, Int64(number))
                        sqlite3_bind_int64(handle, 2, hash)
                        var text = text
                        try text.withUTF8 { bytes in
                            let start = UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self)
                            sqlite3_bind_text(handle, 3, start, Int32(bytes.count), nil)
                            try Self.step(handle, db)
                        }
                    })
                return .commit
            }
        }
    }

    /// Whether the file holds `value` in scope `number`.
    func contains(_ value: Int64, in number: Int) throws -> Bool {
        try database.queue.inDatabase { db in
            let statement =
                try findInteger ?? db.makeStatement(sql: "SELECT 1 FROM integers WHERE scope = ? AND key = ?")
            findInteger = statement
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            sqlite3_bind_int64(handle, 1, Int64(number))
            sqlite3_bind_int64(handle, 2, value)
            return try Self.next(handle, db)
        }
    }

    /// Whether the file holds a text equal to `text` (as Swift compares texts) under `hash` in scope `number`.
    func contains(_ text: String, hash: Int64, in number: Int) throws -> Bool {
        try database.queue.inDatabase { db in
            let statement =
                try findText ?? db.makeStatement(sql: "SELECT text FROM texts WHERE scope = ? AND hash = ?")
            findText = statement
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            sqlite3_bind_int64(handle, 1, Int64(number))
            sqlite3_bind_int64(handle, 2, hash)
            while try Self.next(handle, db) {
                let count = Int(sqlite3_column_bytes(handle, 0))
                let found = sqlite3_column_text(handle, 0).map {
                    String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                }
                if (found ?? "") == text { return true }
            }
            return false
        }
    }

    /// Steps a statement that returns no row, then resets it.
    private static func step(_ handle: OpaquePointer, _ db: Database) throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw failure(code, db) }
    }

    /// Steps a query: whether it gave a row.
    private static func next(_ handle: OpaquePointer, _ db: Database) throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw failure(code, db)
        }
    }

    private static func failure(_ code: Int32, _ db: Database) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }

    /// Integers and texts apart, so that an integer and the text of its digits stay distinct keys; a text's rows
    /// come in the order of its hash, and the texts of one hash are compared by the caller.
    private static let schema = """
        CREATE TABLE integers (scope INTEGER, key INTEGER, PRIMARY KEY (scope, key)) WITHOUT ROWID;
        CREATE TABLE texts (scope INTEGER, hash INTEGER, text TEXT, PRIMARY KEY (scope, hash, text)) WITHOUT ROWID
        """
}

@available(*, unavailable)
extension SpillFile: Sendable {}
