/// The one grammar of a number written as text, shared by model default values (``AttributeDefault``) and the
/// lexer of value expressions and predicates: ASCII digits, then an optional fraction, then an optional exponent —
/// `digits[.digits][(e|E)[+-]digits]` or `.digits[(e|E)[+-]digits]` — with an optional sign before it where the
/// context allows one. A point needs a digit after it (`1.` is not a number), and an `e` needs digits after it
/// and its sign (`1e` is not a number, rather than the number 1 and a name `e`).
///
/// ```swift
/// NumberText.isDecimalLiteral("-1.5e3")   // true
/// NumberText.isDecimalLiteral(".5")       // true
/// NumberText.isDecimalLiteral("1e")       // false
/// ```
public enum NumberText: Sendable {
    /// What starts at a position of a text.
    enum Scan: Equatable {
        /// No number starts here.
        case none
        /// An unsigned number of `length` scalars; `isInteger` when it has neither a fraction nor an exponent.
        case number(length: Int, isInteger: Bool)
        /// A number whose exponent has no digits, `length` scalars long with its `e` and sign.
        case malformed(length: Int)
    }

    /// The text of `NSDecimalNumber.notANumber`, which a Decimal attribute of a SQLite store can hold (artsy's
    /// fixtures keep it in `ZARTWORK.ZDIAMETER`): every format reads and writes a decimal NaN as this text.
    public static let decimalNotANumber = "NaN"

    /// Whether `text` is, as a whole, a number in the grammar above, with an optional sign.
    public static func isDecimalLiteral(_ text: some StringProtocol) -> Bool {
        var scalars = Array(text.unicodeScalars)[...]
        if let sign = scalars.first, sign == "+" || sign == "-" { scalars = scalars.dropFirst() }
        guard case .number(let length, _) = scan(scalars) else { return false }
        return length == scalars.count
    }

    /// The unsigned number at the start of `scalars`.
    static func scan(_ scalars: ArraySlice<Unicode.Scalar>) -> Scan {
        func isDigit(_ index: Int) -> Bool { index < scalars.endIndex && ("0"..."9").contains(scalars[index]) }
        func digits(from index: Int) -> Int {
            var end = index
            while isDigit(end) { end += 1 }
            return end
        }
        let start = scalars.startIndex
        var end = digits(from: start)
        var isInteger = true
        if end < scalars.endIndex, scalars[end] == ".", isDigit(end + 1) {
            end = digits(from: end + 1)
            isInteger = false
        }
        guard end > start else { return .none }
        if end < scalars.endIndex, scalars[end] == "e" || scalars[end] == "E" {
            var exponent = end + 1
            if exponent < scalars.endIndex, scalars[exponent] == "+" || scalars[exponent] == "-" { exponent += 1 }
            guard isDigit(exponent) else { return .malformed(length: exponent - start) }
            end = digits(from: exponent)
            isInteger = false
        }
        return .number(length: end - start, isInteger: isInteger)
    }
}
