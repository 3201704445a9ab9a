import DecantCore
import Foundation

/// Turns a derived attribute's `derivationExpression` as Xcode stores it (`items.@count`) into the
/// `NSExpression` format Core Data hashes (`count:(items)`), per `coredata-formats.md` section 2.5.
///
/// ```swift
/// try DerivationExpression.normalize("items.@count")        // "count:(items)"
/// try DerivationExpression.normalize("items.@sum.price")    // "sum:(items.price)"
/// try DerivationExpression.normalize("lowercase:(name)")    // "lowercase:(name)"
/// ```
///
/// Shapes handled: key paths, the collection operators `@count`, `@sum`, `@min`, `@max`, `@avg` (→ `count:`,
/// `sum:`, `min:`, `max:`, `average:` over the key path), function calls (`now()`, `lowercase:(name)`,
/// `canonical:(name)`), string and number constants, and binary operators between those, re-spaced as
/// `a + b`. Only `@count` is verified against Apple output.
public enum DerivationExpression: Sendable {
    /// The deepest nesting accepted: parentheses, function calls and chained operators each add a level.
    public static let maximumDepth = 256

    /// Normalises an expression; throws `.malformedInput` when it cannot be tokenised (unbalanced quotes or
    /// parentheses, stray characters) or nests deeper than ``maximumDepth`` levels.
    public static func normalize(_ source: String) throws -> String {
        var parser = Parser(tokens: try tokenize(source), source: source)
        let node = try parser.expression(depth: 0).node
        guard parser.atEnd else {
            throw DecantError(.malformedInput, "unexpected text after the expression in \"\(excerpt(source))\"")
        }
        return node.rendered
    }

    /// The source as quoted in an error message: whole when short, else its first 60 characters and an ellipsis.
    static func excerpt(_ source: String) -> String {
        source.count <= 80 ? source : source.prefix(60) + "…"
    }

    private indirect enum Node {
        case keyPath([String])
        case function(String, [Node])
        case string(String)
        case number(String)
        case binary(Node, String, Node)

        var rendered: String {
            switch self {
            case .keyPath(let parts):
                if let index = parts.firstIndex(where: { $0.hasPrefix("@") }), index > 0 {
                    let base = Array(parts[..<index])
                    let rest = Array(parts[(index + 1)...])
                    let name = Self.aggregateName(parts[index])
                    return "\(name)(\((base + rest).joined(separator: ".")))"
                }
                return parts.joined(separator: ".")
            case .function(let name, let arguments):
                return "\(name)(\(arguments.map(\.rendered).joined(separator: ", ")))"
            case .string(let text):
                let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                return "\"\(escaped)\""
            case .number(let text):
                return text
            case .binary(let lhs, let op, let rhs):
                return "\(lhs.rendered) \(op) \(rhs.rendered)"
            }
        }

        static func aggregateName(_ op: String) -> String {
            switch op {
            case "@avg": "average:"
            default: String(op.dropFirst()) + ":"
            }
        }
    }

    private enum Token: Equatable {
        case identifier(String)  // may end in ':' for a function name
        case aggregate(String)  // @count, @sum, …
        case string(String)
        case number(String)
        case symbol(String)  // ( ) , . and operators
    }

    private static let aggregates: Set<String> = ["@count", "@sum", "@min", "@max", "@avg"]
    private static let operators: [String] = ["++", "**", "+", "-", "*", "/"]

    private static func tokenize(_ source: String) throws -> [Token] {
        var tokens: [Token] = []
        let chars = Array(source)
        var i = 0
        func fail(_ message: String) -> DecantError {
            DecantError(.malformedInput, "\(message) at character \(i + 1) of \"\(excerpt(source))\"")
        }
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace {
                i += 1
            } else if c.isLetter || c == "_" || c == "$" {
                var j = i + 1
                while j < chars.count, chars[j].isLetter || chars[j].isNumber || chars[j] == "_" { j += 1 }
                var name = String(chars[i..<j])
                if j < chars.count, chars[j] == ":" {
                    name += ":"
                    j += 1
                }
                tokens.append(.identifier(name))
                i = j
            } else if c == "@" {
                var j = i + 1
                while j < chars.count, chars[j].isLetter { j += 1 }
                let op = String(chars[i..<j])
                guard aggregates.contains(op) else { throw fail("unknown collection operator \(op)") }
                tokens.append(.aggregate(op))
                i = j
            } else if c == "\"" || c == "'" {
                var j = i + 1
                var text = ""
                while j < chars.count, chars[j] != c {
                    if chars[j] == "\\", j + 1 < chars.count { j += 1 }
                    text.append(chars[j])
                    j += 1
                }
                guard j < chars.count else { throw fail("unterminated string") }
                tokens.append(.string(text))
                i = j + 1
            } else if c.isNumber {
                var j = i + 1
                while j < chars.count, chars[j].isNumber || chars[j] == "." { j += 1 }
                tokens.append(.number(String(chars[i..<j])))
                i = j
            } else if "(),.".contains(c) {
                tokens.append(.symbol(String(c)))
                i += 1
            } else if let op = operators.first(where: { op in
                let end = i + op.count
                return end <= chars.count && String(chars[i..<end]) == op
            }) {
                tokens.append(.symbol(op))
                i += op.count
            } else {
                throw fail("unexpected \"\(c)\"")
            }
        }
        return tokens
    }

    private struct Parser {
        var tokens: [Token]
        var index = 0
        let source: String

        init(tokens: [Token], source: String) {
            self.tokens = tokens
            self.source = source
        }

        var atEnd: Bool { index >= tokens.count }

        func fail(_ message: String) -> DecantError {
            DecantError(.malformedInput, "\(message) in \"\(DerivationExpression.excerpt(source))\"")
        }

        mutating func take() -> Token? {
            guard index < tokens.count else { return nil }
            defer { index += 1 }
            return tokens[index]
        }

        func peek() -> Token? { index < tokens.count ? tokens[index] : nil }

        /// Parses an expression starting `depth` levels down; returns it with the depth of its deepest part, so
        /// that rendering (and dropping) the tree stays within ``DerivationExpression/maximumDepth`` frames.
        mutating func expression(depth: Int) throws -> (node: Node, depth: Int) {
            var (node, nodeDepth) = try term(depth: depth)
            while case .symbol(let op)? = peek(), operators.contains(op) {
                index += 1
                let rhs = try term(depth: depth)
                nodeDepth = try checked(max(nodeDepth, rhs.depth) + 1)
                node = .binary(node, op, rhs.node)
            }
            return (node, nodeDepth)
        }

        func checked(_ depth: Int) throws -> Int {
            guard depth <= DerivationExpression.maximumDepth else {
                throw fail("the expression nests deeper than \(DerivationExpression.maximumDepth) levels")
            }
            return depth
        }

        mutating func term(depth: Int) throws -> (node: Node, depth: Int) {
            let depth = try checked(depth + 1)
            switch take() {
            case .string(let text)?:
                return (.string(text), depth)
            case .number(let text)?:
                return (.number(text), depth)
            case .symbol("(")?:
                let inner = try expression(depth: depth)
                guard take() == .symbol(")") else { throw fail("missing \")\"") }
                return inner
            case .aggregate(let op)?:
                // A bare `@count` etc. applies to the object itself; keep it as written.
                return (.keyPath([op]), depth)
            case .identifier(let name)?:
                if peek() == .symbol("(") {
                    index += 1
                    var arguments: [Node] = []
                    var deepest = depth
                    if peek() != .symbol(")") {
                        repeat {
                            if !arguments.isEmpty { index += 1 }
                            let argument = try expression(depth: depth)
                            arguments.append(argument.node)
                            deepest = max(deepest, argument.depth)
                        } while peek() == .symbol(",")
                    }
                    guard take() == .symbol(")") else { throw fail("missing \")\" after the arguments of \(name)") }
                    return (.function(name, arguments), deepest)
                }
                guard !name.hasSuffix(":") else { throw fail("function \(name) has no argument list") }
                var parts = [name]
                while peek() == .symbol(".") {
                    index += 1
                    switch take() {
                    case .identifier(let part)? where !part.hasSuffix(":"): parts.append(part)
                    case .aggregate(let op)?: parts.append(op)
                    default: throw fail("a key path ends in \".\"")
                    }
                }
                if parts.filter({ $0.hasPrefix("@") }).count > 1 {
                    throw fail("more than one collection operator in one key path")
                }
                return (.keyPath(parts), depth)
            default:
                throw fail("an expression is missing")
            }
        }
    }
}
