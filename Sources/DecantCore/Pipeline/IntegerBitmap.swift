/// A set of integers held as bits, in chunks of 4,096 consecutive integers made as keys arrive: what a ``KeySet``
/// keeps a store's primary keys in. A SQLite store numbers each entity's objects 1, 2, 3…, so four million of them
/// take 977 chunks, about half a megabyte, where a `Set<Int64>` takes 32 MB or more; look-ups cost a shift and a mask
/// (and a dictionary look-up when the chunk is not the last one used).
///
/// Any integer fits (negative ones too), but sparse keys waste a chunk each: the owner bounds the chunks it lets the
/// bitmap make (`mayGrow`) and keeps the keys whose chunk it refused elsewhere. A key's place is then fixed: its chunk
/// exists (the bitmap answers for it) or it does not (the owner does), since a refused chunk is never made later
/// while the owner's bound stays spent.
///
/// ```swift
/// var keys = IntegerBitmap()
/// keys.insert(42, mayGrow: true)      // true: new
/// keys.contains(42)                   // true
/// keys.contains(1 << 40)              // nil: its chunk does not exist, ask whoever holds the other keys
/// ```
package struct IntegerBitmap {
    /// The chunk's first word in ``words``, by chunk number (the key shifted right by 12).
    @usableFromInline var offsets: [Int64: Int] = [:]
    /// Every chunk's bits, 64 words a chunk.
    @usableFromInline var words: [UInt64] = []
    /// The chunk used last and its offset: consecutive keys nearly always share a chunk.
    @usableFromInline var lastChunk = Int64.min
    @usableFromInline var lastOffset = 0
    /// How many keys the bitmap holds.
    package private(set) var count = 0

    /// An empty bitmap.
    @inlinable
    package init() {}

    /// How many chunks the bitmap has made (512 bytes each).
    @inlinable
    package var chunkCount: Int { offsets.count }

    /// The first word of `chunk` in ``words``, nil when the chunk does not exist.
    @inlinable
    func chunkOffset(_ chunk: Int64) -> Int? {
        chunk == lastChunk ? lastOffset : offsets[chunk]
    }

    /// Whether `key` is in the bitmap; nil when its chunk does not exist (the key is not held here).
    @inlinable
    package func contains(_ key: Int64) -> Bool? {
        guard let offset = chunkOffset(key >> 12) else { return nil }
        let bit = Int(truncatingIfNeeded: key & 4095)
        return words[offset + bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    /// Adds `key`, making its chunk when it does not exist and `mayGrow`; returns whether the key was new, or nil
    /// when its chunk does not exist and may not be made (the key was not added).
    @inlinable
    @discardableResult
    package mutating func insert(_ key: Int64, mayGrow: Bool) -> Bool? {
        let chunk = key >> 12
        let offset: Int
        if let known = chunkOffset(chunk) {
            offset = known
        } else {
            guard mayGrow else { return nil }
            offset = words.count
            words.append(contentsOf: repeatElement(0, count: 64))
            offsets[chunk] = offset
        }
        lastChunk = chunk
        lastOffset = offset
        let bit = Int(truncatingIfNeeded: key & 4095)
        let mask: UInt64 = 1 << UInt64(bit & 63)
        let word = offset + bit >> 6
        guard words[word] & mask == 0 else { return false }
        words[word] |= mask
        count += 1
        return true
    }
}
