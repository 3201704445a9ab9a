/// The one grammar of a number written as text, shared by model default values and the expression and predicate
/// lexers: `[+-]digits[.digits][(e|E)[+-]digits]`, ASCII digits only, with at least one digit before or after
/// the point and nothing around it.
///
/// ```swift
/// NumberText.isDecimalLiteral("-1.5e3")   // true
/// NumberText.isDecimalLiteral("1e")       // false
/// ```
public enum NumberText: Sendable {
    /// Whether `text` is a number in the grammar above.
    public static func isDecimalLiteral(_ text: some StringProtocol) -> Bool {
        var bytes = Array(text.utf8)[...]
        if let sign = bytes.first, sign == 0x2B || sign == 0x2D { bytes = bytes.dropFirst() }
        return length(of: bytes) == bytes.count && !bytes.isEmpty
    }

    /// The length of the longest unsigned number in the grammar at the start of `bytes` (0 when none): digits, an
    /// optional fraction, and an exponent only when digits follow its `e` and sign.
    static func length(of bytes: ArraySlice<UInt8>) -> Int {
        func digits(from index: Int) -> Int {
            var end = index
            while end < bytes.endIndex, (0x30...0x39).contains(bytes[end]) { end += 1 }
            return end
        }
        var end = digits(from: bytes.startIndex)
        let integerDigits = end - bytes.startIndex
        if end < bytes.endIndex, bytes[end] == 0x2E {
            let fractionEnd = digits(from: end + 1)
            if fractionEnd > end + 1 || integerDigits > 0 { end = fractionEnd }
        }
        guard end > bytes.startIndex, integerDigits > 0 || end - bytes.startIndex > 1 else { return 0 }
        if end < bytes.endIndex, bytes[end] == 0x65 || bytes[end] == 0x45 {
            var exponent = end + 1
            if exponent < bytes.endIndex, bytes[exponent] == 0x2B || bytes[exponent] == 0x2D { exponent += 1 }
            let exponentEnd = digits(from: exponent)
            if exponentEnd > exponent { end = exponentEnd }
        }
        return end - bytes.startIndex
    }
}
