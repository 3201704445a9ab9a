import Foundation

extension ObjectPredicate {
    /// Parses NSPredicate format syntax: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BEGINSWITH`, `ENDSWITH`,
    /// `CONTAINS`, `LIKE`, `MATCHES`, with `[c]`, `[d]`, `[cd]`), `IN {…}`, `BETWEEN {lo, hi}`, `AND`/`&&`,
    /// `OR`/`||`, `NOT`/`!`, parentheses, `nil`/`NULL`, `TRUE`/`YES`, `FALSE`/`NO`, `TRUEPREDICATE`,
    /// `FALSEPREDICATE`, quoted strings, numbers, key paths (`folder.name`, `#reserved` words), and
    /// `CAST("2020-01-01", "NSDate")` (an ISO 8601 date, or a number of seconds since 2001-01-01).
    ///
    /// ```swift
    /// let recent = try ObjectPredicate(parsing: #"date >= CAST("2024-01-01T00:00:00Z", "NSDate")"#)
    /// ```
    /// - Parameter source: Where the text came from, for messages (`--where`).
    /// - Throws: `.usage` naming the position (1-based column) and what was expected, for syntax Decant does not
    ///   support too (aggregates, subqueries, functions, variables).
    public init(parsing text: String, source: String = "--where") throws {
        var parser = PredicateParser(text: text, source: source)
        self = try parser.parse()
    }
}

/// A recursive-descent parser over the predicate's Unicode scalars; nesting is bounded.
struct PredicateParser {
    static let maximumDepth = 200
    /// How many `AND`/`OR` a predicate may join, as many as a value expression's operators.
    static let maximumConnectives = ValueExpressionParser.maximumOperators

    let scalars: [Unicode.Scalar]
    let source: String
    var position = 0
    var depth = 0
    var connectives = 0

    init(text: String, source: String) {
        self.scalars = Array(text.unicodeScalars)
        self.source = source
    }

    mutating func parse() throws -> ObjectPredicate {
        let predicate = try parseOr()
        skipBlanks()
        guard position == scalars.count else { throw failure("expected AND, OR or the end, found \(peekDescription)") }
        return predicate
    }

    // MARK: Grammar

    private mutating func parseOr() throws -> ObjectPredicate {
        var terms = [try parseAnd()]
        while consumeWord("OR") || consumeSymbol("||") {
            try countConnective()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> ObjectPredicate {
        var terms = [try parseNot()]
        while consumeWord("AND") || consumeSymbol("&&") {
            try countConnective()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// Counts one `AND`/`OR`, refusing a predicate with more than ``maximumConnectives`` of them: a predicate that
    /// large is a usage problem, said with the limit, not damaged input.
    private mutating func countConnective() throws {
        connectives += 1
        guard connectives <= Self.maximumConnectives else {
            throw failure(
                "more than \(Self.maximumConnectives) AND/OR terms, the limit for a predicate (for a long list of "
                    + "values, write IN {…})")
        }
    }

    private mutating func parseNot() throws -> ObjectPredicate {
        try enter()
        defer { depth -= 1 }
        if consumeWord("NOT") || consumeSymbol("!", unlessFollowedBy: "=") { return .not(try parseNot()) }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> ObjectPredicate {
        skipBlanks()
        if consumeSymbol("(") {
            let inner = try parseOr()
            guard consumeSymbol(")") else { throw failure("expected ), found \(peekDescription)") }
            return inner
        }
        if consumeWord("TRUEPREDICATE") { return .constant(true) }
        if consumeWord("FALSEPREDICATE") { return .constant(false) }
        for word in ["ANY", "ALL", "SOME", "NONE", "SUBQUERY", "FUNCTION"] where peekWord(word) {
            throw failure("\(word) is not supported in Decant predicates")
        }
        let left = try parseOperand()
        let (op, options) = try parseOperator()
        let right = try parseOperand()
        if op == .between {
            guard case .list(let bounds) = right, bounds.count == 2 else {
                throw failure("BETWEEN takes {lower, upper}")
            }
        }
        return .comparison(left, op, right, options)
    }

    private mutating func parseOperator() throws -> (ObjectPredicate.ComparisonOperator, ObjectPredicate.ComparisonOptions) {
        skipBlanks()
        let symbols: [(String, ObjectPredicate.ComparisonOperator)] = [
            ("==", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<=", .lessOrEqual), ("=<", .lessOrEqual),
            (">=", .greaterOrEqual), ("=>", .greaterOrEqual), ("=", .equal), ("<", .less), (">", .greater),
        ]
        for (symbol, op) in symbols where consumeSymbol(symbol) { return (op, try parseOptions()) }
        for op in [ObjectPredicate.ComparisonOperator.beginsWith, .endsWith, .contains, .like, .matches, .in, .between]
        where consumeWord(op.rawValue) {
            return (op, try parseOptions())
        }
        throw failure("expected a comparison operator, found \(peekDescription)")
    }

    private mutating func parseOptions() throws -> ObjectPredicate.ComparisonOptions {
        guard position < scalars.count, scalars[position] == "[" else { return [] }
        position += 1
        var options: ObjectPredicate.ComparisonOptions = []
        while position < scalars.count, scalars[position] != "]" {
            switch scalars[position] {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": break
            default: throw failure("unknown comparison option \(scalars[position]) (expected c, d or n)")
            }
            position += 1
        }
        guard position < scalars.count else { throw failure("expected ] after the comparison options") }
        position += 1
        return options
    }

    private mutating func parseOperand() throws -> PredicateOperand {
        try enter()
        defer { depth -= 1 }
        skipBlanks()
        guard position < scalars.count else { throw failure("expected a value or key path, found the end") }
        let scalar = scalars[position]
        if scalar == "\"" || scalar == "'" { return .value(.string(try parseString())) }
        if scalar == "{" {
            position += 1
            var items: [PredicateOperand] = []
            skipBlanks()
            if consumeSymbol("}") { return .list(items) }
            repeat { items.append(try parseOperand()) } while consumeSymbol(",")
            guard consumeSymbol("}") else { throw failure("expected , or } in the list, found \(peekDescription)") }
            return .list(items)
        }
        if scalar == "$" || scalar == "%" { throw failure("variables and format arguments are not supported") }
        if scalar.properties.numericType != nil || scalar == "-" || scalar == "+" || scalar == "." {
            return .value(try parseNumber())
        }
        let start = position
        if consumeWord("CAST") { return .value(try parseCast(from: start)) }
        for (word, value) in [("nil", Value.null), ("NULL", .null), ("TRUE", .bool(true)), ("YES", .bool(true)),
                              ("FALSE", .bool(false)), ("NO", .bool(false))] where consumeWord(word) {
            return .value(value)
        }
        return .keyPath(try parseKeyPath())
    }

    private mutating func parseKeyPath() throws -> [String] {
        var components: [String] = []
        repeat {
            skipBlanks()
            if position < scalars.count, scalars[position] == "#" { position += 1 }
            let start = position
            while position < scalars.count, Self.isIdentifier(scalars[position]) { position += 1 }
            guard position > start else { throw failure("expected a key path, found \(peekDescription)") }
            let component = String(String.UnicodeScalarView(scalars[start..<position]))
            if component.hasPrefix("@") {
                position = start
                throw failure("collection operators (@count, @sum, …) are not supported in Decant predicates")
            }
            if let first = component.unicodeScalars.first, first.properties.numericType != nil {
                position = start
                throw failure("a key path cannot start with a digit")
            }
            components.append(component)
        } while position < scalars.count && scalars[position] == "." && { position += 1; return true }()
        return components
    }

    private mutating func parseString() throws -> String {
        let quote = scalars[position]
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
            throw failure("the string starting here has no closing \(quote)")
        }
        position += 1
        return String(text)
    }

    private mutating func parseNumber() throws -> Value {
        let start = position
        if scalars[position] == "-" || scalars[position] == "+" { position += 1 }
        while position < scalars.count,
            scalars[position].properties.numericType != nil || [".", "e", "E"].contains(scalars[position])
                || ((scalars[position] == "-" || scalars[position] == "+")
                    && ["e", "E"].contains(scalars[position - 1]))
        {
            position += 1
        }
        let text = String(String.UnicodeScalarView(scalars[start..<position]))
        if let integer = Int64(text) { return .integer(integer) }
        if let real = Double(text), real.isFinite { return .double(real) }
        position = start
        throw failure("\(text) is not a number")
    }

    /// `CAST(value, "NSDate")` and `CAST(value, "NSNumber")`.
    private mutating func parseCast(from start: Int) throws -> Value {
        guard consumeSymbol("(") else { throw failure("expected ( after CAST") }
        let operand = try parseOperand()
        guard consumeSymbol(",") else { throw failure("expected , in CAST") }
        skipBlanks()
        guard position < scalars.count, scalars[position] == "\"" || scalars[position] == "'" else {
            throw failure("expected a class name string in CAST")
        }
        let className = try parseString()
        guard consumeSymbol(")") else { throw failure("expected ) after CAST") }
        guard case .value(let value) = operand else {
            position = start
            throw failure("CAST takes a constant")
        }
        switch (className, value) {
        case ("NSDate", .string(let text)):
            guard let date = Self.date(text) else {
                position = start
                throw failure("\"\(text)\" is not an ISO 8601 date (2020-01-31, or 2020-01-31T12:00:00Z)")
            }
            return .date(date)
        case ("NSDate", _):
            guard let seconds = ObjectPredicate.number(value) else { break }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("NSNumber", .string(let text)):
            if let integer = Int64(text) { return .integer(integer) }
            if let real = Double(text) { return .double(real) }
        case ("NSNumber", _) where ObjectPredicate.number(value) != nil:
            return value
        default:
            break
        }
        position = start
        throw failure("CAST to \(className) of this value is not supported (NSDate from a date string or seconds, NSNumber)")
    }

    /// An ISO 8601 date: a day (midnight UTC), or a date and time with an optional fraction and offset.
    static func date(_ text: String) -> Date? {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime]
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }

    // MARK: Tokens

    private static func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_" || scalar == "@"
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) levels deep") }
    }

    private mutating func skipBlanks() {
        while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
    }

    private mutating func consumeSymbol(_ symbol: String, unlessFollowedBy next: Unicode.Scalar? = nil) -> Bool {
        skipBlanks()
        let wanted = Array(symbol.unicodeScalars)
        guard position + wanted.count <= scalars.count, Array(scalars[position..<position + wanted.count]) == wanted
        else { return false }
        if let next, position + wanted.count < scalars.count, scalars[position + wanted.count] == next { return false }
        position += wanted.count
        return true
    }

    private mutating func peekWord(_ word: String) -> Bool {
        skipBlanks()
        let wanted = Array(word.uppercased().unicodeScalars)
        guard position + wanted.count <= scalars.count else { return false }
        let candidate = String(String.UnicodeScalarView(scalars[position..<position + wanted.count])).uppercased()
        guard Array(candidate.unicodeScalars) == wanted else { return false }
        return position + wanted.count == scalars.count || !Self.isIdentifier(scalars[position + wanted.count])
    }

    private mutating func consumeWord(_ word: String) -> Bool {
        guard peekWord(word) else { return false }
        position += word.unicodeScalars.count
        return true
    }

    private var peekDescription: String {
        guard position < scalars.count else { return "the end" }
        let end = min(scalars.count, position + 12)
        return "\"\(String(String.UnicodeScalarView(scalars[position..<end])))\""
    }

    private func failure(_ message: String) -> DecantError {
        DecantError(.usage, message, at: Location(path: source, line: 1, column: position + 1))
    }
}
