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
    ///
    /// A mapping's fetch predicate (`isFetch`) may also compare with `$source.keyPath`, the object being mapped (as
    /// Core Data's `fetchRequestForSourceEntityNamed:predicateString:` substitutes it), and put `ANY`/`SOME`, `ALL`
    /// or `NONE` before a comparison over a to-many key path (`ANY notes.words > 4`).
    /// - Parameters:
    ///   - source: Where the text came from, for messages (`--where`).
    ///   - isFetch: Whether this is a fetch predicate of a mapping (with `$source` and `ANY`/`ALL`/`NONE`).
    /// - Throws: `.usage` naming the position (1-based column) and what was expected, for syntax Decant does not
    ///   support too (aggregates, subqueries, functions, variables).
    public init(parsing text: String, source: String = "--where", isFetch: Bool = false) throws {
        var parser = PredicateParser(text: text, source: source, isFetch: isFetch)
        self = try parser.parse()
    }
}

/// A recursive-descent parser over the tokens of a predicate (``ExpressionLexer``, shared with value
/// expressions); nesting is bounded alike.
struct PredicateParser {
    static let maximumDepth = ExpressionLexer.maximumDepth
    /// How many `AND`/`OR` a predicate may join, as many as a value expression's operators.
    static let maximumConnectives = ValueExpressionParser.maximumOperators

    var lexer: ExpressionLexer
    let source: String
    /// Whether `$source` and `ANY`/`ALL`/`NONE` are allowed (a mapping's fetch predicate).
    let isFetch: Bool
    var connectives = 0

    init(text: String, source: String, isFetch: Bool = false) {
        self.lexer = ExpressionLexer(text)
        self.source = source
        self.isFetch = isFetch
    }

    mutating func parse() throws -> ObjectPredicate {
        let predicate = try parseOr()
        lexer.skipBlanks()
        guard lexer.isAtEnd else { throw failure("expected AND, OR or the end, found \(peekDescription)") }
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
        defer { lexer.ascend() }
        try enter()
        if consumeWord("NOT") || consumeSymbol("!", unlessFollowedBy: "=") { return .not(try parseNot()) }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> ObjectPredicate {
        lexer.skipBlanks()
        if consumeSymbol("(") {
            let inner = try parseOr()
            guard consumeSymbol(")") else { throw failure("expected ), found \(peekDescription)") }
            return inner
        }
        if consumeWord("TRUEPREDICATE") { return .constant(true) }
        if consumeWord("FALSEPREDICATE") { return .constant(false) }
        let quantifiers: [(String, ObjectPredicate.Quantifier)] = [("ANY", .any), ("SOME", .any), ("ALL", .all), ("NONE", .none)]
        for (word, quantifier) in quantifiers where peekWord(word) {
            guard isFetch else {
                throw failure("\(word) is supported only in a mapping's fetch predicates (fetch('Entity', '…'))")
            }
            _ = consumeWord(word)
            lexer.skipBlanks()
            let start = lexer.position
            let comparison = try parseComparison()
            guard case .comparison(.keyPath, _, _, _) = comparison else {
                lexer.position = start
                throw failure("\(word) takes a key path through a to-many relationship (\(word) notes.words > 4)")
            }
            return .quantified(quantifier, comparison)
        }
        for word in ["SUBQUERY", "FUNCTION"] where peekWord(word) {
            throw failure("\(word) is not supported in Decant predicates")
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws -> ObjectPredicate {
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
        lexer.skipBlanks()
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
        guard lexer.current == "[" else { return [] }
        lexer.position += 1
        var options: ObjectPredicate.ComparisonOptions = []
        while let scalar = lexer.current, scalar != "]" {
            switch scalar {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": break
            default: throw failure("unknown comparison option \(scalar) (expected c, d or n)")
            }
            lexer.position += 1
        }
        guard !lexer.isAtEnd else { throw failure("expected ] after the comparison options") }
        lexer.position += 1
        return options
    }

    private mutating func parseOperand() throws -> PredicateOperand {
        lexer.skipBlanks()
        guard let scalar = lexer.current else { throw failure("expected a value or key path, found the end") }
        if scalar == "\"" || scalar == "'" { return .value(.string(try parseString())) }
        if scalar == "{" {
            // A list is one level deeper, as a parenthesis is; a plain operand is not.
            defer { lexer.ascend() }
            try enter()
            lexer.position += 1
            var items: [PredicateOperand] = []
            if lexer.consume("}") { return .list(items) }
            repeat { items.append(try parseOperand()) } while lexer.consume(",")
            guard lexer.consume("}") else { throw failure("expected , or } in the list, found \(peekDescription)") }
            return .list(items)
        }
        if scalar == "$", isFetch {
            let start = lexer.position
            lexer.position += 1
            guard lexer.consumeWord("source") else {
                lexer.position = start
                throw failure("a fetch predicate knows one variable, $source (the object being mapped)")
            }
            guard lexer.current == "." else {
                lexer.position = start
                throw failure("compare with a value of the object being mapped: $source.keyPath")
            }
            lexer.position += 1
            return .source(try parseKeyPath())
        }
        if scalar == "$" || scalar == "%" { throw failure("variables and format arguments are not supported") }
        switch lexer.number(signed: true) {
        case .value(let value): return .value(value)
        case .malformed(let text): throw failure("\(text) is not a number")
        case nil: break
        }
        let start = lexer.position
        if lexer.consumeWord("CAST") {
            defer { lexer.ascend() }
            try enter()
            return .value(try parseCast(from: start))
        }
        for (word, value) in [("nil", Value.null), ("NULL", .null), ("TRUE", .bool(true)), ("YES", .bool(true)),
                              ("FALSE", .bool(false)), ("NO", .bool(false))] where lexer.consumeWord(word) {
            return .value(value)
        }
        return .keyPath(try parseKeyPath())
    }

    private mutating func parseKeyPath() throws -> [String] {
        var components: [String] = []
        repeat {
            lexer.skipBlanks()
            if lexer.current == "#" { lexer.position += 1 }
            let start = lexer.position
            let component = lexer.identifier()
            guard !component.isEmpty else { throw failure("expected a key path, found \(peekDescription)") }
            if component.hasPrefix("@") {
                lexer.position = start
                throw failure("collection operators (@count, @sum, …) are not supported in Decant predicates")
            }
            if let first = component.unicodeScalars.first, first.properties.numericType != nil {
                lexer.position = start
                throw failure("a key path cannot start with a digit")
            }
            components.append(component)
        } while lexer.current == "." && { lexer.position += 1; return true }()
        return components
    }

    private mutating func parseString() throws -> String {
        guard let text = lexer.quotedString() else {
            throw failure("the string starting here has no closing \(lexer.current.map(String.init) ?? "quote")")
        }
        return text
    }

    /// `CAST(value, "NSDate")` and `CAST(value, "NSNumber")`.
    private mutating func parseCast(from start: Int) throws -> Value {
        guard lexer.consume("(") else { throw failure("expected ( after CAST") }
        let operand = try parseOperand()
        guard lexer.consume(",") else { throw failure("expected , in CAST") }
        lexer.skipBlanks()
        guard lexer.current == "\"" || lexer.current == "'" else {
            throw failure("expected a class name string in CAST")
        }
        let className = try parseString()
        guard lexer.consume(")") else { throw failure("expected ) after CAST") }
        guard case .value(let value) = operand else {
            lexer.position = start
            throw failure("CAST takes a constant")
        }
        switch (className, value) {
        case ("NSDate", .string(let text)):
            guard let date = Self.date(text) else {
                lexer.position = start
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
        lexer.position = start
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

    /// Goes one level deeper (a `NOT`, a parenthesis, a list, a `CAST`), refusing past the lexer's limit; the
    /// caller ascends in a `defer` placed before this call.
    private mutating func enter() throws {
        guard lexer.descend() else { throw failure(ExpressionLexer.depthMessage) }
    }

    private mutating func consumeSymbol(_ symbol: String, unlessFollowedBy next: Unicode.Scalar? = nil) -> Bool {
        lexer.consume(symbol, unlessFollowedBy: next)
    }

    private mutating func peekWord(_ word: String) -> Bool { lexer.peekWord(word) }

    private mutating func consumeWord(_ word: String) -> Bool { lexer.consumeWord(word) }

    private var peekDescription: String {
        guard !lexer.isAtEnd else { return "the end" }
        return "\"\(lexer.text(lexer.position, lexer.position + 12))\""
    }

    private func failure(_ message: String) -> DecantError {
        DecantError(.usage, message, at: Location(path: source, line: 1, column: lexer.position + 1))
    }
}
