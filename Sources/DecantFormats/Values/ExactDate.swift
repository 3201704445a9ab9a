/// Dates as ISO 8601 text that converts back to the same Double, bit for bit.
///
/// Core Data keeps a date as a Double of seconds since 2001-01-01T00:00:00Z. The shortest decimal that reads back
/// as that Double (Swift's `description`) is exact; written as an ISO 8601 date in UTC with those decimals as the
/// fraction of a second (`2024-05-19T18:14:06.84Z`), it denotes the same decimal number, and reading it back adds
/// the parts as decimal text and rounds once, so the Double comes back unchanged. Dates ISO 8601 cannot hold
/// (years outside 1...9999, NaN, infinities, -0.0, absurdly fine fractions) have no text here: writers fall back to
/// the number of seconds.
///
/// The calendar is the proleptic Gregorian calendar, as ISO 8601 specifies (no Julian switch in 1582).
enum ExactDate {
    /// Seconds from 1970-01-01 to 2001-01-01.
    static let referenceOffset: Int64 = 978_307_200
    /// Fractions longer than this are written as numbers instead.
    static let maximumFractionDigits = 40

    /// The date `seconds` after 2001-01-01T00:00:00Z as ISO 8601 text in UTC that reads back to exactly `seconds`,
    /// or nil when there is none.
    static func text(referenceSeconds seconds: Double) -> String? {
        guard seconds.isFinite, seconds.magnitude < 1e12, let parts = DecimalText(seconds.magnitude.description) else {
            return nil
        }
        guard let integer = Int64(parts.integer), parts.fraction.count <= maximumFractionDigits else { return nil }
        var whole: Int64
        var fraction: String
        if seconds.sign == .minus && !parts.fraction.isEmpty {
            whole = -integer - 1
            fraction = DecimalText.complement(parts.fraction)
        } else {
            whole = seconds.sign == .minus ? -integer : integer
            fraction = parts.fraction
        }
        let unix = whole + referenceOffset
        let days = floorDivide(unix, 86_400)
        let secondOfDay = unix - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        guard (1...9999).contains(year) else { return nil }
        var text =
            pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if !fraction.isEmpty { text += "." + fraction }
        text += "Z"
        // The text must read back to the very same bits (it does not for -0.0, which it cannot tell from 0.0).
        guard case .success(let back) = referenceSeconds(iso: text), back.bitPattern == seconds.bitPattern else {
            return nil
        }
        return text
    }

    /// Appends the ISO 8601 text of ``text(referenceSeconds:)`` for `seconds` to `output` and returns true, or
    /// returns false (appending nothing) when there is none.
    ///
    /// Dates from 2001 on whose shortest text is plain decimals (`700000000.25`, no exponent) are written straight
    /// from those digits: the ISO text then denotes the very decimal number that reads back as `seconds`, so it needs
    /// no check. From one second on, the digits come from ``ShortestDecimal`` (no String is made); below, or in the
    /// rare cases it leaves to `description`, from `description`. Everything else goes through
    /// ``text(referenceSeconds:)``.
    static func appendText(referenceSeconds seconds: Double, to output: inout [UInt8]) -> Bool {
        if let shortest = ShortestDecimal(seconds) {
            return appendText(whole: Int64(shortest.integer), output: &output) { output in
                guard shortest.fractionDigits > 0 else { return }
                output.append(UInt8(ascii: "."))
                // At most 17 digits, with their leading zeros; the last is not 0 (the shortest has no trailing zeros).
                appendDigits(Int64(shortest.fraction), shortest.fractionDigits, to: &output)
            }
        }
        if seconds.sign == .plus, seconds < 1e12 {
            var shortest = seconds.description
            let written: Bool? = shortest.withUTF8 { digits in
                var integer: Int64 = 0
                var index = 0
                while index < digits.count, JSONNumberSyntax.isDigit(digits[index]) {
                    integer = integer * 10 + Int64(digits[index] - 0x30)
                    index += 1
                }
                guard index > 0, index < digits.count, digits[index] == UInt8(ascii: ".") else { return nil }
                let fractionStart = index + 1
                var fractionEnd = fractionStart
                while fractionEnd < digits.count, JSONNumberSyntax.isDigit(digits[fractionEnd]) { fractionEnd += 1 }
                guard fractionEnd == digits.count, fractionEnd > fractionStart else { return nil }
                while fractionEnd > fractionStart, digits[fractionEnd - 1] == UInt8(ascii: "0") { fractionEnd -= 1 }
                guard fractionEnd - fractionStart <= maximumFractionDigits else { return nil }
                return appendText(whole: integer, output: &output) { output in
                    guard fractionEnd > fractionStart else { return }
                    output.append(UInt8(ascii: "."))
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[fractionStart..<fractionEnd]))
                }
            }
            if let written { return written }
        }
        guard let text = text(referenceSeconds: seconds) else { return false }
        output.append(contentsOf: text.utf8)
        return true
    }

    /// Appends the ISO text of `whole` seconds after 2001 (not negative), with `fraction` appending the point and
    /// the fraction digits, if any, before the `Z`; returns false (appending nothing) when the year is past 9999.
    @inline(__always)
    private static func appendText(
        whole: Int64, output: inout [UInt8], fraction: (inout [UInt8]) -> Void
    ) -> Bool {
        let unix = whole + referenceOffset
        let days = floorDivide(unix, 86_400)
        let secondOfDay = unix - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        guard (1...9999).contains(year) else { return false }
        appendDigits(year, 4, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(month, 2, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(day, 2, to: &output)
        output.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, 2, to: &output)
        fraction(&output)
        output.append(UInt8(ascii: "Z"))
        return true
    }

    /// Appends a non-negative `value` of at most `width` digits with leading zeros.
    @inline(__always)
    private static func appendDigits(_ value: Int64, _ width: Int, to output: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            output.append(0x30 + UInt8(truncatingIfNeeded: rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Reads an ISO 8601 date: `YYYY-MM-DD`, optionally followed by `T` (or a space) and `hh:mm`, `hh:mm:ss` or
    /// `hh:mm:ss.fraction`, and by `Z` or an offset (`+02:00`, `+0200`, `+02`). Without an offset the time is UTC.
    /// Returns seconds since 2001-01-01T00:00:00Z, the Double nearest to the exact instant the text denotes.
    static func referenceSeconds(iso text: String) -> Result<Double, ISODateError> {
        var text = text
        return text.withUTF8 { referenceSeconds(isoUTF8: UnsafeRawBufferPointer($0)) }
    }

    /// ``referenceSeconds(iso:)`` of UTF-8 bytes.
    static func referenceSeconds(isoUTF8 bytes: UnsafeRawBufferPointer) -> Result<Double, ISODateError> {
        var scanner = ISOScanner(bytes)
        guard let year = scanner.number(digits: 4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(digits: 2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(digits: 2)
        else { return .failure(.syntax) }
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return .failure(.outOfRange) }
        var hour: Int64 = 0
        var minute: Int64 = 0
        var second: Int64 = 0
        var fraction = 0..<0
        var offset: Int64 = 0
        if scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")) {
            guard let h = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")), let m = scanner.number(digits: 2)
            else { return .failure(.syntax) }
            hour = h
            minute = m
            if scanner.take(UInt8(ascii: ":")) {
                guard let s = scanner.number(digits: 2) else { return .failure(.syntax) }
                second = s
                if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                    fraction = scanner.digits()
                    guard !fraction.isEmpty else { return .failure(.syntax) }
                }
            }
            guard hour < 24, minute < 60, second < 60 else { return .failure(.outOfRange) }
            if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let offsetHours = scanner.number(digits: 2) else { return .failure(.syntax) }
                var offsetMinutes: Int64 = 0
                if scanner.take(UInt8(ascii: ":")) {
                    guard let value = scanner.number(digits: 2) else { return .failure(.syntax) }
                    offsetMinutes = value
                } else if let value = scanner.number(digits: 2) {
                    offsetMinutes = value
                }
                guard offsetHours < 24, offsetMinutes < 60 else { return .failure(.outOfRange) }
                offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
            }
        }
        guard scanner.isAtEnd else { return .failure(.syntax) }
        let days = days(fromCivil: year, month, day)
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset - referenceOffset
        return .success(compose(whole: whole, fractionDigits: UnsafeRawBufferPointer(rebasing: bytes[fraction])))
    }

    /// Powers of ten that Doubles hold exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { (exponent: Int) -> Double in
        var power = 1.0
        for _ in 0..<exponent { power *= 10 }
        return power
    }

    /// `whole + 0.digits`, rounded once to the nearest Double.
    ///
    /// When `whole` and the digits make an integer `n` below 2^53 over `10^k` (k ≤ 22), both are exact Doubles and
    /// one IEEE division rounds `n / 10^k` correctly, exactly as reading the decimal text does; otherwise the
    /// decimal text is read (``compose(whole:fraction:)``).
    static func compose(whole: Int64, fractionDigits digits: UnsafeRawBufferPointer) -> Double {
        var count = digits.count
        while count > 0, digits[count - 1] == UInt8(ascii: "0") { count -= 1 }
        if count <= 15, whole.magnitude < 1 << 53 {
            var numerator = whole
            var overflow = false
            for index in 0..<count {
                let (scaled, high) = numerator.multipliedReportingOverflow(by: 10)
                let (next, low) = scaled.addingReportingOverflow(Int64(digits[index] - 0x30))
                overflow = overflow || high || low
                numerator = next
            }
            if !overflow, numerator.magnitude <= 1 << 53 {
                return Double(numerator) / exactPowersOfTen[count]
            }
        }
        return compose(whole: whole, fraction: String(decoding: digits, as: UTF8.self))
    }

    /// `whole + 0.fraction`, computed as decimal text and rounded once to the nearest Double.
    static func compose(whole: Int64, fraction: String) -> Double {
        var digits = fraction
        while digits.hasSuffix("0") { digits.removeLast() }
        let text: String
        if digits.isEmpty {
            text = String(whole)
        } else if whole >= 0 {
            text = "\(whole).\(digits)"
        } else {
            // whole + 0.f = -((|whole| - 1) + (1 - 0.f))
            text = "-\(-whole - 1).\(DecimalText.complement(digits))"
        }
        return Double(text) ?? .nan
    }

    // MARK: Calendar (proleptic Gregorian; H. Hinnant's algorithms)

    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Why text is not an ISO 8601 date.
enum ISODateError: Error {
    /// Not of the form `YYYY-MM-DD[Thh:mm[:ss[.fff]]][Z|±hh:mm]`.
    case syntax
    /// A month, day, hour, minute, second or offset out of its range, or a year outside 1...9999.
    case outOfRange
}

/// A cursor over the bytes of an ISO 8601 date.
private struct ISOScanner {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func number(digits count: Int) -> Int64? {
        guard index + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[index..<index + count] {
            guard JSONNumberSyntax.isDigit(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        index += count
        return value
    }

    /// The range of the digits at the cursor.
    mutating func digits() -> Range<Int> {
        let start = index
        while index < bytes.count, JSONNumberSyntax.isDigit(bytes[index]) { index += 1 }
        return start..<index
    }

    mutating func sign() -> Int64? {
        if take(UInt8(ascii: "+")) { return 1 }
        if take(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}

/// A non-negative decimal number as the digits before and after its point, expanded from scientific notation.
struct DecimalText {
    /// The integer digits, without leading zeros ("0" for none).
    var integer: String
    /// The fraction digits, without trailing zeros.
    var fraction: String

    /// Expands a non-negative number's text (`12.5`, `1e-07`, `1.5e+20`); nil for anything else.
    init?(_ text: String) {
        guard JSONNumberSyntax.isValid(text), !text.hasPrefix("-") else { return nil }
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            guard let value = Int(text[text.index(after: e)...]), value.magnitude < 100_000 else { return nil }
            exponent = value
        }
        var digits = ""
        var point = mantissa.count
        if let dot = mantissa.firstIndex(of: ".") {
            point = mantissa.distance(from: mantissa.startIndex, to: dot)
            digits = String(mantissa[..<dot]) + String(mantissa[mantissa.index(after: dot)...])
        } else {
            digits = String(mantissa)
        }
        point += exponent
        var integer: String
        var fraction: String
        if point <= 0 {
            integer = "0"
            fraction = String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            integer = digits + String(repeating: "0", count: point - digits.count)
            fraction = ""
        } else {
            integer = String(digits.prefix(point))
            fraction = String(digits.dropFirst(point))
        }
        while integer.count > 1 && integer.hasPrefix("0") { integer.removeFirst() }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        self.integer = integer
        self.fraction = fraction
    }

    /// `1 - 0.digits` as fraction digits (for non-zero `digits` without trailing zeros): 10^n − digits, n digits.
    static func complement(_ digits: String) -> String {
        var result = Array(digits.utf8)
        guard let last = result.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return "" }
        for index in result.indices {
            let digit = result[index] - 0x30
            if index < last {
                result[index] = 0x30 + 9 - digit
            } else if index == last {
                result[index] = 0x30 + 10 - digit
            } else {
                result[index] = 0x30
            }
        }
        var text = String(decoding: result, as: UTF8.self)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
