/// The shortest decimal that reads back as a Double, for Doubles from 1 up to 2^40, found with integer arithmetic
/// and no String: the digits `Double.description` prints, without its allocation.
///
/// ```swift
/// ShortestDecimal(700_000_000.25)   // integer 700000000, fraction 25, fractionDigits 2 ("700000000.25")
/// ```
///
/// A Double `x = m·2^-s` (m of 53 bits) reads back from every decimal strictly inside the rounding interval around
/// it, the half-way points to its neighbours (which belong to it too when m is even; the lower neighbour is half as
/// far below a power of two). From 1 up the interval is narrower than 1, so it holds at most one integer and the
/// decimal with the fewest significant digits is the one with the fewest fraction digits; of those, `description`
/// prints the one nearest `x`. Working in units of 2^-(s+2), every bound is an integer, and `bound·10^k / 2^(s+2)`
/// gives the k-digit decimals in the interval exactly in 128 bits. The cases where a reading could depend on how the
/// interval's ends or a tie are treated (a candidate exactly on an end, `x` exactly half-way between two candidates)
/// return nil: the caller then asks `description`, so the digits are always the ones it prints.
struct ShortestDecimal: Equatable {
    /// The digits before the point.
    var integer: UInt64
    /// The digits after the point as an integer below 10^fractionDigits (leading zeros implied).
    var fraction: UInt64
    /// How many digits follow the point (0 for a whole number); the last one is not 0.
    var fractionDigits: Int

    /// The largest value handled: 2^40 (1.1e12).
    static let limit: Double = 1_099_511_627_776

    /// The shortest decimal of `value`, or nil when `value` is not in `1 ..< 2^40` or is one of the rare ambiguous
    /// cases (see the type's documentation).
    init?(_ value: Double) {
        guard value >= 1, value < Self.limit else { return nil }
        let bits = value.bitPattern
        let exponent = Int(truncatingIfNeeded: bits >> 52) - 1023  // 0...39
        let significand = (bits & ((1 << 52) - 1)) | (1 << 52)
        // Units of 2^-shift with shift = 52 - exponent + 2 (15...54): the value, the interval's upper and lower end.
        let shift = UInt64(54 - exponent)
        let center = significand << 2
        let upper = center + 2
        let lower = significand == 1 << 52 ? center - 1 : center - 2
        let mask: UInt64 = (1 << shift) - 1
        let half: UInt64 = 1 << (shift - 1)
        // 10^17 times an interval end stays below 2^113, and its quotient below 2^64 (checked anyway).
        var power: UInt64 = 1
        for digits in 0...17 {
            defer { power &*= 10 }
            let (lowHigh, lowLow) = lower.multipliedFullWidth(by: power)
            let (highHigh, highLow) = upper.multipliedFullWidth(by: power)
            guard highHigh >> shift == 0 else { return nil }
            let lowRemainder = lowLow & mask
            let highRemainder = highLow & mask
            // A candidate exactly on an end: whether it reads back depends on the tie rule; leave it to description.
            if lowRemainder == 0 || highRemainder == 0 { return nil }
            let first = (lowHigh << (64 - shift) | lowLow >> shift) + 1
            let last = highHigh << (64 - shift) | highLow >> shift
            guard first <= last else { continue }
            let (middleHigh, middleLow) = center.multipliedFullWidth(by: power)
            let middleRemainder = middleLow & mask
            // Two candidates equally near: leave the choice to description.
            if middleRemainder == half { return nil }
            let middle = middleHigh << (64 - shift) | middleLow >> shift
            let nearest = middleRemainder > half ? middle + 1 : middle
            let chosen = min(max(nearest, first), last)
            self.integer = chosen / power
            self.fraction = chosen % power
            self.fractionDigits = digits
            return
        }
        return nil
    }

    init(integer: UInt64, fraction: UInt64, fractionDigits: Int) {
        self.integer = integer
        self.fraction = fraction
        self.fractionDigits = fractionDigits
    }
}
