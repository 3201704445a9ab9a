import DecantCore
public import Foundation

/// Parses binary property lists (`bplist00`) without Foundation, safely on hostile input.
///
/// ```swift
/// let value = try BinaryPropertyListReader(path: "SampleModel.mom").read(data)
/// ```
///
/// Offsets, counts and object references are bounds-checked; a reference graph that loops back on itself,
/// nesting deeper than ``maximumDepth``, and containers shared so often that the value tree would hold more than
/// ``maximumValueCount(forFileSize:)`` values (a binary "billion laughs") are rejected. Every error is a
/// ``DecantError`` with code `.malformedInput` (or `.unsupportedFormat` for another `bplist` version) and the byte
/// offset of the object.
public struct BinaryPropertyListReader: Sendable {
    /// The file name put into error locations.
    public var path: String?
    /// The deepest nesting of arrays, sets and dictionaries accepted. Defaults to 512.
    public var maximumDepth: Int

    /// Creates a reader; `path` only labels errors.
    public init(path: String? = nil, maximumDepth: Int = 512) {
        self.path = path
        self.maximumDepth = maximumDepth
    }

    /// The most values the decoded tree may hold, counting a shared object once per reference: a million, or four
    /// per byte for larger files. Apple's writers share only strings, numbers and data, which keeps their files far
    /// below this; every walk over the tree (references, JSON output) is bounded by it.
    public static func maximumValueCount(forFileSize size: Int) -> Int {
        max(1_000_000, size.multipliedReportingOverflow(by: 4).partialValue)
    }

    /// Whether `data` starts with the binary property list magic `bplist`.
    public static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.starts(with: Array("bplist".utf8))
    }

    /// Parses `data` and returns its top object.
    public func read(_ data: Data) throws -> PropertyListValue {
        var parser = try Parser(bytes: [UInt8](data), path: path, maximumDepth: maximumDepth)
        return try parser.parseTop()
    }
}

extension BinaryPropertyListReader {
    /// The parser's working state: the bytes, the trailer, and memoised objects.
    fileprivate struct Parser {
        let bytes: [UInt8]
        let path: String?
        let maximumDepth: Int
        var offsetIntSize = 0
        var objectRefSize = 0
        var objectCount = 0
        var topObject = 0
        var offsetTableOffset = 0
        /// Objects already parsed, by index (values are immutable, so sharing is safe and keeps DAGs linear).
        var parsed: [Int: PropertyListValue] = [:]
        /// Objects being parsed on the current path; meeting one again means the graph loops.
        var inProgress: Set<Int> = []
        /// The number of values in each parsed object's tree, shared objects counted once per reference.
        var treeSizes: [Int: Int] = [:]
        let maximumValueCount: Int

        init(bytes: [UInt8], path: String?, maximumDepth: Int) throws {
            self.bytes = bytes
            self.path = path
            self.maximumDepth = maximumDepth
            self.maximumValueCount = BinaryPropertyListReader.maximumValueCount(forFileSize: bytes.count)
            let headerLength = 8
            let trailerLength = 32
            guard bytes.count >= 6, bytes[0..<6].elementsEqual(Array("bplist".utf8)) else {
                throw error("not a binary property list (no bplist header)", at: 0)
            }
            guard bytes.count >= headerLength, bytes[6] == UInt8(ascii: "0"), bytes[7] == UInt8(ascii: "0") else {
                throw DecantError(
                    .unsupportedFormat,
                    "binary property list version other than 00",
                    at: Location(path: path, offset: 6)
                )
            }
            guard bytes.count >= headerLength + 1 + trailerLength else {
                throw error("file of \(bytes.count) bytes is too short for a binary property list", at: bytes.count)
            }
            let trailer = bytes.count - trailerLength
            offsetIntSize = Int(bytes[trailer + 6])
            objectRefSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetIntSize) else {
                throw error("offset size \(offsetIntSize) in the trailer is not 1 to 8", at: trailer + 6)
            }
            guard (1...8).contains(objectRefSize) else {
                throw error("object reference size \(objectRefSize) in the trailer is not 1 to 8", at: trailer + 7)
            }
            let count = Self.readUnsigned(bytes, at: trailer + 8, size: 8)
            let top = Self.readUnsigned(bytes, at: trailer + 16, size: 8)
            let table = Self.readUnsigned(bytes, at: trailer + 24, size: 8)
            // Each object needs at least one byte, so the count cannot exceed the object area.
            guard count >= 1, count <= UInt64(trailer) else {
                throw error("object count \(count) in the trailer is impossible for this file size", at: trailer + 8)
            }
            guard top < count else {
                throw error("top object \(top) is not below the object count \(count)", at: trailer + 16)
            }
            objectCount = Int(count)
            topObject = Int(top)
            let tableLength = objectCount.multipliedReportingOverflow(by: offsetIntSize)
            guard table >= UInt64(headerLength + 1), table <= UInt64(trailer), !tableLength.overflow,
                Int(table) + tableLength.partialValue <= trailer
            else {
                throw error(
                    "offset table at \(table) does not fit between the objects and the trailer",
                    at: trailer + 24
                )
            }
            offsetTableOffset = Int(table)
        }

        func error(_ message: String, at offset: Int) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, offset: offset))
        }

        static func readUnsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in offset..<(offset + size) {
                value = value << 8 | UInt64(bytes[index])
            }
            return value
        }

        /// Reads `size` bytes at `offset` as a big-endian unsigned integer, checking they lie in the object area.
        func unsigned(at offset: Int, size: Int, objectStart: Int) throws -> UInt64 {
            guard offset >= 0, size <= offsetTableOffset, offset <= offsetTableOffset - size else {
                throw error("object runs past the end of the object area", at: objectStart)
            }
            return Self.readUnsigned(bytes, at: offset, size: size)
        }

        func objectOffset(_ index: Int) throws -> Int {
            let entry = offsetTableOffset + index * offsetIntSize
            let offset = Self.readUnsigned(bytes, at: entry, size: offsetIntSize)
            guard offset >= 8, offset < UInt64(offsetTableOffset) else {
                throw error("object \(index) has offset \(offset), outside the object area", at: entry)
            }
            return Int(offset)
        }

        mutating func parseTop() throws -> PropertyListValue {
            try parseObject(topObject, depth: 0)
        }

        /// Reads the count in a marker's low nibble, or the integer object after it when the nibble is 0xF.
        /// Returns the count and the offset of the first byte after it.
        func count(marker: UInt8, at offset: Int) throws -> (Int, Int) {
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
        func checkSpan(_ start: Int, count: Int, width: Int, objectStart: Int) throws {
            let length = count.multipliedReportingOverflow(by: width)
            guard !length.overflow, start <= offsetTableOffset, length.partialValue <= offsetTableOffset - start else {
                throw error("object of \(count) items runs past the end of the object area", at: objectStart)
            }
        }

        mutating func parseObject(_ index: Int, depth: Int) throws -> PropertyListValue {
            if let value = parsed[index] { return value }
            let offset = try objectOffset(index)
            guard depth <= maximumDepth else {
                throw error("nesting deeper than \(maximumDepth) levels", at: offset)
            }
            guard inProgress.insert(index).inserted else {
                throw error("object \(index) contains itself (reference cycle)", at: offset)
            }
            defer { inProgress.remove(index) }
            let value = try parseObject(at: offset, index: index, depth: depth)
            parsed[index] = value
            return value
        }

        /// The tree size of `children` plus their container, throwing when it passes ``maximumValueCount``.
        func treeSize(of children: [Int], at offset: Int) throws -> Int {
            var size = 1
            for child in children {
                size += treeSizes[child] ?? 1
                guard size <= maximumValueCount else {
                    throw error(
                        "shared objects expand to more than \(maximumValueCount) values (a reference bomb)", at: offset)
                }
            }
            return size
        }

        func references(at start: Int, count: Int, objectStart: Int) throws -> [Int] {
            try checkSpan(start, count: count, width: objectRefSize, objectStart: objectStart)
            return try (0..<count).map { item in
                let reference = Self.readUnsigned(bytes, at: start + item * objectRefSize, size: objectRefSize)
                guard reference < UInt64(objectCount) else {
                    throw error(
                        "reference \(reference) is not below the object count \(objectCount)",
                        at: start + item * objectRefSize
                    )
                }
                return Int(reference)
            }
        }

        mutating func parseObject(at offset: Int, index: Int, depth: Int) throws -> PropertyListValue {
            let marker = bytes[offset]
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
                return .data(Data(bytes[start..<(start + length)]))
            case 0x5:
                let (length, start) = try count(marker: marker, at: offset)
                try checkSpan(start, count: length, width: 1, objectStart: offset)
                let slice = bytes[start..<(start + length)]
                guard slice.allSatisfy({ $0 < 0x80 }) else {
                    throw error("ASCII string contains a byte above 0x7F", at: offset)
                }
                return .string(String(decoding: slice, as: UTF8.self))
            case 0x6:
                let (length, start) = try count(marker: marker, at: offset)
                try checkSpan(start, count: length, width: 2, objectStart: offset)
                let units = (0..<length).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                guard nibble < 8 else { throw error("UID of \(nibble + 1) bytes is too long", at: offset) }
                return .uid(try unsigned(at: offset + 1, size: nibble + 1, objectStart: offset))
            case 0xA, 0xC:
                let (length, start) = try count(marker: marker, at: offset)
                let children = try references(at: start, count: length, objectStart: offset)
                var elements: [PropertyListValue] = []
                elements.reserveCapacity(length)
                for child in children {
                    elements.append(try parseObject(child, depth: depth + 1))
                }
                treeSizes[index] = try treeSize(of: children, at: offset)
                return marker >> 4 == 0xA ? .array(elements) : .set(elements)
            case 0xD:
                let (length, start) = try count(marker: marker, at: offset)
                let keyReferences = try references(at: start, count: length, objectStart: offset)
                let valueReferences = try references(
                    at: start + length * objectRefSize,
                    count: length,
                    objectStart: offset
                )
                var dictionary = PropertyListDictionary()
                for (keyReference, valueReference) in zip(keyReferences, valueReferences) {
                    guard case .string(let key) = try parseObject(keyReference, depth: depth + 1) else {
                        throw error("dictionary key (object \(keyReference)) is not a string", at: offset)
                    }
                    dictionary[key] = try parseObject(valueReference, depth: depth + 1)
                }
                treeSizes[index] = try treeSize(of: keyReferences + valueReferences, at: offset)
                return .dictionary(dictionary)
            default:
                throw error(String(format: "unknown marker 0x%02X", marker), at: offset)
            }
        }

        func integer(nibble: Int, at offset: Int) throws -> Int64 {
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
    }
}
