@testable import DecantFormats
@testable import DecantCodecs
import Foundation
import Testing

/// The shortest decimals the NDJSON writer's dates are made of: always the digits `description` prints, and the date
/// text byte for byte what the description-based ``ExactDate/text(referenceSeconds:)`` writes.
@Suite("Shortest decimals")
struct ShortestDecimalTests {
    /// `integer.fraction` as `description` spells a Double from 1 to 2^53 (`700000000.0` for a whole number).
    static func spelled(_ decimal: ShortestDecimal) -> String {
        guard decimal.fractionDigits > 0 else { return "\(decimal.integer).0" }
        let fraction = String(decimal.fraction)
        return "\(decimal.integer)." + String(repeating: "0", count: decimal.fractionDigits - fraction.count) + fraction
    }

    /// Values where shortest-digit algorithms go wrong: powers of two and ten and their neighbours, few-bit
    /// fractions (ties), few-digit decimals, the benchmark's dates, and random bit patterns across the range.
    static func values(count: Int) -> [Double] {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [1, 1.5, 2, 10, 0.1 + 0.9, 700_000_000.25, 978_307_200, 3.155e11, 1.0995e12]
        var power = 1.0
        while power < ShortestDecimal.limit * 2 {
            for start in [power, power * 5, power * 10 / 8] {
                var up = start
                var down = start
                for _ in 0..<200 {
                    values.append(up)
                    values.append(down)
                    up = up.nextUp
                    down = down.nextDown
                }
            }
            power *= 2
        }
        for _ in 0..<count {
            let low = (1.0).bitPattern
            values.append(Double(bitPattern: UInt64.random(in: low..<ShortestDecimal.limit.bitPattern, using: &generator)))
            values.append(Double.random(in: 1..<1e12, using: &generator))
            // k decimal digits
            let digits = Int.random(in: 0...6, using: &generator)
            let scale = (0..<digits).reduce(1.0) { value, _ in value * 10 }
            values.append(Double(Int64.random(in: 1...999_999_999_999, using: &generator)) / scale)
            // a few fraction bits: exact binary values, often half-way between two shortest candidates
            let exponent = Int.random(in: 0...39, using: &generator)
            let bits = Int.random(in: 1...(52 - exponent), using: &generator)
            let whole = Double(UInt64.random(in: (1 << UInt64(exponent))..<(1 << UInt64(exponent + 1)), using: &generator))
            let part = Double(UInt64.random(in: 0..<(1 << UInt64(bits)), using: &generator)) / Double(1 << UInt64(bits))
            values.append(whole + part)
            let key = Double(Int.random(in: 1...10_000_000, using: &generator))
            values.append(700_000_000 + key * 13.25)
        }
        return values
    }

    @Test func theDigitsAreTheOnesDescriptionPrints() {
        var answered = 0
        let values = Self.values(count: 60_000)
        for value in values {
            guard let decimal = ShortestDecimal(value) else {
                // Only values outside 1 ..< 2^40 and the rare ambiguous cases are left to description.
                continue
            }
            answered += 1
            #expect(Self.spelled(decimal) == value.description, "\(value.description)")
        }
        #expect(answered > values.count * 9 / 10)
    }

    @Test(
        "values outside 1 ..< 2^40 are left to description",
        arguments: [0, 0.5, 0.999_999_999, -1, -700_000_000.25, 1_099_511_627_776, 1e15, .infinity, .nan, -0.0])
    func outside(value: Double) {
        #expect(ShortestDecimal(value) == nil)
    }

    @Test func examples() {
        #expect(ShortestDecimal(700_000_000.25) == ShortestDecimal(integer: 700_000_000, fraction: 25, fractionDigits: 2))
        #expect(ShortestDecimal(1) == ShortestDecimal(integer: 1, fraction: 0, fractionDigits: 0))
        #expect(ShortestDecimal(1.05) == ShortestDecimal(integer: 1, fraction: 5, fractionDigits: 2))
        #expect(ShortestDecimal(0.1 + 0.2 + 1) == ShortestDecimal(integer: 1, fraction: 3, fractionDigits: 1))
    }

    /// The writer's date text is exactly ``ExactDate/text(referenceSeconds:)``'s, which spells `description`'s digits
    /// and checks they read back, for dates before and after 2001, and nothing is appended when there is none.
    @Test func dateTextIsByteForByteTheDescriptionBasedText() {
        var generator = SystemRandomNumberGenerator()
        var values = Self.values(count: 20_000)
        values += [0, -0.0, 0.5, 1e-7, 0.0001, -0.25, -86_400.5, 1e12, 3.2e11, 2.5e11 + 0.125, .nan, .infinity, 1e-300]
        for _ in 0..<20_000 {
            values.append(Double.random(in: -3e9...3e9, using: &generator))
            values.append(Double(Int64.random(in: -3_000_000_000...3_000_000_000, using: &generator)) / 100)
            values.append(Double.random(in: 0..<1, using: &generator))
        }
        for value in values {
            var output: [UInt8] = [0x22]
            let written = ExactDate.appendText(referenceSeconds: value, to: &output)
            let expected = ExactDate.text(referenceSeconds: value)
            #expect(written == (expected != nil), "\(value)")
            #expect(String(decoding: output.dropFirst(), as: UTF8.self) == (expected ?? ""), "\(value)")
        }
    }
}
