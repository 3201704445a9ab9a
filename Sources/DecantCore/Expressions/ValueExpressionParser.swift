import Foundation

extension ValueExpression {
    /// Parses an expression (see ``ValueExpression`` for the syntax).
    ///
    /// ```swift
    /// let expression = try ValueExpression(parsing: "$source.date ?? now()")
    /// ```
    /// - Throws: `.malformedInput` naming the 1-based column and what was expected there.
    public init(parsing text: String) throws {
        var parser = ValueExpressionParser(text: text)
        self = try parser.parseWhole()
    }
}

/// A precedence-climbing parser over the tokens of one expression (``ExpressionLexer``, shared with predicates).
struct ValueExpressionParser {
    /// How deeply parentheses, calls and prefix operators may nest (the parser and every walk of the tree recurse).
    static let maximumDepth = ExpressionLexer.maximumDepth
    /// How many infix operators one expression may hold: `a + b + c …` is as deep as it is long once parsed.
    static let maximumOperators = 1000

    private var lexer: ExpressionLexer
    private var operators = 0

    init(text: String) { self.lexer = ExpressionLexer(text) }

    mutating func parseWhole() throws -> ValueExpression {
        let expression = try parseExpression(minimumPrecedence: 1)
        lexer.skipBlanks()
        guard let extra = lexer.current else { return expression }
        throw failure("unexpected `\(extra)`")
    }

    private func failure(_ message: String) -> DecantError {
        DecantError(
            .malformedInput,
            "expression `\(lexer.text(0, lexer.scalars.count))`, column \(lexer.position + 1): \(message)"
        )
    }

    /// The binary operator at the current position, longest spelling first.
    private mutating func peekOperator() -> ValueExpression.BinaryOperator? {
        lexer.skipBlanks()
        let operators = ValueExpression.BinaryOperator.allCases.sorted { $0.rawValue.count > $1.rawValue.count }
        return operators.first { lexer.peek($0.rawValue) }
    }

    /// Runs `body` one level deeper (parentheses, arguments, operands, prefix operators), refusing past the limit.
    private mutating func nested<T>(_ body: (inout Self) throws -> T) throws -> T {
        defer { lexer.ascend() }
        guard lexer.descend() else { throw failure(ExpressionLexer.depthMessage) }
        return try body(&self)
    }

    private mutating func parseExpression(minimumPrecedence: Int) throws -> ValueExpression {
        try nested { try $0.parseOperations(minimumPrecedence: minimumPrecedence) }
    }

    private mutating func parseOperations(minimumPrecedence: Int) throws -> ValueExpression {
        var left = try parseUnary()
        while let op = peekOperator(), op.precedence >= minimumPrecedence {
            lexer.position += op.rawValue.unicodeScalars.count
            operators += 1
            guard operators <= Self.maximumOperators else {
                throw failure("more than \(Self.maximumOperators) operators, the limit")
            }
            let next = op.isRightAssociative ? op.precedence : op.precedence + 1
            let right = try parseExpression(minimumPrecedence: next)
            left = .binary(op, left, right)
        }
        return left
    }

    private mutating func parseUnary() throws -> ValueExpression {
        lexer.skipBlanks()
        if lexer.peek("!") && !lexer.peek("!=") {
            lexer.position += 1
            return .unary(.not, try nested { try $0.parseUnary() })
        }
        if lexer.peek("-") {
            lexer.position += 1
            let operand = try nested { try $0.parseUnary() }
            switch operand {
            case .literal(.integer(let value)) where value != .min: return .literal(.integer(-value))
            case .literal(.double(let value)): return .literal(.double(-value))
            default: return .unary(.negate, operand)
            }
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> ValueExpression {
        lexer.skipBlanks()
        guard let scalar = lexer.current else { throw failure("expected a value, found the end") }
        if scalar == "(" {
            lexer.position += 1
            let inner = try parseExpression(minimumPrecedence: 1)
            guard lexer.consume(")") else { throw failure("expected `)`") }
            return inner
        }
        if scalar == "'" || scalar == "\"" {
            guard let text = lexer.quotedString() else { throw failure("unterminated string") }
            return .literal(.string(text))
        }
        switch lexer.number(signed: false) {
        case .value(let value): return .literal(value)
        case .malformed(let text): throw failure("`\(text)` is not a number")
        case nil: break
        }
        if scalar == "$" {
            lexer.position += 1
            let name = lexer.identifier()
            if name == "param" {
                // `$param.bundleID`: a value given to the run (`--param bundleID=…`), read as `param('bundleID')`.
                guard lexer.consume("."), case let key = lexer.identifier(), !key.isEmpty else {
                    throw failure("expected a parameter name after `$param.`")
                }
                return .call("param", [.literal(.string(key))])
            }
            guard name == "source" else {
                throw failure("unknown variable `$\(name)` (the variables are `$source` and `$param`)")
            }
            var path: [String] = []
            while true {
                if lexer.peek(".") {
                    lexer.position += 1
                    let key = lexer.identifier()
                    guard !key.isEmpty else { throw failure("expected a property name after `.`") }
                    path.append(key)
                } else if lexer.peek("[") {
                    // `$source.emails[0]`: an element of an archived array (ValueExpression.indexStep).
                    guard !path.isEmpty else { throw failure("`[` follows a key (`$source.emails[0]`), not `$source`") }
                    lexer.position += 1
                    guard case .value(.integer(let index))? = lexer.number(signed: false), lexer.peek("]") else {
                        throw failure("expected a whole number and `]` after `[` (`$source.emails[0]`)")
                    }
                    lexer.position += 1
                    path.append(ValueExpression.indexStep(Int(index)))
                } else {
                    break
                }
            }
            return .source(keyPath: path)
        }
        if scalar.properties.isAlphabetic || scalar == "_" {
            let name = lexer.identifier()
            switch name {
            case "nil", "null": return .literal(.null)
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            default: break
            }
            guard lexer.consume("(") else {
                throw failure(
                    "`\(name)` is neither a literal nor a function call (write `$source.\(name)` for a property)"
                )
            }
            var arguments: [ValueExpression] = []
            if lexer.consume(")") { return .call(name, arguments) }
            while true {
                arguments.append(try parseExpression(minimumPrecedence: 1))
                if lexer.consume(",") { continue }
                guard lexer.consume(")") else { throw failure("expected `,` or `)` in the arguments of \(name)") }
                return .call(name, arguments)
            }
        }
        throw failure("unexpected `\(scalar)`")
    }
}
