package import DecantCore
public import Foundation
import Synchronization

/// A binary property list (`bplist00`) kept as its bytes and offset table, its objects decoded on demand by index.
///
/// ```swift
/// let list = try BinaryPropertyList(data: data, path: "notes.archive")
/// let top = try list.value(at: list.topObject)   // the whole tree, as BinaryPropertyListReader returns it
/// ```
///
/// Opening a list checks every object reachable from the top once, without building values: offsets, counts,
/// markers and references are in bounds, no object contains itself, nesting stays within `maximumDepth`, and the tree
/// the top object expands to (shared objects counted once per reference) holds at most
/// ``BinaryPropertyListReader/maximumValueCount(forFileSize:)`` values. The errors are the ones
/// ``BinaryPropertyListReader`` throws. Once open, decoding an object reachable from the top succeeds and costs at
/// most that many values (reading a file can still fail, if it is truncated meanwhile), and the list holds only the
/// bytes, or for a list opened on a file a few blocks of it (``FileBlocks``): nothing decoded is kept, so a reader
/// that looks at objects one at a time (a large keyed archive) stays small.
public struct BinaryPropertyList: Sendable {
    /// The file name put into error locations.
    public let path: String?
    /// The number of objects in the offset table.
    public let objectCount: Int
    /// The index of the top object.
    public let topObject: Int
    /// The deepest nesting accepted.
    public let maximumDepth: Int
    /// Where the bytes are.
    package let source: Source
    /// The number of bytes.
    package let byteCount: Int
    package let offsetIntSize: Int
    package let objectRefSize: Int
    package let offsetTableOffset: Int

    /// The bytes in memory, or a file read a block at a time.
    package enum Source: Sendable {
        case memory(Data)
        case file(FileBlocks)
    }

    /// Opens and checks the binary property list in `data`; `path` only labels errors.
    /// - Throws: ``DecantError`` `.malformedInput` with the byte offset of the first damaged object, or
    ///   `.unsupportedFormat` for a `bplist` version other than `00`.
    public init(data: Data, path: String? = nil, maximumDepth: Int = 512) throws {
        // A slice keeps its parent's indices; the byte readers below count from 0.
        let bytes = data.startIndex == 0 ? data : Data(data)
        try self.init(source: .memory(bytes), byteCount: bytes.count, path: path, maximumDepth: maximumDepth)
    }

    /// Opens and checks the binary property list in `file`, which stays open and is read a block at a time: the
    /// list holds a few blocks, not the file (see ``FileBlocks``).
    /// - Throws: as ``init(data:path:maximumDepth:)``, and `.ioError` when the file cannot be read.
    ///
    /// With `checksStructure` false only the header, trailer and offset table are checked on opening: the caller
    /// runs ``startStructureCheck()`` and finishes it before it trusts what it read (every read is bounds-checked,
    /// so reading before the check ends is safe; only which error is reported first depends on it).
    package init(file: FileBlocks, maximumDepth: Int = 512, checksStructure: Bool) throws {
        try self.init(
            source: .file(file), byteCount: file.size, path: file.path, maximumDepth: maximumDepth,
            checksStructure: checksStructure)
    }

    private init(
        source: Source, byteCount count: Int, path: String?, maximumDepth: Int, checksStructure: Bool = true
    ) throws {
        self.source = source
        self.byteCount = count
        self.path = path
        self.maximumDepth = maximumDepth
        func error(_ message: String, at offset: Int) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, offset: offset))
        }
        let headerLength = 8
        let trailerLength = 32
        // The header and the trailer, read once.
        let (header, trailerBytes) = try Self.withBytes(of: source, count: count) { bytes in
            (
                (0..<min(count, headerLength)).map { bytes[$0] },
                count >= headerLength + 1 + trailerLength
                    ? (count - trailerLength..<count).map { bytes[$0] } : []
            )
        }
        guard header.count >= 6, header.prefix(6).elementsEqual(Array("bplist".utf8)) else {
            throw error("not a binary property list (no bplist header)", at: 0)
        }
        guard header.count >= headerLength, header[6] == UInt8(ascii: "0"), header[7] == UInt8(ascii: "0") else {
            throw DecantError(
                .unsupportedFormat,
                "binary property list version other than 00",
                at: Location(path: path, offset: 6)
            )
        }
        guard count >= headerLength + 1 + trailerLength else {
            throw error("file of \(count) bytes is too short for a binary property list", at: count)
        }
        let trailer = count - trailerLength
        let offsetIntSize = Int(trailerBytes[6])
        let objectRefSize = Int(trailerBytes[7])
        guard (1...8).contains(offsetIntSize) else {
            throw error("offset size \(offsetIntSize) in the trailer is not 1 to 8", at: trailer + 6)
        }
        guard (1...8).contains(objectRefSize) else {
            throw error("object reference size \(objectRefSize) in the trailer is not 1 to 8", at: trailer + 7)
        }
        func trailerField(_ offset: Int) -> UInt64 {
            (offset..<(offset + 8)).reduce(0) { $0 << 8 | UInt64(trailerBytes[$1]) }
        }
        let objects = trailerField(8)
        let top = trailerField(16)
        let table = trailerField(24)
        // Each object needs at least one byte, so the count cannot exceed the object area.
        guard objects >= 1, objects <= UInt64(trailer) else {
            throw error("object count \(objects) in the trailer is impossible for this file size", at: trailer + 8)
        }
        guard top < objects else {
            throw error("top object \(top) is not below the object count \(objects)", at: trailer + 16)
        }
        let tableLength = Int(objects).multipliedReportingOverflow(by: offsetIntSize)
        guard table >= UInt64(headerLength + 1), table <= UInt64(trailer), !tableLength.overflow,
            Int(table) + tableLength.partialValue <= trailer
        else {
            throw error("offset table at \(table) does not fit between the objects and the trailer", at: trailer + 24)
        }
        self.offsetIntSize = offsetIntSize
        self.objectRefSize = objectRefSize
        self.objectCount = Int(objects)
        self.topObject = Int(top)
        self.offsetTableOffset = Int(table)
        if checksStructure { try checkStructure() }
    }

    /// Walks every object the top reaches, as the eager parser would: offsets, markers, lengths and references in
    /// range, no reference cycles, nesting and the number of values the top expands to within the limits.
    /// - Throws: `.malformedInput` with the byte offset of the first damaged object.
    package func checkStructure() throws {
        let list = self
        try list.withCursor { cursor in
            let limit = BinaryPropertyListReader.maximumValueCount(forFileSize: byteCount)
            do {
                var checker = Checker(
                    cursor: cursor, maximumDepth: maximumDepth, maximumValueCount: limit, exact: false)
                _ = try checker.check(list.topObject, depth: 0)
            } catch is Checker.NeedsExactCheck {
                var checker = Checker(
                    cursor: cursor, maximumDepth: maximumDepth, maximumValueCount: limit, exact: true)
                _ = try checker.check(list.topObject, depth: 0)
            }
        }
    }

    /// Starts ``checkStructure()`` on a thread of its own, for a reader that walks the objects meanwhile.
    package func startStructureCheck() -> StructureCheck {
        StructureCheck(list: self)
    }

    /// A structure check running on a thread of its own (``startStructureCheck()``).
    ///
    /// ``finish()`` waits for it and throws what it found. A reader that failed meanwhile calls ``finish()`` first
    /// and reports the check's error when there is one: a damaged list then fails exactly as when it is checked on
    /// opening.
    package final class StructureCheck: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let outcome = Mutex<(any Error)?>(nil)
        private let finished = Atomic<Bool>(false)

        fileprivate init(list: BinaryPropertyList) {
            let thread = Thread { [self] in
                do { try list.checkStructure() } catch { outcome.withLock { $0 = error } }
                done.signal()
            }
            thread.name = "decant.plist-check"
            thread.start()
        }

        /// Waits for the check (once; later calls return at once) and throws its error.
        package func finish() throws {
            if !finished.exchange(true, ordering: .acquiringAndReleasing) { done.wait() }
            if let error = outcome.withLock({ $0 }) { throw error }
        }
    }

    /// The object at `index` and everything it refers to, as a value tree.
    ///
    /// Objects shared inside the subtree are decoded once per reference; the check at opening bounds the total for
    /// objects the top reaches. Any other object is decoded under the same limits (depth, value count), so a loop or
    /// a reference bomb there throws too.
    /// - Throws: `.malformedInput` for an index outside the offset table or a damaged object the top does not reach.
    public func value(at index: Int) throws -> PropertyListValue {
        try withCursor { cursor in
            var memo: [Int: PropertyListValue]? = nil
            return try cursor.value(at: index, memo: &memo)
        }
    }

    /// The top object's tree, decoding each shared object once (what ``BinaryPropertyListReader`` returns).
    package func topValue() throws -> PropertyListValue {
        try withCursor { cursor in
            var memo: [Int: PropertyListValue]? = [:]
            return try cursor.value(at: topObject, memo: &memo)
        }
    }

    /// Runs `body` with a cursor over the bytes, for several look-ups in a row.
    /// - Throws: what `body` throws; for a file, `.malformedInput` when it was truncated while read and `.ioError`
    ///   when a read failed (see ``FileBlocks/withBlocks(_:)``).
    package func withCursor<T>(_ body: (Cursor) throws -> T) throws -> T {
        try Self.withBytes(of: source, count: byteCount) { bytes in try body(Cursor(list: self, bytes: bytes)) }
    }

    private static func withBytes<T>(of source: Source, count: Int, _ body: (ByteView) throws -> T) throws -> T {
        switch source {
        case .memory(let data):
            try data.withUnsafeBytes { raw in try body(ByteView(memory: raw)) }
        case .file(let file):
            try file.withBlocks { blocks in try body(ByteView(file: blocks)) }
        }
    }
}

extension BinaryPropertyList {
    /// A container's items as a span of object references in the file: `count` references from byte `start`.
    package struct References: Sendable {
        package var start: Int
        package var count: Int
    }

    /// Reads objects from the bytes. Every read is bounds-checked, so a cursor is safe on any object, checked or not.
    package struct Cursor {
        package let list: BinaryPropertyList
        package let bytes: ByteView

        package var offsetTableOffset: Int { list.offsetTableOffset }

        package func error(_ message: String, at offset: Int) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: list.path, offset: offset))
        }

        @inline(__always)
        package func readUnsigned(at offset: Int, size: Int) -> UInt64 {
            // Offsets and references are almost always 1, 2 or 4 bytes: one load each instead of a byte loop.
            bytes.bigEndian(at: offset, width: size)
        }

        /// Reads `size` bytes at `offset` as a big-endian unsigned integer, checking they lie in the object area.
        package func unsigned(at offset: Int, size: Int, objectStart: Int) throws -> UInt64 {
            guard offset >= 0, size <= offsetTableOffset, offset <= offsetTableOffset - size else {
                throw error("object runs past the end of the object area", at: objectStart)
            }
            return readUnsigned(at: offset, size: size)
        }

        package func objectOffset(_ index: Int) throws -> Int {
            guard index >= 0, index < list.objectCount else {
                throw error("object \(index) is not below the object count \(list.objectCount)", at: offsetTableOffset)
            }
            let entry = offsetTableOffset &+ index &* list.offsetIntSize
            let offset = readUnsigned(at: entry, size: list.offsetIntSize)
            guard offset >= 8, offset < UInt64(offsetTableOffset) else {
                throw error("object \(index) has offset \(offset), outside the object area", at: entry)
            }
            return Int(offset)
        }

        /// The marker byte of object `index`.
        package func marker(of index: Int) throws -> UInt8 {
            bytes[try objectOffset(index)]
        }

        /// Reads the count in a marker's low nibble, or the integer object after it when the nibble is 0xF.
        /// Returns the count and the offset of the first byte after it.
        package func count(marker: UInt8, at offset: Int) throws -> (Int, Int) {
            let nibble = Int(marker & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            let intMarker = try unsigned(at: offset + 1, size: 1, objectStart: offset)
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
                throw error("long count does not start with an integer marker", at: offset + 1)
            }
            let size = 1 << Int(intMarker & 0x0F)
            let value = try unsigned(at: offset + 2, size: size, objectStart: offset)
            guard value <= UInt64(offsetTableOffset) else {
                throw error("count \(value) is larger than the file", at: offset)
            }
            return (Int(value), offset + 2 + size)
        }

        /// Checks that `count` items of `width` bytes starting at `start` lie in the object area.
        package func checkSpan(_ start: Int, count: Int, width: Int, objectStart: Int) throws {
            let length = count.multipliedReportingOverflow(by: width)
            guard !length.overflow, start <= offsetTableOffset, length.partialValue <= offsetTableOffset - start else {
                throw error("object of \(count) items runs past the end of the object area", at: objectStart)
            }
        }

        /// The reference at position `item` of a span, checked against the object count.
        @inline(__always)
        package func reference(_ span: References, _ item: Int) throws -> Int {
            // In a span checked to lie in the file: no overflow to check.
            let at = span.start &+ item &* list.objectRefSize
            let reference = readUnsigned(at: at, size: list.objectRefSize)
            guard reference < UInt64(list.objectCount) else {
                throw error("reference \(reference) is not below the object count \(list.objectCount)", at: at)
            }
            return Int(reference)
        }

        /// Whether every reference of `span` (checked to lie in the file) is below the object count: the bytes read in
        /// one go, for a check that only wants to know (``reference(_:_:)`` throws the error, naming the offset).
        package func referencesAreValid(_ span: References) -> Bool {
            let width = list.objectRefSize
            let limit = UInt64(list.objectCount)
            // A few thousand at a time: a large container (an archive's `$objects`) is not copied out whole.
            var first = 0
            while first < span.count {
                let count = min(span.count &- first, 4096)
                let start = span.start &+ first &* width
                let valid = bytes.withBytes(start..<(start &+ count &* width)) { raw in
                    switch width {
                    case 1:
                        return limit > 0xFF || raw.allSatisfy { UInt64($0) < limit }
                    case 2:
                        for item in 0..<count
                        where UInt64(UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: item &* 2, as: UInt16.self)))
                            >= limit
                        {
                            return false
                        }
                        return true
                    default:
                        var at = 0
                        for _ in 0..<count {
                            var value: UInt64 = 0
                            for byte in raw[at..<(at &+ width)] { value = value &<< 8 | UInt64(byte) }
                            if value >= limit { return false }
                            at &+= width
                        }
                        return true
                    }
                }
                guard valid else { return false }
                first &+= count
            }
            return true
        }

        /// The reference span of an array or set (`0xA`, `0xC`) at `offset`, bounds-checked.
        package func elementReferences(marker: UInt8, at offset: Int) throws -> References {
            let (length, start) = try count(marker: marker, at: offset)
            try checkSpan(start, count: length, width: list.objectRefSize, objectStart: offset)
            return References(start: start, count: length)
        }

        /// The key and value reference spans of a dictionary (`0xD`) at `offset`, bounds-checked.
        package func dictionaryReferences(marker: UInt8, at offset: Int) throws -> (keys: References, values: References) {
            let (length, start) = try count(marker: marker, at: offset)
            try checkSpan(start, count: length, width: list.objectRefSize, objectStart: offset)
            let valueStart = start + length * list.objectRefSize
            try checkSpan(valueStart, count: length, width: list.objectRefSize, objectStart: offset)
            return (References(start: start, count: length), References(start: valueStart, count: length))
        }

        /// The elements of array or set `index`, or `nil` when it is another kind of object.
        package func elements(of index: Int) throws -> References? {
            let offset = try objectOffset(index)
            let marker = bytes[offset]
            guard marker >> 4 == 0xA || marker >> 4 == 0xC else { return nil }
            return try elementReferences(marker: marker, at: offset)
        }

        /// The keys and values of dictionary `index`, or `nil` when it is another kind of object.
        package func entries(of index: Int) throws -> (keys: References, values: References)? {
            let offset = try objectOffset(index)
            let marker = bytes[offset]
            guard marker >> 4 == 0xD else { return nil }
            return try dictionaryReferences(marker: marker, at: offset)
        }

        /// String object `index`, or `nil` when it is another kind of object.
        package func string(at index: Int) throws -> String? {
            let offset = try objectOffset(index)
            let marker = bytes[offset]
            guard marker >> 4 == 0x5 || marker >> 4 == 0x6 else { return nil }
            return try scalar(marker: marker, at: offset).stringValue
        }

        /// The UID object `index` holds, or nil when it is another kind of object (or a UID wider than 8 bytes).
        package func uid(of index: Int) throws -> UInt64? {
            let offset = try objectOffset(index)
            let marker = bytes[offset]
            guard marker >> 4 == 0x8 else { return nil }
            return try uid(marker: marker, at: offset)
        }

        /// The UID object at `offset`, whose marker is `marker` (`0x8n`); nil when it is wider than 8 bytes.
        package func uid(marker: UInt8, at offset: Int) throws -> UInt64? {
            let width = Int(marker & 0x0F) + 1
            guard width <= 8 else { return nil }
            return try unsigned(at: offset + 1, size: width, objectStart: offset)
        }

        /// Whether object `index` is the string `text` (compared as bytes when it is ASCII, without a `String`).
        package func isString(_ index: Int, _ text: StaticString) throws -> Bool {
            let offset = try objectOffset(index)
            let marker = bytes[offset]
            guard marker >> 4 == 0x5 else {
                if marker >> 4 == 0x6 { return try string(at: index) == text.description }
                return false
            }
            let (length, start) = try count(marker: marker, at: offset)
            guard length == text.utf8CodeUnitCount else { return false }
            try checkSpan(start, count: length, width: 1, objectStart: offset)
            return text.withUTF8Buffer { expected in
                expected.indices.allSatisfy { bytes[start + $0] == expected[$0] }
            }
        }

        /// Decodes a non-container object (anything but arrays, sets and dictionaries).
        package func scalar(marker: UInt8, at offset: Int) throws -> PropertyListValue {
            let nibble = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00, 0x0F: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw error(String(format: "unknown marker 0x%02X", marker), at: offset)
                }
            case 0x1:
                return .integer(try integer(nibble: nibble, at: offset))
            case 0x2:
                switch nibble {
                case 2:
                    let bits = try unsigned(at: offset + 1, size: 4, objectStart: offset)
                    return .real(Double(Float(bitPattern: UInt32(bits))))
                case 3:
                    return .real(Double(bitPattern: try unsigned(at: offset + 1, size: 8, objectStart: offset)))
                default:
                    throw error("real of \(1 << nibble) bytes is not supported", at: offset)
                }
            case 0x3:
                guard marker == 0x33 else { throw error(String(format: "unknown marker 0x%02X", marker), at: offset) }
                return .date(Double(bitPattern: try unsigned(at: offset + 1, size: 8, objectStart: offset)))
            case 0x4:
                let (length, start) = try count(marker: marker, at: offset)
                try checkSpan(start, count: length, width: 1, objectStart: offset)
                return .data(bytes.withBytes(start..<(start + length)) { Data($0) })
            case 0x5:
                let (length, start) = try count(marker: marker, at: offset)
                try checkSpan(start, count: length, width: 1, objectStart: offset)
                let string = bytes.withBytes(start..<(start + length)) { slice in
                    slice.allSatisfy({ $0 < 0x80 }) ? String(decoding: slice, as: UTF8.self) : nil
                }
                guard let string else { throw error("ASCII string contains a byte above 0x7F", at: offset) }
                return .string(string)
            case 0x6:
                let (length, start) = try count(marker: marker, at: offset)
                try checkSpan(start, count: length, width: 2, objectStart: offset)
                let units = (0..<length).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                guard nibble < 8 else { throw error("UID of \(nibble + 1) bytes is too long", at: offset) }
                return .uid(try unsigned(at: offset + 1, size: nibble + 1, objectStart: offset))
            default:
                throw error(String(format: "unknown marker 0x%02X", marker), at: offset)
            }
        }

        package func integer(nibble: Int, at offset: Int) throws -> Int64 {
            switch nibble {
            case 0, 1, 2:
                return Int64(try unsigned(at: offset + 1, size: 1 << nibble, objectStart: offset))
            case 3:
                return Int64(bitPattern: try unsigned(at: offset + 1, size: 8, objectStart: offset))
            case 4:
                let high = try unsigned(at: offset + 1, size: 8, objectStart: offset)
                let low = Int64(bitPattern: try unsigned(at: offset + 9, size: 8, objectStart: offset))
                // A 128-bit two's-complement value fits 64 bits when the high half only extends the sign.
                guard (high == 0 && low >= 0) || (high == UInt64.max && low < 0) else {
                    throw error("16-byte integer does not fit in 64 signed bits", at: offset)
                }
                return low
            default:
                throw error("integer of \(1 << nibble) bytes is not supported", at: offset)
            }
        }

        /// Decodes object `index` and its subtree. With a memo, each object is decoded once (shared subtrees are
        /// shared values); without one, once per reference. The opening check makes this cheap and safe for objects
        /// the top reaches; for others, nesting past the list's depth and more values than the file-size limit throw.
        package func value(at index: Int, memo: inout [Int: PropertyListValue]?) throws -> PropertyListValue {
            var budget = BinaryPropertyListReader.maximumValueCount(forFileSize: list.byteCount)
            return try value(at: index, memo: &memo, depth: 0, budget: &budget)
        }

        package func value(
            at index: Int, memo: inout [Int: PropertyListValue]?, depth: Int, budget: inout Int
        ) throws -> PropertyListValue {
            if let known = memo?[index] { return known }
            let offset = try objectOffset(index)
            budget -= 1
            guard depth <= list.maximumDepth, budget >= 0 else {
                throw error(
                    depth > list.maximumDepth
                        ? "nesting deeper than \(list.maximumDepth) levels"
                        : "shared objects expand to more than the value limit (a reference bomb)",
                    at: offset)
            }
            let marker = bytes[offset]
            let value: PropertyListValue
            switch marker >> 4 {
            case 0xA, 0xC:
                let span = try elementReferences(marker: marker, at: offset)
                var elements: [PropertyListValue] = []
                elements.reserveCapacity(span.count)
                for item in 0..<span.count {
                    elements.append(
                        try self.value(at: reference(span, item), memo: &memo, depth: depth + 1, budget: &budget))
                }
                value = marker >> 4 == 0xA ? .array(elements) : .set(elements)
            case 0xD:
                let (keys, values) = try dictionaryReferences(marker: marker, at: offset)
                var dictionary = PropertyListDictionary(minimumCapacity: keys.count)
                for item in 0..<keys.count {
                    let keyReference = try reference(keys, item)
                    guard let key = try string(at: keyReference) else {
                        throw error("dictionary key (object \(keyReference)) is not a string", at: offset)
                    }
                    dictionary[key] = try self.value(
                        at: reference(values, item), memo: &memo, depth: depth + 1, budget: &budget)
                }
                value = .dictionary(dictionary)
            default:
                value = try scalar(marker: marker, at: offset)
            }
            memo?[index] = value
            return value
        }
    }
}
