@testable import DecantFormats
@testable import DecantCodecs
import Foundation
import Testing

/// ISO 8601 text for Core Data dates that reads back to the same Double.
@Suite("Exact ISO 8601 dates")
struct ExactDateTests {
    @Test func everyDateOfFourCenturiesHasExactText() throws {
        var generator = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<20_000 {
            // 1900...2300, with fractions from whole seconds down to the last bit.
            let whole = Double(Int64.random(in: -3_187_296_000...9_435_484_800, using: &generator))
            let seconds: Double
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: seconds = whole
            case 1: seconds = whole + Double(Int.random(in: 0..<1000, using: &generator)) / 1000
            case 2: seconds = whole + Double.random(in: 0..<1, using: &generator)
            default: seconds = Double(bitPattern: whole.bitPattern &+ UInt64.random(in: 0..<1000, using: &generator))
            }
            let text = try #require(ExactDate.text(referenceSeconds: seconds), "\(seconds)")
            guard case .success(let back) = ExactDate.referenceSeconds(iso: text) else {
                Issue.record("\(text) does not read back")
                continue
            }
            #expect(back.bitPattern == seconds.bitPattern, "\(seconds) → \(text) → \(back)")
            // Foundation agrees on the calendar part (whole seconds, rounded down).
            let floor = Date(timeIntervalSinceReferenceDate: seconds.rounded(.down))
            #expect(text.hasPrefix(String(formatter.string(from: floor).dropLast())), "\(text)")
        }
    }

    @Test(
        "dates ISO 8601 cannot hold exactly have no text",
        arguments: [
            -0.0, .nan, .infinity, -.infinity, 1e15, -1e15, 1e-300,
        ])
    func noText(seconds: Double) {
        #expect(ExactDate.text(referenceSeconds: seconds) == nil)
    }

    @Test func negativeFractionsCountBackFromTheNextSecond() {
        #expect(ExactDate.text(referenceSeconds: -0.25) == "2000-12-31T23:59:59.75Z")
        #expect(ExactDate.text(referenceSeconds: -86_400.5) == "2000-12-30T23:59:59.5Z")
        #expect(ExactDate.text(referenceSeconds: 0) == "2001-01-01T00:00:00Z")
        #expect(ExactDate.text(referenceSeconds: -63_113_904_000) == "0001-01-01T00:00:00Z")
        #expect(ExactDate.text(referenceSeconds: -63_113_904_000.5) == nil)
    }

    @Test(
        "decimal text expands scientific notation",
        arguments: [
            ("1e-07", "0", "0000001"), ("1.5e+20", "150000000000000000000", ""), ("0.0", "0", ""), ("12.50", "12", "5"),
            ("007", "", ""),
        ])
    func decimalText(text: String, integer: String, fraction: String) {
        let parts = DecimalText(text)
        #expect(parts?.integer ?? "" == integer)
        #expect(parts?.fraction ?? "" == fraction)
    }
}
