import DecantCore
package import Foundation

/// `NSDecimalNumber` as `NSKeyedArchiver` writes it (section 7.2 of the formats spec, RE): `NS.exponent`, `NS.length`
/// (16-bit mantissa words in use), `NS.negative`, `NS.compact`, `NS.mantissa.bo` (1: little-endian words) and
/// `NS.mantissa` (eight 16-bit words, 16 bytes: a 128-bit integer). The value is mantissa × 10^exponent; a compact
/// value has no trailing zero digit in its mantissa. Built from the decimal's text, since the fields of `Decimal`
/// are not public on Linux.
package enum ArchivedDecimal {
    /// The class `NSKeyedArchiver` names for an `NSDecimalNumber` (RE: archive readers in the wild match this name).
    package static let className = "NSDecimalNumberPlaceholder"
    package static let classes = ["NSDecimalNumberPlaceholder", "NSDecimalNumber", "NSNumber", "NSValue", "NSObject"]
    package static let keys = ["NS.exponent", "NS.length", "NS.negative", "NS.compact", "NS.mantissa.bo", "NS.mantissa"]

    /// The coder keys of `decimal`. NaN (`NSDecimalNumber.notANumber`) is, as in `NSDecimal`, a length of 0 with the
    /// negative flag set.
    /// - Throws: `.unsupportedFormat` for a mantissa beyond 128 bits.
    package static func fields(of decimal: Decimal) throws -> PropertyListDictionary {
        if decimal.isNaN {
            return [
                "NS.exponent": .integer(0), "NS.length": .integer(0), "NS.negative": .bool(true),
                "NS.compact": .bool(true), "NS.mantissa.bo": .integer(1), "NS.mantissa": .data(Data(count: 16)),
            ]
        }
        var text = decimal.description
        let negative = text.hasPrefix("-")
        if negative { text.removeFirst() }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
        var exponent = -(parts.count > 1 ? parts[1].count : 0)
        while digits.count > 1, digits.hasSuffix("0") {
            digits.removeLast()
            exponent += 1
        }
        var words = [UInt16](repeating: 0, count: 8)
        for digit in digits.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else {
                throw DecantError(.unsupportedFormat, "'\(decimal)' is no plain decimal number")
            }
            var carry = UInt32(digit - UInt8(ascii: "0"))
            for index in words.indices {
                let product = UInt32(words[index]) * 10 + carry
                words[index] = UInt16(truncatingIfNeeded: product)
                carry = product >> 16
            }
            guard carry == 0 else {
                throw DecantError(.unsupportedFormat, "'\(decimal)' has more digits than an NSDecimalNumber holds")
            }
        }
        let length = (words.lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0
        guard (-128...127).contains(exponent) else {
            throw DecantError(.unsupportedFormat, "'\(decimal)' has an exponent beyond an NSDecimalNumber's")
        }
        var bytes = Data()
        for word in words { bytes.append(contentsOf: [UInt8(word & 0xFF), UInt8(word >> 8)]) }
        return [
            "NS.exponent": .integer(Int64(length == 0 ? 0 : exponent)), "NS.length": .integer(Int64(length)),
            "NS.negative": .bool(negative && length > 0), "NS.compact": .bool(true), "NS.mantissa.bo": .integer(1),
            "NS.mantissa": .data(bytes),
        ]
    }

    /// The decimal an `NSDecimalNumber` object holds.
    /// - Throws: `.malformedInput` when a field is missing or out of range.
    package static func decimal(from object: ArchivedObject) throws -> Decimal {
        func fail(_ message: String) -> DecantError {
            DecantError(
                .malformedInput, "NSDecimalNumber: \(message)", at: Location(object: "$objects[\(object.index)]"))
        }
        guard case .integer(let exponent)? = object["NS.exponent"], (-128...127).contains(exponent),
            case .integer(let length)? = object["NS.length"], (0...8).contains(length),
            case .data(let bytes)? = object["NS.mantissa"], bytes.count >= Int(length) * 2
        else { throw fail("expected NS.exponent (-128…127), NS.length (0…8) and NS.mantissa of that many words") }
        let negative: Bool
        switch object["NS.negative"] {
        case .bool(let flag)?: negative = flag
        case .integer(let number)?: negative = number != 0
        default: negative = false
        }
        let bigEndian = object["NS.mantissa.bo"]?.integerValue == 0
        let raw = [UInt8](bytes)
        var words = (0..<Int(length)).map { index -> UInt32 in
            let low = UInt32(raw[index * 2 + (bigEndian ? 1 : 0)])
            let high = UInt32(raw[index * 2 + (bigEndian ? 0 : 1)])
            return high << 8 | low
        }
        // Decimal digits by repeated division by ten, lowest first.
        var digits: [UInt8] = []
        while words.contains(where: { $0 != 0 }) {
            var remainder: UInt32 = 0
            for index in words.indices.reversed() {
                let value = remainder << 16 | words[index]
                words[index] = value / 10
                remainder = value % 10
            }
            digits.append(UInt8(remainder))
        }
        // A length of 0 is zero, or with the negative flag NaN (`NSDecimalIsNotANumber`).
        guard !digits.isEmpty else { return length == 0 && negative ? Decimal.nan : Decimal(0) }
        var text = String(digits.reversed().map { Character(String($0)) })
        if exponent >= 0 {
            text += String(repeating: "0", count: Int(exponent))
        } else {
            let places = Int(-exponent)
            if text.count <= places { text = String(repeating: "0", count: places - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -places))
        }
        guard let decimal = Decimal(string: (negative ? "-" : "") + text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw fail("'\(text)' is not a decimal") }
        return decimal
    }
}
