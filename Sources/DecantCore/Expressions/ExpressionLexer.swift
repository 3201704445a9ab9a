/// The one lexer of value expressions (``ValueExpression``) and NSPredicate-syntax predicates
/// (``ObjectPredicate``): blanks, symbols, words, identifiers, quoted strings, numbers in one grammar
/// (``NumberText``) and one nesting limit, over the Unicode scalars of the text. Each parser keeps its grammar and
/// says its errors its own way (a mapping file's expression is bad input, a `--where` predicate a usage error); the
/// lexer gives both the same tokens and the same limit.
struct ExpressionLexer {
    /// How deeply parentheses, calls, lists and prefix operators may nest: the parsers, and every walk of the tree
    /// they build, recurse.
    static let maximumDepth = 200
    /// What both parsers say past ``maximumDepth``.
    static let depthMessage = "nested more than \(maximumDepth) levels deep"

    /// What a number token read.
    enum NumberToken: Equatable {
        /// A number: an integer when written without fraction and exponent and within 64 bits, else a finite double.
        case value(Value)
        /// Text that starts like a number but is none (`1e`, `-`, `1e400`); the position is left at its start.
        case malformed(String)
    }

    let scalars: [Unicode.Scalar]
    /// The position of the next scalar.
    var position = 0
    /// How many levels deep the parser is.
    private(set) var depth = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// The scalar at the position, nil at the end.
    var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    /// Whether the whole text has been read.
    var isAtEnd: Bool { position >= scalars.count }

    /// The text of scalars `start..<end`.
    func text(_ start: Int, _ end: Int) -> String {
        String(String.UnicodeScalarView(scalars[max(0, start)..<min(end, scalars.count)]))
    }

    /// Skips white space.
    mutating func skipBlanks() {
        while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
    }

    /// Whether `symbol` is at the position (blanks not skipped).
    func peek(_ symbol: String) -> Bool {
        var index = position
        for scalar in symbol.unicodeScalars {
            guard index < scalars.count, scalars[index] == scalar else { return false }
            index += 1
        }
        return true
    }

    /// Skips blanks and consumes `symbol` when it is there, unless `next` follows it.
    mutating func consume(_ symbol: String, unlessFollowedBy next: Unicode.Scalar? = nil) -> Bool {
        skipBlanks()
        guard peek(symbol) else { return false }
        let end = position + symbol.unicodeScalars.count
        if let next, end < scalars.count, scalars[end] == next { return false }
        position = end
        return true
    }

    /// Skips blanks and tells whether the word `word` (any case, not followed by an identifier scalar) is there.
    mutating func peekWord(_ word: String) -> Bool {
        skipBlanks()
        let wanted = Array(word.uppercased().unicodeScalars)
        guard position + wanted.count <= scalars.count else { return false }
        let candidate = text(position, position + wanted.count).uppercased()
        guard Array(candidate.unicodeScalars) == wanted else { return false }
        return position + wanted.count == scalars.count || !Self.isIdentifier(scalars[position + wanted.count])
    }

    /// Consumes the word `word` when ``peekWord(_:)`` finds it.
    mutating func consumeWord(_ word: String) -> Bool {
        guard peekWord(word) else { return false }
        position += word.unicodeScalars.count
        return true
    }

    /// Whether a scalar belongs in an identifier or a key-path component: letters, digits, `_` and `@`.
    static func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_" || scalar == "@"
    }

    /// Reads an identifier (possibly empty) at the position.
    mutating func identifier() -> String {
        let start = position
        while position < scalars.count, Self.isIdentifier(scalars[position]) { position += 1 }
        return text(start, position)
    }

    /// Reads the number at the position, with one sign before it when `signed`; nil (position unchanged) when no
    /// number starts here.
    mutating func number(signed: Bool) -> NumberToken? {
        let start = position
        var digits = position
        if signed, let sign = current, sign == "+" || sign == "-" { digits += 1 }
        switch NumberText.scan(scalars[digits...]) {
        case .none:
            guard digits > start else { return nil }
            return .malformed(text(start, digits))
        case .malformed(let length):
            return .malformed(text(start, digits + length))
        case .number(let length, let isInteger):
            let written = text(start, digits + length)
            if isInteger, let integer = Int64(written) {
                position = digits + length
                return .value(.integer(integer))
            }
            guard let real = Double(written), real.isFinite else { return .malformed(written) }
            position = digits + length
            return .value(.double(real))
        }
    }

    /// Reads the string quoted by the scalar at the position (`'…'` or `"…"`; `\n`, `\t`, `\r` are escapes, a
    /// backslash takes any other scalar as it is); nil, with the position left at the opening quote, when it has
    /// no closing quote.
    mutating func quotedString() -> String? {
        guard let quote = current else { return nil }
        let start = position
        position += 1
        var text = String.UnicodeScalarView()
        while position < scalars.count, scalars[position] != quote {
            if scalars[position] == "\\", position + 1 < scalars.count {
                position += 1
                switch scalars[position] {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                default: text.append(scalars[position])
                }
            } else {
                text.append(scalars[position])
            }
            position += 1
        }
        guard position < scalars.count else {
            position = start
            return nil
        }
        position += 1
        return String(text)
    }

    /// Goes one level deeper; false, one level deeper still, past ``maximumDepth`` (the parser then throws, and its
    /// ``ascend()`` runs as the error unwinds).
    mutating func descend() -> Bool {
        depth += 1
        return depth <= Self.maximumDepth
    }

    /// Comes back up one level.
    mutating func ascend() { depth -= 1 }
}
