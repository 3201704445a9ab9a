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

/// A precedence-climbing parser over the characters of one expression.
struct ValueExpressionParser {
    /// How deeply parentheses, calls and prefix operators may nest (the parser and every walk of the tree recurse).
    static let maximumDepth = 200
    /// How many infix operators one expression may hold: `a + b + c …` is as deep as it is long once parsed.
    static let maximumOperators = 1000

    private let characters: [Character]
    private var position = 0
    private var depth = 0
    private var operators = 0

    init(text: String) { self.characters = Array(text) }

    mutating func parseWhole() throws -> ValueExpression {
        let expression = try parseExpression(minimumPrecedence: 1)
        skipSpace()
        guard position == characters.count else { throw failure("unexpected `\(characters[position])`") }
        return expression
    }

    private func failure(_ message: String) -> DecantError {
        DecantError(
            .malformedInput,
            "expression `\(String(characters))`, column \(position + 1): \(message)"
        )
    }

    private mutating func skipSpace() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
    }

    private func peek(_ text: String) -> Bool {
        let wanted = Array(text)
        guard position + wanted.count <= characters.count else { return false }
        return Array(characters[position..<position + wanted.count]) == wanted
    }

    /// The binary operator at the current position, longest spelling first.
    private mutating func peekOperator() -> ValueExpression.BinaryOperator? {
        skipSpace()
        let operators = ValueExpression.BinaryOperator.allCases.sorted { $0.rawValue.count > $1.rawValue.count }
        return operators.first { peek($0.rawValue) }
    }

    /// Runs `body` one level deeper (parentheses, arguments, operands, prefix operators), refusing past the limit.
    private mutating func nested<T>(_ body: (inout Self) throws -> T) throws -> T {
        guard depth < Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) levels deep") }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func parseExpression(minimumPrecedence: Int) throws -> ValueExpression {
        try nested { try $0.parseOperations(minimumPrecedence: minimumPrecedence) }
    }

    private mutating func parseOperations(minimumPrecedence: Int) throws -> ValueExpression {
        var left = try parseUnary()
        while let op = peekOperator(), op.precedence >= minimumPrecedence {
            position += op.rawValue.count
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
        skipSpace()
        if peek("!") && !peek("!=") {
            position += 1
            return .unary(.not, try nested { try $0.parseUnary() })
        }
        if peek("-") {
            position += 1
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
        skipSpace()
        guard position < characters.count else { throw failure("expected a value, found the end") }
        let character = characters[position]
        if character == "(" {
            position += 1
            let inner = try parseExpression(minimumPrecedence: 1)
            skipSpace()
            guard peek(")") else { throw failure("expected `)`") }
            position += 1
            return inner
        }
        if character == "'" || character == "\"" { return .literal(.string(try parseString(quote: character))) }
        if character.isNumber { return .literal(try parseNumber()) }
        if character == "$" {
            position += 1
            let name = parseIdentifier()
            guard name == "source" else {
                throw failure("unknown variable `$\(name)` (the only variable is `$source`)")
            }
            var path: [String] = []
            while peek(".") {
                position += 1
                let key = parseIdentifier()
                guard !key.isEmpty else { throw failure("expected a property name after `.`") }
                path.append(key)
            }
            return .source(keyPath: path)
        }
        if character.isLetter || character == "_" {
            let name = parseIdentifier()
            switch name {
            case "nil", "null": return .literal(.null)
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            default: break
            }
            skipSpace()
            guard peek("(") else {
                throw failure(
                    "`\(name)` is neither a literal nor a function call (write `$source.\(name)` for a property)"
                )
            }
            position += 1
            var arguments: [ValueExpression] = []
            skipSpace()
            if peek(")") {
                position += 1
                return .call(name, arguments)
            }
            while true {
                arguments.append(try parseExpression(minimumPrecedence: 1))
                skipSpace()
                if peek(",") {
                    position += 1
                    continue
                }
                guard peek(")") else { throw failure("expected `,` or `)` in the arguments of \(name)") }
                position += 1
                return .call(name, arguments)
            }
        }
        throw failure("unexpected `\(character)`")
    }

    private mutating func parseIdentifier() -> String {
        let start = position
        while position < characters.count,
            characters[position].isLetter || characters[position].isNumber
                || characters[position] == "_" || characters[position] == "@"
        {
            position += 1
        }
        return String(characters[start..<position])
    }

    private mutating func parseNumber() throws -> Value {
        let start = position
        while position < characters.count, characters[position].isNumber { position += 1 }
        var isReal = false
        if position + 1 < characters.count, characters[position] == ".", characters[position + 1].isNumber {
            isReal = true
            position += 1
            while position < characters.count, characters[position].isNumber { position += 1 }
        }
        if position < characters.count, characters[position] == "e" || characters[position] == "E" {
            isReal = true
            position += 1
            if position < characters.count, characters[position] == "-" || characters[position] == "+" { position += 1 }
            while position < characters.count, characters[position].isNumber { position += 1 }
        }
        let text = String(characters[start..<position])
        if !isReal, let integer = Int64(text) { return .integer(integer) }
        guard let real = Double(text) else { throw failure("`\(text)` is not a number") }
        return .double(real)
    }

    private mutating func parseString(quote: Character) throws -> String {
        position += 1
        var text = ""
        while position < characters.count {
            let character = characters[position]
            position += 1
            if character == quote { return text }
            if character == "\\", position < characters.count {
                let escaped = characters[position]
                position += 1
                switch escaped {
                case "n": text.append("\n")
                case "t": text.append("\t")
                default: text.append(escaped)
                }
            } else {
                text.append(character)
            }
        }
        throw failure("unterminated string")
    }
}
