import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

@Suite("Binary property lists")
struct BinaryPropertyListTests {
    /// A value using every type plistlib can round-trip, with sizes that need each integer width and long counts.
    static let sample: PropertyListValue = [
        "ascii": "hello",
        "unicode": "héllo wörld ✓ 😀",
        "empty": "",
        "long string": .string(String(repeating: "x", count: 300)),
        "small": 7,
        "byte": 255,
        "short": 0xFFFF,
        "word": 0xFFFF_FFFF,
        "large": 0x1_0000_0000,
        "max": .integer(Int64.max),
        "negative": -1,
        "min": .integer(Int64.min),
        "real": 3.25,
        "negative zero": .real(-0.0),
        "true": true,
        "false": false,
        "date": .date(-86_400 * 365),
        "data": .data(Data([0, 1, 2, 0xFF])),
        "long data": .data(Data(repeating: 0xAB, count: 40)),
        "uid": .uid(1),
        "big uid": .uid(70_000),
        "array": [1, "two", [3.0], ["four": 4]],
        "long array": .array((0..<20).map { .integer($0) }),
        "nested": ["a": ["b": ["c": "d"]]],
    ]

    @Test func roundTripThroughOurReader() throws {
        let data = BinaryPropertyListWriter().write(Self.sample)
        let back = try BinaryPropertyListReader().read(data)
        #expect(back == Self.sample)
        #expect(back["unicode"]?.stringValue == "héllo wörld ✓ 😀")
        #expect(back["min"]?.integerValue == Int64.min)
        #expect(back["negative zero"]?.doubleValue?.sign == .minus)
    }

    @Test func keepsInsertionOrder() throws {
        let value: PropertyListValue = ["zebra": 1, "apple": 2, "mango": 3]
        let back = try BinaryPropertyListReader().read(BinaryPropertyListWriter().write(value))
        #expect(back.dictionaryValue?.keys == ["zebra", "apple", "mango"])
    }

    @Test func setsAndNullRoundTrip() throws {
        let value: PropertyListValue = ["set": .set([1, "a"]), "null": .null]
        let back = try BinaryPropertyListReader().read(BinaryPropertyListWriter().write(value))
        #expect(back == value)
    }

    @Test func usesSmallestSizes() throws {
        let data = BinaryPropertyListWriter().write(["a": 1])
        let trailer = [UInt8](data.suffix(32))
        #expect(trailer[6] == 1)  // offsetIntSize
        #expect(trailer[7] == 1)  // objectRefSize
        // "a" is ASCII: marker 0x51; 1 is a one-byte integer: 0x10 0x01.
        #expect([UInt8](data).contains(0x51))
        let big = BinaryPropertyListWriter().write(.array((0..<300).map { .integer($0) }))
        #expect([UInt8](big.suffix(32))[7] == 2)
        #expect([UInt8](big.suffix(32))[6] == 2)
    }

    @Test func plistlibLoadsWhatWeWriteAndWeReadWhatItWrites() throws {
        // Python loads our bytes and writes them back in its own binary form; we must read that and find the
        // same values. Sets and the null marker are left out: plistlib supports neither.
        let script = """
            import plistlib, sys
            value = plistlib.load(open(sys.argv[1], 'rb'))
            sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=False))
            """
        let ours = BinaryPropertyListWriter().write(Self.sample)
        let theirs = try PythonOracle.run(script, input: ours)
        let back = try BinaryPropertyListReader().read(theirs)
        #expect(back == Self.sample)
    }

    @Test func plistlibSeesTheSameScalars() throws {
        let script = """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[1], 'rb'))
            print(v['unicode'], v['max'], v['min'], v['word'], v['real'], v['uid'].data, v['big uid'].data,
                  v['date'].isoformat(), v['data'].hex(), len(v['long string']), sep='|')
            """
        let text = try PythonOracle.text(script, input: BinaryPropertyListWriter().write(Self.sample))
        #expect(
            text == "héllo wörld ✓ 😀|9223372036854775807|-9223372036854775808|4294967295|3.25|1|70000"
                + "|2000-01-02T00:00:00|000102ff|300"
        )
    }

    @Test func readsTheMinimalArchiveFromTheFormatNotes() throws {
        // Section 7.1: the 140-byte keyed archive of the string "hi", byte for byte.
        var bytes: [UInt8] = Array("bplist00".utf8)
        bytes += [0xD4, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A]
        bytes += [0x59] + Array("$archiver".utf8) + [0x58] + Array("$version".utf8) + [0x54] + Array("$top".utf8)
        bytes += [0x58] + Array("$objects".utf8) + [0x5F, 0x10, 0x0F] + Array("NSKeyedArchiver".utf8)
        bytes += [0x12, 0x00, 0x01, 0x86, 0xA0, 0xD1, 0x08, 0x09, 0x54] + Array("root".utf8) + [0x80, 0x01]
        bytes += [0xA2, 0x0B, 0x0C, 0x55] + Array("$null".utf8) + [0x52] + Array("hi".utf8)
        #expect(bytes.count == 0x5F)
        bytes += [8, 17, 27, 36, 41, 50, 68, 73, 76, 81, 83, 86, 92]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(13) + be(0) + be(0x5F)
        #expect(bytes.count == 140)
        let value = try BinaryPropertyListReader().read(Data(bytes))
        #expect(value["$objects"] == ["$null", "hi"])
        #expect(value["$top"]?["root"] == .uid(1))
        #expect(value["$version"] == 100_000)
        let archive = try KeyedArchive(data: Data(bytes))
        #expect(try archive.string(archive.topValue(forKey: "root")) == "hi")

        // Our writer makes an archive of the same size (same objects, same smallest encodings).
        var writer = KeyedArchiveWriter()
        let hi = writer.addString("hi")
        let ours = try writer.encodedData(root: hi)
        #expect(ours.count == 140)
        #expect(try BinaryPropertyListReader().read(ours) == value)
    }

    @Test func readsSixteenByteIntegers() throws {
        // plistlib writes integers of 2^63 and above as 16-byte integers; small negative ones in 16 bytes are
        // sign-extended. Build one by hand: [ -2 as 128-bit ].
        var bytes: [UInt8] = Array("bplist00".utf8)
        bytes += [0xA1, 0x01]
        bytes += [0x14] + [UInt8](repeating: 0xFF, count: 15) + [0xFE]
        let table = bytes.count
        bytes += [8, 10]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(2) + be(0) + be(UInt64(table))
        #expect(try BinaryPropertyListReader().read(Data(bytes)) == [-2])
    }

    @Test func readsFloat32AndDates() throws {
        var bytes: [UInt8] = Array("bplist00".utf8)
        bytes += [0xA2, 0x01, 0x02]
        bytes += [0x22] + Array(withUnsafeBytes(of: Float(1.5).bitPattern.bigEndian) { Array($0) })
        bytes += [0x33] + Array(withUnsafeBytes(of: Double(60).bitPattern.bigEndian) { Array($0) })
        let table = bytes.count
        bytes += [8, 11, 16]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(3) + be(0) + be(UInt64(table))
        #expect(try BinaryPropertyListReader().read(Data(bytes)) == [1.5, .date(60)])
    }

    // MARK: Hostile input

    @Test("Truncated files throw with an offset", arguments: [0, 8, 20, 39, 60])
    func truncated(length: Int) throws {
        let data = BinaryPropertyListWriter().write(Self.sample)
        let error = #expect(throws: DecantError.self) {
            try BinaryPropertyListReader(path: "t.plist").read(data.prefix(length))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset != nil)
        #expect(error?.location?.path == "t.plist")
    }

    @Test func offsetTablePointingOutside() throws {
        var bytes = [UInt8](BinaryPropertyListWriter().write(["a": 1]))
        let tableOffset = Int(bytes[bytes.count - 1])
        bytes[tableOffset] = 0xF0  // object 0 now starts inside the offset table
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == tableOffset)
    }

    @Test func offsetTableItselfOutside() throws {
        var bytes = [UInt8](BinaryPropertyListWriter().write(["a": 1]))
        bytes[bytes.count - 1] = 0xFF
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == bytes.count - 8)
    }

    @Test func selfContainingArrayIsRejected() throws {
        // Object 0 is an array whose only element is object 0.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x00]
        bytes += [8]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(1) + be(0) + be(10)
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == 8)
        #expect(error?.message.contains("cycle") == true)
    }

    @Test func sharedObjectsAreNotACycle() throws {
        // An array holding the same string twice is a DAG, not a loop.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xA2, 0x01, 0x01, 0x51, 0x61]
        let table = bytes.count
        bytes += [8, 11]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(2) + be(0) + be(UInt64(table))
        #expect(try BinaryPropertyListReader().read(Data(bytes)) == ["a", "a"])
    }

    /// `levels` arrays each holding the next one twice, then an integer: 2^levels values as a tree.
    static func doublingDAG(levels: Int) -> Data {
        var bytes: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<levels {
            offsets.append(bytes.count)
            bytes += [0xA2, UInt8(index + 1), UInt8(index + 1)]
        }
        offsets.append(bytes.count)
        bytes += [0x10, 0x00]
        let table = bytes.count
        bytes += offsets.map { UInt8($0) }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(UInt64(offsets.count)) + be(0) + be(UInt64(table))
        return Data(bytes)
    }

    /// Objects shared by reference (16 objects, 2^15 leaves as a tree) read as the whole tree. That each is parsed
    /// once is not counted here; `referenceBombIsRefused` shows the bound that keeps a tree of 2^60 from being walked.
    @Test func sharedArraysReadAsTheWholeTree() throws {
        let value = try BinaryPropertyListReader().read(Self.doublingDAG(levels: 15))
        // The whole tree is there: 15 levels of two-element arrays, 2^15 leaves, each the integer 0.
        func leaves(_ value: PropertyListValue, depth: Int) -> (count: Int, wrong: Int) {
            guard depth < 15 else { return (1, value == .integer(0) ? 0 : 1) }
            guard case .array(let elements) = value, elements.count == 2 else { return (0, 1) }
            let first = leaves(elements[0], depth: depth + 1)
            return (first.count * 2, first.wrong * 2 + (elements[0] == elements[1] ? 0 : 1))
        }
        let tree = leaves(value, depth: 0)
        #expect(tree.count == 1 << 15)
        #expect(tree.wrong == 0)
    }

    @Test func referenceBombIsRefused() throws {
        // 60 levels: 2^60 values as a tree, which every later walk (references, JSON) would visit.
        let error = #expect(throws: DecantError.self) {
            try BinaryPropertyListReader(path: "bomb.plist").read(Self.doublingDAG(levels: 60))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "bomb.plist")
        #expect(error?.location?.offset != nil)
        #expect(error?.message.contains("more than 1000000 values") == true)
    }

    @Test func sixtyThousandNestedArraysAreRefused() throws {
        // Object i is a one-element array holding object i + 1; 4-byte references and offsets.
        let depth = 60_000
        var bytes: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<depth {
            offsets.append(bytes.count)
            bytes += [0xA1] + Self.bigEndian(UInt64(index + 1), size: 4)
        }
        offsets.append(bytes.count)
        bytes += [0x10, 0x00]
        let table = bytes.count
        for offset in offsets { bytes += Self.bigEndian(UInt64(offset), size: 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 4] + be(UInt64(offsets.count)) + be(0) + be(UInt64(table))
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("deeper than 512") == true)
    }

    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    @Test func depthLimit() throws {
        var value: PropertyListValue = 0
        for _ in 0..<40 { value = [value] }
        let data = BinaryPropertyListWriter().write(value)
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader(maximumDepth: 10).read(data) }
        #expect(error?.code == .malformedInput)
        #expect(try BinaryPropertyListReader().read(data) == value)
    }

    @Test func nonStringDictionaryKeyIsRejected() throws {
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xD1, 0x01, 0x01, 0x10, 0x05]
        let table = bytes.count
        bytes += [8, 11]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(2) + be(0) + be(UInt64(table))
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == 8)
    }

    @Test func hugeCountIsRejected() throws {
        // An array claiming 2^62 elements.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xAF, 0x13] + be(1 << 62)
        let table = bytes.count
        bytes += [8]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(1) + be(0) + be(UInt64(table))
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
    }

    @Test func referencePastObjectCountIsRejected() throws {
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x07]
        bytes += [8]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(1) + be(0) + be(10)
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == 9)
    }

    @Test func referencePastObjectCountInADictionaryIsNamedByItsOffset() throws {
        // {"a": "a", "b": <object 256>} with 2-byte references: the check reads a container's references in one go,
        // and still names the bad one (its second value, at byte 15).
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xD2, 0x00, 0x01, 0x00, 0x02, 0x00, 0x01, 0x01, 0x00]
        bytes += [0x51, 0x61, 0x51, 0x62]
        let table = bytes.count
        bytes += [8, 17, 19]
        bytes += [0, 0, 0, 0, 0, 0, 1, 2] + be(3) + be(0) + be(UInt64(table))
        let error = #expect(throws: DecantError.self) { try BinaryPropertyListReader().read(Data(bytes)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == 15)
        #expect(error?.message.contains("reference 256 is not below the object count 3") == true)
    }

    @Test func randomCorruptionNeverCrashes() throws {
        // Flip bytes all over a real-looking plist: every outcome must be a value or a DecantError.
        let original = [UInt8](BinaryPropertyListWriter().write(Self.sample))
        var generator = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            var bytes = original
            for _ in 0..<3 {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            do {
                _ = try BinaryPropertyListReader().read(Data(bytes))
            } catch let error as DecantError {
                #expect(error.location?.offset != nil)
            }
        }
    }
}

/// Eight big-endian bytes.
func be(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

/// A small deterministic random number generator for fuzz-style tests.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
