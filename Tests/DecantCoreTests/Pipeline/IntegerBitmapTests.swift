import DecantCore
import Testing

/// The bits behind key sets' integers answer as a `Set<Int64>` does for every integer whose chunk they made, and
/// say which ones they do not hold.
@Suite("Integer bitmap")
struct IntegerBitmapTests {
    /// Integers around chunk boundaries, zero, negative and the extremes.
    static let edges: [Int64] = [
        0, 1, -1, 4_095, 4_096, 4_097, -4_096, -4_097, 8_191, 1 << 40, -(1 << 40), .max, .max - 1, .min, .min + 1,
    ]

    @Test("answers as a Set does, for dense, negative and extreme integers")
    func answersAsASetDoes() {
        var bitmap = IntegerBitmap()
        var model = Set<Int64>()
        var generator = SplitMix(seed: 7)
        let keys = Self.edges + (0..<3_000).map { _ in Int64(generator.next() % 20_000) - 2_000 }
        for key in keys + keys.shuffled(using: &generator) {
            #expect(bitmap.insert(key, mayGrow: true) == model.insert(key).inserted, "\(key)")
            #expect(bitmap.count == model.count)
        }
        for key in Self.edges + (Int64(-3_000)..<20_000).map({ $0 }) + [2 << 40, .min + 4_096] {
            // A key whose chunk was never made is not held (nil), never falsely held.
            #expect((bitmap.contains(key) ?? false) == model.contains(key), "\(key)")
        }
    }

    @Test("a chunk it may not make leaves the key out and says so, and other chunks keep working")
    func aRefusedChunkHoldsNothing() {
        var bitmap = IntegerBitmap()
        #expect(bitmap.insert(10, mayGrow: true) == true)
        #expect(bitmap.insert(11, mayGrow: false) == true)
        #expect(bitmap.insert(10, mayGrow: false) == false)
        #expect(bitmap.insert(5_000, mayGrow: false) == nil)
        #expect(bitmap.contains(5_000) == nil)
        #expect(bitmap.contains(4_095) == false)
        #expect(bitmap.contains(11) == true)
        #expect(bitmap.chunkCount == 1)
        #expect(bitmap.count == 2)
        // The last chunk used is remembered; going back to another still answers from the right one.
        #expect(bitmap.insert(-1, mayGrow: true) == true)
        #expect(bitmap.contains(10) == true)
        #expect(bitmap.contains(-1) == true)
        #expect(bitmap.contains(-4_096) == false)
        #expect(bitmap.chunkCount == 2)
    }
}

/// A small seeded generator, so that a failure can be replayed.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var bits = state
        bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
        return bits ^ (bits >> 31)
    }
}
