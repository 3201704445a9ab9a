import DecantCore
import Foundation
import Testing

@Suite("Value expressions")
struct ValueExpressionTests {
    static let functions = ValueExpressionFunctions(now: Date(timeIntervalSinceReferenceDate: 0))

    static func evaluate(_ text: String, _ source: [String: Value] = [:]) throws -> Value {
        try ValueExpression(parsing: text).evaluate(
            source: { path in source[path.joined(separator: ".")] ?? .null },
            functions: functions
        )
    }

    @Test(arguments: [
        ("$source.content", "$source.content"),
        ("uppercase(substring($source.content, 0, 40))", "uppercase(substring($source.content, 0, 40))"),
        ("$source.date ?? now()", "$source.date ?? now()"),
        ("(1 + 2) * 3", "(1 + 2) * 3"),
        ("1 + 2 * 3", "1 + 2 * 3"),
        ("'it''s'", "'it'"),
        ("$source.a ?? $source.b ?? 'x'", "$source.a ?? $source.b ?? 'x'"),
        ("!($source.done == true)", "!($source.done == true)"),
        ("-$source.count", "-$source.count"),
        ("1.5e3", "1500.0"),
    ])
    func printsBackWhatItParses(_ text: String, _ printed: String) throws {
        if text == "'it''s'" {
            #expect(throws: DecantError.self) { try ValueExpression(parsing: text) }
            return
        }
        let expression = try ValueExpression(parsing: text)
        #expect(expression.description == printed)
        #expect(try ValueExpression(parsing: expression.description) == expression)
    }

    @Test func evaluatesOperatorsAndFunctions() throws {
        #expect(try Self.evaluate("1 + 2 * 3") == .integer(7))
        #expect(try Self.evaluate("7 / 2") == .double(3.5))
        #expect(try Self.evaluate("$source.a ?? 'none'") == "none")
        #expect(try Self.evaluate("$source.a ?? 'none'", ["a": "x"]) == "x")
        #expect(try Self.evaluate("$source.n + 1") == .null)
        #expect(try Self.evaluate("'a' + 1") == "a1")
        #expect(try Self.evaluate("$source.n >= 3 && $source.n < 5", ["n": 4]) == .bool(true))
        #expect(try Self.evaluate("$source.t != nil", ["t": "x"]) == .bool(true))
        #expect(try Self.evaluate("$source.t != nil") == .bool(false))
        #expect(try Self.evaluate("lowercase(trim('  MiLk '))") == "milk")
        #expect(try Self.evaluate("replace('a-b-c', '-', '+')") == "a+b+c")
        #expect(try Self.evaluate("split('a,b,c', ',', 1)") == "b")
        #expect(try Self.evaluate("join(' ', 'a', nil, 'c')") == "a c")
        #expect(try Self.evaluate("length('héllo')") == .integer(5))
        #expect(try Self.evaluate("round(2.567, 2)") == .double(2.57))
        #expect(try Self.evaluate("floor(2.5)") == .integer(2))
        #expect(try Self.evaluate("ceil(2.1)") == .integer(3))
        #expect(try Self.evaluate("abs(-3)") == .integer(3))
        #expect(try Self.evaluate("if($source.n > 1, 'many', 'one')", ["n": 2]) == "many")
        #expect(try Self.evaluate("format(parse('2020-01-02'), 'yyyy/MM/dd')") == "2020/01/02")
        #expect(try Self.evaluate("format(add(now(), 1, 'days'))") == "2001-01-02T00:00:00.000Z")
        if case .uuid = try Self.evaluate("uuid()") {} else { Issue.record("uuid() is not a UUID") }
    }

    @Test func errorsSayWhereAndWhat() throws {
        let unclosed = try #require(throws: DecantError.self) { try ValueExpression(parsing: "uppercase($source.a") }
        #expect(unclosed.message.contains("column 20"))
        let bare = try #require(throws: DecantError.self) { try ValueExpression(parsing: "content") }
        #expect(bare.message.contains("write `$source.content`"))
        let unknown = try #require(throws: DecantError.self) { try Self.evaluate("shout('a')") }
        #expect(unknown.message.contains("unknown function shout()"))
        let arity = try #require(throws: DecantError.self) { try Self.evaluate("trim()") }
        #expect(arity.message == "trim() takes 1 arguments, not 0")
    }

    @Test func valuesConvertToAttributeTypes() {
        #expect(Value.string("12").converted(to: .integer64) == .integer(12))
        #expect(Value.string("twelve").converted(to: .integer64) == nil)
        #expect(Value.integer(3).converted(to: .string) == "3")
        #expect(Value.integer(1).converted(to: .boolean) == .bool(true))
        #expect(Value.null.converted(to: .date) == .null)
    }
}
