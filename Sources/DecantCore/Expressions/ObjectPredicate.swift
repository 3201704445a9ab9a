import Foundation

/// A predicate in NSPredicate's format syntax, parsed: what `--where` takes, and what mapping models' filter
/// predicates and `FETCH` expressions contain.
///
/// ```swift
/// let predicate = try ObjectPredicate(parsing: #"date > CAST("2020-01-01", "NSDate") AND text CONTAINS[c] "milk""#)
/// predicate.keyPaths        // [["date"], ["text"]]
/// ```
public indirect enum ObjectPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `left op right`, with `[c]`, `[d]` options.
    case comparison(PredicateOperand, ComparisonOperator, PredicateOperand, ComparisonOptions)
    /// `a AND b AND …`.
    case and([ObjectPredicate])
    /// `a OR b OR …`.
    case or([ObjectPredicate])
    /// `NOT a`.
    case not(ObjectPredicate)
    /// `ANY`/`SOME`, `ALL` or `NONE` before a comparison whose left side is a key path through a to-many
    /// relationship (in a mapping's fetch predicates): whether some, every or no member's value satisfies the
    /// comparison (`ALL` holds, and `NONE` too, for no members).
    case quantified(Quantifier, ObjectPredicate)

    /// The modifiers of a comparison over a to-many key path.
    public enum Quantifier: String, Sendable, Hashable {
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    /// The operators of NSPredicate comparisons.
    public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case `in` = "IN"
        case between = "BETWEEN"
    }

    /// `[c]` (case-insensitive) and `[d]` (diacritic-insensitive).
    public struct ComparisonOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `[c]`.
        public static let caseInsensitive = ComparisonOptions(rawValue: 1)
        /// `[d]`.
        public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    }

    /// Every key path the predicate reads.
    public var keyPaths: [[String]] {
        switch self {
        case .constant: []
        case .comparison(let left, _, let right, _): left.keyPaths + right.keyPaths
        case .and(let terms), .or(let terms): terms.flatMap(\.keyPaths)
        case .not(let term), .quantified(_, let term): term.keyPaths
        }
    }

    /// Every `$source` key path the predicate reads (those of the object being mapped, in a fetch predicate).
    public var sourceKeyPaths: [[String]] {
        switch self {
        case .constant: []
        case .comparison(let left, _, let right, _): left.sourceKeyPaths + right.sourceKeyPaths
        case .and(let terms), .or(let terms): terms.flatMap(\.sourceKeyPaths)
        case .not(let term), .quantified(_, let term): term.sourceKeyPaths
        }
    }

    /// The predicate with each `$source` key path replaced by the value `value` gives for it.
    public func substitutingSource(_ value: ([String]) throws -> Value) rethrows -> ObjectPredicate {
        switch self {
        case .constant: self
        case .comparison(let left, let op, let right, let options):
            .comparison(try left.substitutingSource(value), op, try right.substitutingSource(value), options)
        case .and(let terms): .and(try terms.map { try $0.substitutingSource(value) })
        case .or(let terms): .or(try terms.map { try $0.substitutingSource(value) })
        case .not(let term): .not(try term.substitutingSource(value))
        case .quantified(let quantifier, let term): .quantified(quantifier, try term.substitutingSource(value))
        }
    }

    /// The key paths the predicate reads outside `ANY`/`ALL`/`NONE` comparisons (each must give one value).
    public var unquantifiedKeyPaths: [[String]] {
        switch self {
        case .constant, .quantified: []
        case .comparison: keyPaths
        case .and(let terms), .or(let terms): terms.flatMap(\.unquantifiedKeyPaths)
        case .not(let term): term.unquantifiedKeyPaths
        }
    }

    /// Whether a comparison reads a key path through a to-many relationship with `ANY`, `ALL` or `NONE`.
    public var isQuantified: Bool {
        switch self {
        case .constant, .comparison: false
        case .and(let terms), .or(let terms): terms.contains(where: \.isQuantified)
        case .not(let term): term.isQuantified
        case .quantified: true
        }
    }

    /// The terms of a top-level `AND` (the predicate itself otherwise).
    public var conjuncts: [ObjectPredicate] {
        if case .and(let terms) = self { return terms.flatMap(\.conjuncts) }
        return [self]
    }

    /// The conjunction of `terms` (`TRUEPREDICATE` for none).
    public static func all(_ terms: [ObjectPredicate]) -> ObjectPredicate {
        switch terms.count {
        case 0: .constant(true)
        case 1: terms[0]
        default: .and(terms)
        }
    }
}

/// One side of a comparison.
public indirect enum PredicateOperand: Sendable, Hashable {
    /// A key path (`folder.name`).
    case keyPath([String])
    /// `$source.keyPath`, in a mapping's fetch predicates: that value of the object being mapped (substituted
    /// before the predicate is evaluated; see ``ObjectPredicate/substitutingSource(_:)``).
    case source([String])
    /// A constant.
    case value(Value)
    /// `{a, b, …}`: for `IN` and `BETWEEN`.
    case list([PredicateOperand])

    var keyPaths: [[String]] {
        switch self {
        case .keyPath(let path): [path]
        case .value, .source: []
        case .list(let items): items.flatMap(\.keyPaths)
        }
    }

    var sourceKeyPaths: [[String]] {
        switch self {
        case .source(let path): [path]
        case .value, .keyPath: []
        case .list(let items): items.flatMap(\.sourceKeyPaths)
        }
    }

    func substitutingSource(_ value: ([String]) throws -> Value) rethrows -> PredicateOperand {
        switch self {
        case .source(let path): .value(try value(path))
        case .value, .keyPath: self
        case .list(let items): .list(try items.map { try $0.substitutingSource(value) })
        }
    }
}

extension ObjectPredicate {
    /// Whether `record` satisfies the predicate, with `lookUp` giving the value at a key path (nil when the path
    /// cannot be followed, which compares as nil).
    ///
    /// Semantics follow NSPredicate: a comparison with nil is false except `== nil` and `!= <value>`; strings
    /// compare by Unicode scalars, `[c]` folds case and `[d]` diacritics; `LIKE` takes `*` and `?` wildcards;
    /// `MATCHES` is a whole-string regular expression.
    public func evaluate(_ lookUp: ([String]) throws -> Value) rethrows -> Bool {
        try evaluate(lookUp, members: { [try lookUp($0)] })
    }

    /// Whether the object satisfies the predicate, with `lookUp` giving the value at a key path and `members` the
    /// values at a key path through a to-many relationship (for `ANY`, `ALL` and `NONE`).
    public func evaluate(
        _ lookUp: ([String]) throws -> Value, members: ([String]) throws -> [Value]
    ) rethrows -> Bool {
        switch self {
        case .constant(let flag):
            return flag
        case .and(let terms):
            for term in terms where try !term.evaluate(lookUp, members: members) { return false }
            return true
        case .or(let terms):
            for term in terms where try term.evaluate(lookUp, members: members) { return true }
            return false
        case .not(let term):
            return try !term.evaluate(lookUp, members: members)
        case .comparison(let left, let op, let right, let options):
            return try Self.compare(left.resolve(lookUp), op, right.resolve(lookUp), options)
        case .quantified(let quantifier, .comparison(.keyPath(let path), let op, let right, let options)):
            let other = try right.resolve(lookUp)
            let values = try members(path)
            let some = values.contains { Self.compare(.single($0), op, other, options) }
            switch quantifier {
            case .any: return some
            case .none: return !some
            case .all: return values.allSatisfy { Self.compare(.single($0), op, other, options) }
            }
        case .quantified(_, let term):
            return try term.evaluate(lookUp, members: members)
        }
    }

    private static func compare(_ left: Operand, _ op: ComparisonOperator, _ right: Operand, _ options: ComparisonOptions)
        -> Bool
    {
        switch (op, left, right) {
        case (.in, .single(let value), .many(let items)):
            return items.contains { equal(value, $0, options) }
        case (.in, .single(let value), .single(let container)):
            // `x IN "text"`: substring; `x IN collection-valued key path` is not supported by single values.
            return stringOperation(container, value, options) { $0.contains($1) }
        case (.between, .single(let value), .many(let bounds)) where bounds.count == 2:
            return order(value, bounds[0], options).map { $0 >= 0 } == true
                && order(value, bounds[1], options).map { $0 <= 0 } == true
        case (_, .single(let a), .single(let b)):
            switch op {
            case .equal: return equal(a, b, options)
            case .notEqual: return !equal(a, b, options)
            case .less: return order(a, b, options).map { $0 < 0 } ?? false
            case .lessOrEqual: return order(a, b, options).map { $0 <= 0 } ?? false
            case .greater: return order(a, b, options).map { $0 > 0 } ?? false
            case .greaterOrEqual: return order(a, b, options).map { $0 >= 0 } ?? false
            case .beginsWith: return stringOperation(a, b, options) { $0.starts(with: $1) }
            case .endsWith: return stringOperation(a, b, options) { $0.reversed().starts(with: $1.reversed()) }
            case .contains: return stringOperation(a, b, options) { $0.contains($1) }
            case .like: return stringOperation(a, b, options) { likeMatches(Array($0), Array($1)) }
            case .matches:
                guard let text = string(a), let pattern = string(b) else { return false }
                return regexMatches(text, pattern, options)
            case .in, .between: return false
            }
        default:
            return false
        }
    }

    /// A resolved operand: one value or a list.
    enum Operand {
        case single(Value)
        case many([Value])
    }

    static func equal(_ a: Value, _ b: Value, _ options: ComparisonOptions) -> Bool {
        if a.isNull || b.isNull { return a.isNull && b.isNull }
        if let x = string(a), let y = string(b) { return Array(fold(x, options)) == Array(fold(y, options)) }
        if let ordering = order(a, b, options) { return ordering == 0 }
        return a == b
    }

    /// -1, 0 or 1 for comparable values; nil when either is nil or they do not compare.
    static func order(_ a: Value, _ b: Value, _ options: ComparisonOptions) -> Int? {
        if let x = number(a), let y = number(b) { return x < y ? -1 : (x > y ? 1 : 0) }
        if let x = string(a), let y = string(b) {
            let (p, q) = (Array(fold(x, options)), Array(fold(y, options)))
            return p.lexicographicallyPrecedes(q) ? -1 : (q.lexicographicallyPrecedes(p) ? 1 : 0)
        }
        if case .data(let x) = a, case .data(let y) = b { return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1) }
        if case .uuid(let x) = a, case .uuid(let y) = b { return x == y ? 0 : nil }
        return nil
    }

    /// A number for numeric, boolean, date and decimal values (dates as seconds since the reference date).
    static func number(_ value: Value) -> Double? {
        switch value {
        case .integer(let integer): Double(integer)
        case .double(let real): real
        case .bool(let flag): flag ? 1 : 0
        case .decimal(let decimal): NSDecimalNumber(decimal: decimal).doubleValue
        case .date(let date): date.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    static func string(_ value: Value) -> String? {
        switch value {
        case .string(let text), .uri(let text): text
        default: nil
        }
    }

    /// Unicode scalars after `[c]` / `[d]` folding.
    static func fold(_ text: String, _ options: ComparisonOptions) -> String.UnicodeScalarView {
        var folded = text
        if options.contains(.diacriticInsensitive) {
            folded = folded.folding(options: .diacriticInsensitive, locale: nil)
        }
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        return folded.unicodeScalars
    }

    private static func stringOperation(
        _ a: Value, _ b: Value, _ options: ComparisonOptions,
        _ body: ([Unicode.Scalar], [Unicode.Scalar]) -> Bool
    ) -> Bool {
        guard let x = string(a), let y = string(b) else { return false }
        return body(Array(fold(x, options)), Array(fold(y, options)))
    }

    /// `LIKE`: `*` any run, `?` one character, `\\` escapes the next character.
    static func likeMatches(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        enum Token: Equatable {
            case anyRun, anyOne
            case literal(Unicode.Scalar)
        }
        var tokens: [Token] = []
        var index = 0
        while index < pattern.count {
            switch pattern[index] {
            case "*": tokens.append(.anyRun)
            case "?": tokens.append(.anyOne)
            case "\\" where index + 1 < pattern.count:
                index += 1
                tokens.append(.literal(pattern[index]))
            default: tokens.append(.literal(pattern[index]))
            }
            index += 1
        }
        // Greedy matching that backtracks only to the last `*`: linear in practice, never exponential.
        var (t, p) = (0, 0)
        var lastStar: (token: Int, text: Int)?
        while t < text.count {
            if p < tokens.count, tokens[p] == .anyOne || tokens[p] == .literal(text[t]) {
                t += 1
                p += 1
            } else if p < tokens.count, tokens[p] == .anyRun {
                lastStar = (p, t)
                p += 1
            } else if let star = lastStar {
                p = star.token + 1
                t = star.text + 1
                lastStar = (star.token, star.text + 1)
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .anyRun { p += 1 }
        return p == tokens.count
    }

    static func regexMatches(_ text: String, _ pattern: String, _ options: ComparisonOptions) -> Bool {
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        guard let regex = try? NSRegularExpression(pattern: "^(?:\(pattern))$", options: regexOptions) else { return false }
        let subject = options.contains(.diacriticInsensitive)
            ? text.folding(options: .diacriticInsensitive, locale: nil) : text
        return regex.firstMatch(in: subject, range: NSRange(subject.startIndex..., in: subject)) != nil
    }
}

extension PredicateOperand {
    func resolve(_ lookUp: ([String]) throws -> Value) rethrows -> ObjectPredicate.Operand {
        switch self {
        case .keyPath(let path): return .single(try lookUp(path))
        case .value(let value): return .single(value)
        // Substituted before evaluation; one left is nil.
        case .source: return .single(.null)
        case .list(let items):
            var values: [Value] = []
            for item in items {
                switch try item.resolve(lookUp) {
                case .single(let value): values.append(value)
                case .many(let nested): values += nested
                }
            }
            return .many(values)
        }
    }
}
