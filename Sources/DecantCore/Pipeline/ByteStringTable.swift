/// A hash table from byte strings (ids, keys, reference texts in UTF-8) to values, looked up with the raw bytes of a
/// field or cell: no `Array` or `String` is made per look-up, and keys compare byte for byte (as SQLite compares
/// text), so canonically equal but differently composed texts stay apart.
///
/// Hashing is `Hasher`'s (seeded per process), so crafted input cannot make every key collide. The table grows
/// as keys arrive; callers bound it by ``count``.
///
/// ```swift
/// var folders = ByteStringTable<Int64>()
/// "Work".utf8.withContiguousStorageIfAvailable { folders.insert(7, for: UnsafeRawBufferPointer($0)) }
/// let key = "Work".utf8.withContiguousStorageIfAvailable { folders.value(for: UnsafeRawBufferPointer($0)) }
/// ```
public struct ByteStringTable<Value> {
    /// Per slot: the index of its entry plus one, 0 when empty; a power of two, at least twice ``count``.
    @usableFromInline var slots: [Int32] = Array(repeating: 0, count: 16)
    @usableFromInline var entries: [Entry] = []
    /// The keys' bytes, one after another.
    @usableFromInline var storage: [UInt8] = []

    // Inlinable throughout: readers and writers look up per field, and an unspecialized generic table cost more in
    // metadata look-ups than the hashing.
    @usableFromInline
    struct Entry {
        @usableFromInline var hash: Int
        @usableFromInline var start: Int
        @usableFromInline var length: Int
        @usableFromInline var value: Value

        @inlinable
        init(hash: Int, start: Int, length: Int, value: Value) {
            self.hash = hash
            self.start = start
            self.length = length
            self.value = value
        }
    }

    /// An empty table.
    @inlinable
    public init() {}

    /// The number of keys.
    @inlinable
    public var count: Int { entries.count }

    /// The bytes the keys hold in all.
    @inlinable
    public var keyBytes: Int { storage.count }

    /// Whether the table holds no key.
    @inlinable
    public var isEmpty: Bool { entries.isEmpty }

    /// The value of the key `bytes`, if it is in the table.
    @inlinable
    public func value(for bytes: UnsafeRawBufferPointer) -> Value? {
        guard !entries.isEmpty else { return nil }
        let (_, index) = probe(bytes, hash: Self.hash(bytes))
        return index.map { entries[$0].value }
    }

    /// The slot of the key `bytes` (of hash `hash`), or of the empty slot where it would go, and its entry's index.
    @inlinable
    func probe(_ bytes: UnsafeRawBufferPointer, hash: Int) -> (slot: Int, entry: Int?) {
        let mask = slots.count - 1
        var slot = hash & mask
        return storage.withUnsafeBytes { keys in
            while true {
                let index = Int(slots[slot])
                if index == 0 { return (slot, nil) }
                let entry = entries[index - 1]
                if entry.hash == hash && entry.length == bytes.count
                    && Self.equal(Self.key(entry, in: keys), bytes)
                {
                    return (slot, index - 1)
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Sets the value of the key `bytes` (inserting the key, or replacing its value).
    @inlinable
    public mutating func insert(_ value: Value, for bytes: UnsafeRawBufferPointer) {
        let hash = Self.hash(bytes)
        let (slot, found) = probe(bytes, hash: hash)
        if let found {
            entries[found].value = value
            return
        }
        entries.append(Entry(hash: hash, start: storage.count, length: bytes.count, value: value))
        storage.append(contentsOf: bytes)
        slots[slot] = Int32(entries.count)
        if entries.count * 2 > slots.count { grow() }
    }

    /// Removes every key, keeping the capacity.
    @inlinable
    public mutating func removeAll() {
        for index in slots.indices { slots[index] = 0 }
        entries.removeAll(keepingCapacity: true)
        storage.removeAll(keepingCapacity: true)
    }

    /// Doubles the slots and places every entry again.
    @inlinable
    mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, entry) in entries.enumerated() {
            var slot = entry.hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }

    @inlinable
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }

    @inlinable
    static func key(_ entry: Entry, in keys: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: keys[entry.start..<entry.start + entry.length])
    }

    @inlinable
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var index = 0
        while index + 8 <= a.count {
            guard a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            else { return false }
            index += 8
        }
        while index < a.count {
            guard a[index] == b[index] else { return false }
            index += 1
        }
        return true
    }
}

extension ByteStringTable: Sendable where Value: Sendable {}
extension ByteStringTable.Entry: Sendable where Value: Sendable {}
