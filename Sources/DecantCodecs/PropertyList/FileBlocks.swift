import DecantCore
package import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A large file read on demand, a block at a time, for readers that hop around it object by object (a binary
/// property list's objects, offset table and shared strings lie in different parts of the file).
///
/// ```swift
/// guard let file = try FileBlocks(opening: url, path: "notes.archive") else { return }  // not a regular file
/// let header = try file.withBlocks { blocks in (0..<8).map { blocks.byte(at: $0) } }
/// ```
///
/// The file is read with `pread` into a few fixed-size blocks (``FileBlockCache``), never mapped: the process
/// holds those blocks, not the file's pages (a mapping's pages count towards the resident size, in units as large
/// as the file cache's folios, 2 MiB here), and a file truncated while it is read makes an error instead of
/// stopping the process with SIGBUS. The size is the one the file had when opened.
///
/// Blocks are 128 KiB, eight to a cache, and each cursor open at a time has a cache of its own (``withBlocks(_:)``):
/// a walk over an archive reads most blocks once, about ten calls per megabyte whatever a call costs on the machine,
/// and the memory is a few caches' (1 MiB each) whatever the file's size. Larger caches would read less often, but
/// two walk the file at once (the structure check and the reader's), and each MiB they take shows in the peak.
package final class FileBlocks: Sendable {
    /// The file's size when it was opened.
    package let size: Int
    /// The file name put into error locations.
    package let path: String?
    private let descriptor: Int32
    private let blockShift: Int
    private let slotCount: Int
    /// The caches cursors share, one cursor each at a time: a cursor takes one free, and gives it back when done.
    private let pool = Mutex(Pool())
    /// The reads from the file by cursors that are done.
    private let readsDone = Atomic<Int>(0)

    /// Caches not in use, and how many were made.
    private struct Pool {
        package var free: [FileBlockCache] = []
        package var made = 0
    }

    /// How many caches of full size there are at most: three cursors may be open at once, and each may walk the
    /// whole file (the structure check on a thread of its own, ``BinaryPropertyList/StructureCheck``, beside the
    /// reader's walk and a look-up nested in it). A fourth cursor at a time makes a small cache of its own.
    private static let pooledCacheCount = 3

    /// Opens the file at `url` for reading, or returns nil when it is not a regular file (a pipe, a device: read
    /// those whole); `path` labels errors. Blocks are `1 << blockShift` bytes, and a cache keeps `slotCount` of them
    /// (128 KiB × 8 by default), or as many as the file has when it has fewer.
    /// - Throws: `.fileNotFound` when there is no such file, `.ioError` when it cannot be opened.
    package init?(opening url: URL, path: String?, blockShift: Int = 17, slotCount: Int = 8) throws {
        precondition((4...24).contains(blockShift) && slotCount >= 2, "blocks of 16 B to 16 MiB, at least two")
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno
            throw DecantError(
                reason == ENOENT ? .fileNotFound : .ioError,
                reason == ENOENT ? "no such file" : "cannot open the file: \(String(cString: strerror(reason)))",
                at: Location(path: path))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
            let size = Int(exactly: status.st_size)
        else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.size = size
        self.path = path
        self.blockShift = blockShift
        // A small file needs no more slots than it has blocks.
        self.slotCount = min(slotCount, max(2, (size >> blockShift) + 1))
    }

    deinit {
        close(descriptor)
    }

    /// The number of reads from the file (`pread` calls, one per block read and one per span read past the cache)
    /// by the cursors that are done, for tests.
    package var reads: Int { readsDone.load(ordering: .relaxed) }

    /// How many of the caches no cursor is using hold blocks, for tests.
    package var freeCachesHoldingBlocks: Int { pool.withLock { $0.free.count(where: \.holdsBlocks) } }

    /// Runs `body` with a block cache over the file, then reports what reading found.
    /// - Throws: what `body` throws; else `.malformedInput` when the file turned out shorter than when it was opened
    ///   (truncated meanwhile: `body` then saw zeros past its end), `.ioError` when a read failed.
    ///
    /// Each of the first three cursors open at a time has a whole cache of its own, from the few the file keeps
    /// (made on first use): a walk over the file never shares its blocks, nor gets fewer than the others (a walk
    /// that had two blocks read one anew for nearly every object).
    package func withBlocks<T>(_ body: (FileBlockCache.Reader) throws -> T) throws -> T {
        let pooled = pool.withLock { pool -> FileBlockCache? in
            if let cache = pool.free.popLast() { return cache }
            guard pool.made < Self.pooledCacheCount else { return nil }
            pool.made += 1
            return FileBlockCache(descriptor: descriptor, size: size, blockShift: blockShift, slotCount: slotCount)
        }
        // A fourth cursor at a time is a nested look-up of an object or two: two small blocks do, freed when done.
        let cache =
            pooled
            ?? FileBlockCache(descriptor: descriptor, size: size, blockShift: min(blockShift, 16), slotCount: 2)
        defer {
            cache.clearProblem()
            readsDone.add(cache.takeReads(), ordering: .relaxed)
            if let pooled {
                pool.withLock { pool in
                    pool.free.append(pooled)
                    // Nothing reads the file now: the next cursor takes this cache, and the others give their
                    // blocks' memory back (the structure check's, once it is done, is not held while records are
                    // written).
                    guard pool.free.count == pool.made else { return }
                    for cache in pool.free.dropLast() { cache.releaseBlocks() }
                }
            }
        }
        let result: T
        do {
            result = try withExtendedLifetime(cache) { try body(cache.reader) }
        } catch {
            // What `body` made of the zeros it read past a problem is not the story: the problem is.
            try cache.problem.map { throw problemError($0) }
            throw error
        }
        try cache.problem.map { throw problemError($0) }
        return result
    }

    private func problemError(_ problem: FileBlockCache.Problem) -> DecantError {
        switch problem {
        case .shortRead(let offset):
            DecantError(
                .malformedInput,
                "the file ends at byte \(offset), before the \(size) bytes it had when opened (truncated while read)",
                at: Location(path: path, offset: offset))
        case .readFailed(let offset, let code):
            DecantError(
                .ioError, "cannot read the file: \(String(cString: strerror(code)))",
                at: Location(path: path, offset: offset))
        }
    }

    /// The whole file, for formats that are not read a block at a time.
    /// - Throws: as ``withBlocks(_:)``.
    package func wholeFile() throws -> Data {
        var data = Data(count: size)
        let problem = data.withUnsafeMutableBytes { raw in
            raw.baseAddress.flatMap { Self.read(descriptor, into: $0, count: size, at: 0) }
        }
        try problem.map { throw problemError($0) }
        return data
    }

    /// Reads `count` bytes at `offset` (all within `size`) into `buffer`; returns nil or what went wrong.
    package static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int
    ) -> FileBlockCache.Problem? {
        var done = 0
        while done < count {
            let result = pread(descriptor, buffer + done, count - done, off_t(offset + done))
            if result < 0 {
                if errno == EINTR { continue }
                buffer.advanced(by: done).initializeMemory(as: UInt8.self, repeating: 0, count: count - done)
                return .readFailed(offset: offset + done, code: errno)
            }
            if result == 0 {
                buffer.advanced(by: done).initializeMemory(as: UInt8.self, repeating: 0, count: count - done)
                return .shortRead(offset: offset + done)
            }
            done += result
        }
        return nil
    }
}

/// A few blocks of a ``FileBlocks`` file, replaced in turn (a block read since it was last passed over stays).
/// One cursor uses a cache at a time, through its ``reader``.
///
/// Reads never fail: past a problem (the file truncated while read, a failed read) they return zeros and the cache
/// remembers the first problem, which ``FileBlocks/withBlocks(_:)`` throws once the cursor is done.
///
/// `@unchecked Sendable`: the cache owns its memory outright, and ``FileBlocks`` hands it to one cursor at a time
/// (a cache in use is out of the file's pool). Its state lives behind one pointer, so the ``Reader`` a cursor copies
/// around is a plain value (no reference counting, no exclusivity checks on each byte).
package final class FileBlockCache: @unchecked Sendable {
    /// What went wrong while reading.
    package enum Problem: Equatable {
        case shortRead(offset: Int)
        case readFailed(offset: Int, code: Int32)
    }

    /// The cache's state; ``Reader`` works on it.
    package struct State {
        package let descriptor: Int32
        package let size: Int
        package let blockShift: Int
        package let slotCount: Int
        /// `slotCount` blocks of `1 << blockShift` bytes.
        package let storage: UnsafeMutableRawPointer
        /// Per block of the file, the slot holding it (-1: none).
        package let slotOfBlock: UnsafeMutablePointer<Int32>
        package let blockCount: Int
        /// Per slot, the block it holds (-1: none) and whether it was used since the hand last passed it.
        package let blockOfSlot: UnsafeMutablePointer<Int>
        package let used: UnsafeMutablePointer<Bool>
        package var hand = 0
        package var problem: Problem?
        /// Whether a slot was filled since the memory was last given back.
        package var holdsBlocks = false
        /// The reads from the file since ``FileBlockCache/takeReads()`` last counted them.
        package var reads = 0
    }

    private let state: UnsafeMutablePointer<State>

    /// Twice a cache line of today's x86 and ARM cores (adjacent lines are fetched in pairs).
    private static let lineSize = 128

    package init(descriptor: Int32, size: Int, blockShift: Int, slotCount: Int) {
        let blockCount = (size >> blockShift) + 1
        // The bookkeeping a reader writes on every look-up lies in cache lines of its own: two caches may be in use
        // on two threads at once, and a line shared with the other thread's data (or any other object's reference
        // count) would bounce between the cores on every byte read.
        func lines<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
            let bytes = (count * MemoryLayout<T>.stride + Self.lineSize - 1) / Self.lineSize * Self.lineSize
            return UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: Self.lineSize)
                .bindMemory(to: T.self, capacity: count)
        }
        let slotOfBlock = lines(Int32.self, blockCount)
        slotOfBlock.initialize(repeating: -1, count: blockCount)
        let blockOfSlot = lines(Int.self, slotCount)
        blockOfSlot.initialize(repeating: -1, count: slotCount)
        let used = lines(Bool.self, slotCount)
        used.initialize(repeating: false, count: slotCount)
        // Left as it comes (a large allocation's pages are the system's until first written): a slot's memory is
        // resident once a block is read into it, and a small file's blocks fill a few pages of theirs. Whole pages,
        // so that ``releaseBlocks()`` can give them back.
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: slotCount << blockShift, alignment: max(Self.lineSize, Int(getpagesize())))
        state = lines(State.self, 1)
        state.initialize(
            to: State(
                descriptor: descriptor, size: size, blockShift: blockShift, slotCount: slotCount, storage: storage,
                slotOfBlock: slotOfBlock, blockCount: blockCount, blockOfSlot: blockOfSlot, used: used))
    }

    deinit {
        state.pointee.storage.deallocate()
        state.pointee.slotOfBlock.deallocate()
        state.pointee.blockOfSlot.deallocate()
        state.pointee.used.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The reader a cursor uses; valid while the cache lives.
    package var reader: Reader { Reader(state: state) }

    /// The first problem met, if any.
    package var problem: Problem? { state.pointee.problem }

    /// Whether a slot was filled since the memory was last given back.
    package var holdsBlocks: Bool { state.pointee.holdsBlocks }

    /// The reads from the file since the last call.
    package func takeReads() -> Int {
        defer { state.pointee.reads = 0 }
        return state.pointee.reads
    }

    /// Forgets a problem, and the blocks, which may hold zeros instead of bytes since.
    package func clearProblem() {
        guard state.pointee.problem != nil else { return }
        forgetBlocks()
        state.pointee.problem = nil
    }

    /// Forgets the blocks and gives their memory back to the system (the pages a slot spans whole), when it holds
    /// any: a cache left unused keeps no memory.
    package func releaseBlocks() {
        guard state.pointee.holdsBlocks else { return }
        forgetBlocks()
        state.pointee.holdsBlocks = false
        let page = Int(getpagesize())
        let storage = Int(bitPattern: state.pointee.storage)
        let start = (storage + page - 1) / page * page
        let end = (storage + (state.pointee.slotCount << state.pointee.blockShift)) / page * page
        guard end > start, let pages = UnsafeMutableRawPointer(bitPattern: start) else { return }
        #if canImport(Darwin)
        _ = madvise(pages, end - start, MADV_FREE)
        #else
        _ = madvise(pages, end - start, MADV_DONTNEED)
        #endif
    }

    private func forgetBlocks() {
        state.pointee.slotOfBlock.update(repeating: -1, count: state.pointee.blockCount)
        state.pointee.blockOfSlot.update(repeating: -1, count: state.pointee.slotCount)
        state.pointee.used.update(repeating: false, count: state.pointee.slotCount)
    }

    /// Reads through a cache; a plain value to copy around.
    package struct Reader {
        package let state: UnsafeMutablePointer<State>

        /// The byte at `offset` (below `size`).
        @inline(__always)
        package func byte(at offset: Int) -> UInt8 {
            // Offsets are checked by the caller, and the shift is 4...24: wrapping and masking operators, without the
            // overflow and shift-range checks of the plain ones (they showed as half of each look-up's instructions).
            let shift = state.pointee.blockShift
            return base(ofBlock: offset &>> shift).load(fromByteOffset: offset & ((1 &<< shift) &- 1), as: UInt8.self)
        }

        /// The big-endian unsigned integer of `width` bytes (1...8) at `offset` (within `size`).
        @inline(__always)
        package func bigEndian(at offset: Int, width: Int) -> UInt64 {
            let shift = state.pointee.blockShift
            let within = offset & ((1 &<< shift) &- 1)
            if within &+ 8 <= 1 &<< shift {
                // One load of 8 bytes, the first `width` kept (3-byte references are common in large archives).
                let base = base(ofBlock: offset &>> shift)
                let word = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: within, as: UInt64.self))
                return word &>> (64 &- 8 &* UInt64(width))
            }
            var value: UInt64 = 0
            for index in offset..<(offset + width) {
                value = value << 8 | UInt64(byte(at: index))
            }
            return value
        }

        /// Runs `body` with the bytes `range` (within `size`) in memory. `body` must not read through the cache.
        package func withBytes<T>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
            let shift = state.pointee.blockShift
            let within = range.lowerBound & ((1 << shift) - 1)
            if within + range.count <= 1 << shift {
                let base = base(ofBlock: range.lowerBound >> shift)
                return try body(UnsafeRawBufferPointer(start: base + within, count: range.count))
            }
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(range.count, 1), alignment: 16)
            defer { buffer.deallocate() }
            let head = (1 << shift) - within
            if range.count - head <= 1 << shift {
                // Across two blocks (a text at a block's end): copied out of both, through the cache.
                buffer.copyMemory(from: base(ofBlock: range.lowerBound >> shift) + within, byteCount: head)
                (buffer + head).copyMemory(
                    from: base(ofBlock: (range.lowerBound >> shift) + 1), byteCount: range.count - head)
            } else {
                // Across more (a long text or data): read whole, past the cache.
                state.pointee.reads += 1
                if let problem = FileBlocks.read(
                    state.pointee.descriptor, into: buffer, count: range.count, at: range.lowerBound)
                {
                    note(problem)
                }
            }
            return try body(UnsafeRawBufferPointer(start: buffer, count: range.count))
        }

        /// The bytes of `block`, read into a slot first unless one holds it.
        @inline(__always)
        private func base(ofBlock block: Int) -> UnsafeRawPointer {
            let slot = Int(state.pointee.slotOfBlock[block])
            guard slot >= 0 else { return load(block) }
            if !state.pointee.used[slot] { state.pointee.used[slot] = true }
            return UnsafeRawPointer(state.pointee.storage + (slot &<< state.pointee.blockShift))
        }

        private func load(_ block: Int) -> UnsafeRawPointer {
            // The hand passes over the slots used since its last visit (clearing their mark) to the first unused.
            var slot = state.pointee.hand
            while state.pointee.used[slot] {
                state.pointee.used[slot] = false
                slot = (slot + 1) % state.pointee.slotCount
            }
            state.pointee.hand = (slot + 1) % state.pointee.slotCount
            let old = state.pointee.blockOfSlot[slot]
            if old >= 0 { state.pointee.slotOfBlock[old] = -1 }
            let base = state.pointee.storage + (slot << state.pointee.blockShift)
            let start = block << state.pointee.blockShift
            let count = min(1 << state.pointee.blockShift, state.pointee.size - start)
            state.pointee.reads += 1
            if let problem = FileBlocks.read(state.pointee.descriptor, into: base, count: count, at: start) {
                note(problem)
            }
            // The 8-byte loads near the end of a short last block read defined bytes.
            let tail = min(8, (1 << state.pointee.blockShift) - count)
            (base + count).initializeMemory(as: UInt8.self, repeating: 0, count: tail)
            state.pointee.blockOfSlot[slot] = block
            state.pointee.slotOfBlock[block] = Int32(slot)
            state.pointee.used[slot] = true
            state.pointee.holdsBlocks = true
            return UnsafeRawPointer(base)
        }

        private func note(_ problem: Problem) {
            if state.pointee.problem == nil { state.pointee.problem = problem }
        }
    }
}

/// Bytes a binary-property-list cursor reads: in memory, or a ``FileBlockCache`` over a file. Offsets are checked by
/// the cursor before it reads (within the file for every read; the object area for object contents).
package struct ByteView {
    private let memory: UnsafeRawBufferPointer
    private let file: FileBlockCache.Reader?

    package init(memory: UnsafeRawBufferPointer) {
        self.memory = memory
        self.file = nil
    }

    package init(file: FileBlockCache.Reader) {
        self.memory = UnsafeRawBufferPointer(start: nil, count: 0)
        self.file = file
    }

    /// The byte at `offset`.
    @inline(__always)
    package subscript(offset: Int) -> UInt8 {
        if let file { return file.byte(at: offset) }
        return memory[offset]
    }

    /// The big-endian unsigned integer of `width` bytes (1...8) at `offset`.
    @inline(__always)
    package func bigEndian(at offset: Int, width: Int) -> UInt64 {
        if let file { return file.bigEndian(at: offset, width: width) }
        if offset &+ 8 <= memory.count {
            // One load of 8 bytes, the first `width` kept.
            let word = UInt64(bigEndian: memory.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            return word &>> (64 &- 8 &* UInt64(width))
        }
        switch width {
        case 1: return UInt64(memory[offset])
        case 2: return UInt64(UInt16(bigEndian: memory.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case 4: return UInt64(UInt32(bigEndian: memory.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        case 8: return UInt64(bigEndian: memory.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        default:
            var value: UInt64 = 0
            for index in offset..<(offset + width) {
                value = value << 8 | UInt64(memory[index])
            }
            return value
        }
    }

    /// Runs `body` with the bytes in `range`; `body` must not read other bytes of this view.
    @inline(__always)
    package func withBytes<T>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        if let file { return try file.withBytes(range, body) }
        return try body(UnsafeRawBufferPointer(rebasing: memory[range]))
    }
}
