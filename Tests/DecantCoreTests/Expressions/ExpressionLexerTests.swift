import DecantCore
import Foundation
import Testing

/// Value expressions and predicates share one lexer: the same number spellings read as the same values or are
/// refused by both, and both stop at the same depth with the same words.
@Suite("Shared expression lexer")
struct ExpressionLexerTests {
    /// The value a predicate's right-hand constant reads as.
    static func predicateValue(_ text: String) throws -> Value? {
        guard case .comparison(_, _, .value(let value), _) = try ObjectPredicate(parsing: "n == \(text)") else {
            return nil
        }
        return value
    }

    @Test(
        "both read a number the same",
        arguments: [
            ("0", Value.integer(0)), ("12", .integer(12)), ("1.5", .double(1.5)), (".5", .double(0.5)),
            ("1e3", .double(1_000)), ("1.5E-2", .double(0.015)), ("9223372036854775807", .integer(.max)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("5e-324", .double(.leastNonzeroMagnitude)),
        ])
    func accepted(_ text: String, _ value: Value) throws {
        #expect(try ValueExpression(parsing: text) == .literal(value), "\(text)")
        #expect(try Self.predicateValue(text) == value, "\(text)")
        #expect(NumberText.isDecimalLiteral(text))
    }

    @Test(
        "both refuse what is not a number",
        arguments: ["1e", "1e+", "1E-", "1.", "1e400", "0x10", "1.5.2", "1..2", "\u{0663}", "12abc"])
    func refused(_ text: String) throws {
        #expect(throws: DecantError.self, "\(text)") { try ValueExpression(parsing: text) }
        #expect(throws: DecantError.self, "\(text)") { try ObjectPredicate(parsing: "n == \(text)") }
        // 1e400 is written as a number, and refused as one no double holds.
        #expect(NumberText.isDecimalLiteral(text) == (text == "1e400"))
    }

    @Test func aMalformedNumberIsNamedAlike() throws {
        for text in ["1e", "1e400"] {
            let expression = try #require(throws: DecantError.self) { try ValueExpression(parsing: text) }
            let predicate = try #require(throws: DecantError.self) { try ObjectPredicate(parsing: "n == \(text)") }
            #expect(expression.message.contains("`\(text)` is not a number"), "\(expression.message)")
            #expect(predicate.message.contains("\(text) is not a number"), "\(predicate.message)")
            // The column is where the number starts.
            #expect(expression.message.contains("column 1:") && predicate.location?.column == 6)
        }
    }

    /// An expression and a predicate nested `levels` deep, by parentheses or by negations.
    static func nested(_ levels: Int, parentheses: Bool) -> (expression: String, predicate: String) {
        guard parentheses else {
            return (String(repeating: "!", count: levels) + "true", String(repeating: "NOT ", count: levels) + "n == 1")
        }
        let open = String(repeating: "(", count: levels)
        let close = String(repeating: ")", count: levels)
        return (open + "1" + close, open + "n == 1" + close)
    }

    @Test("both stop at the same depth with the same words", arguments: [true, false])
    func depth(_ parentheses: Bool) throws {
        let allowed = Self.nested(199, parentheses: parentheses)
        _ = try ValueExpression(parsing: allowed.expression)
        _ = try ObjectPredicate(parsing: allowed.predicate)
        let refused = Self.nested(200, parentheses: parentheses)
        let expression = try #require(throws: DecantError.self) { try ValueExpression(parsing: refused.expression) }
        let predicate = try #require(throws: DecantError.self) { try ObjectPredicate(parsing: refused.predicate) }
        #expect(expression.message.hasSuffix("nested more than 200 levels deep"))
        #expect(predicate.message == "nested more than 200 levels deep")
    }

    @Test func stringsReadAlike() throws {
        for (text, value) in [(#"'a\tb'"#, "a\tb"), (#""it\"s""#, "it\"s"), (#"'a\rb'"#, "a\rb"), ("'é'", "é")] {
            #expect(try ValueExpression(parsing: text) == .literal(.string(value)), "\(text)")
            #expect(try Self.predicateValue(text) == .string(value), "\(text)")
        }
        #expect(throws: DecantError.self) { try ValueExpression(parsing: "'open") }
        #expect(throws: DecantError.self) { try ObjectPredicate(parsing: "n == 'open") }
    }
}
