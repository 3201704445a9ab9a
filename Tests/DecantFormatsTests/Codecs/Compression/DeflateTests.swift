import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

@Suite("Raw DEFLATE")
struct DeflateTests {
    static let text = Data(String(repeating: "Core Data keeps a compressed model cache. ", count: 200).utf8)

    @Test func inflatesPythonOutput() throws {
        let blob = try PythonOracle.run(
            """
            import sys, zlib
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            sys.stdout.buffer.write(c.compress(open(sys.argv[1], 'rb').read()) + c.flush())
            """,
            input: Self.text
        )
        #expect(blob.count < Self.text.count / 10)
        #expect(try Deflate.inflate(blob) == Self.text)
    }

    @Test func pythonInflatesOurOutput() throws {
        let ours = try Deflate.deflate(Self.text)
        let back = try PythonOracle.run(
            "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read(), -15))",
            input: ours
        )
        #expect(back == Self.text)
    }

    @Test("Round trip", arguments: [0, 1, 100, 200_000])
    func roundTrip(size: Int) throws {
        var generator = SplitMix64(seed: UInt64(size))
        let data = Data((0..<size).map { _ in UInt8(generator.next() % 7) })
        #expect(try Deflate.inflate(try Deflate.deflate(data)) == data)
    }

    @Test func refusesBombs() throws {
        let zeros = try Deflate.deflate(Data(count: 10_000_000))
        #expect(zeros.count < 20_000)
        let error = #expect(throws: DecantError.self) {
            try Deflate.inflate(zeros, maximumOutputSize: 1_000_000, path: "bomb.sqlite")
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "bomb.sqlite")
        #expect(error?.message.contains("1000000") == true)
    }

    @Test func truncatedAndCorruptStreams() throws {
        let blob = try Deflate.deflate(Self.text)
        let truncated = #expect(throws: DecantError.self) { try Deflate.inflate(blob.prefix(blob.count / 2)) }
        #expect(truncated?.code == .malformedInput)
        let corrupt = #expect(throws: DecantError.self) { try Deflate.inflate(Data([0xFF, 0xFF, 0xFF, 0xFF])) }
        #expect(corrupt?.code == .malformedInput)
        #expect(throws: DecantError.self) { try Deflate.inflate(Data()) }
    }
}
