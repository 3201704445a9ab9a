import DecantCore
import Foundation
import Testing

/// What policies compute that the expression language lacked: integer division (`/` on two integers gives a
/// fraction when they do not divide), square roots, powers, logarithms and trigonometry, and values given to the run
/// (`$param.name`, `--param name=value`).
@Suite("Functions for policies")
struct PolicyFunctionTests {
    static func evaluate(_ text: String, parameters: [String: String] = [:]) throws -> Value {
        var functions = ValueExpressionFunctions(now: Date(timeIntervalSinceReferenceDate: 0))
        functions.parameters = parameters
        return try ValueExpression(parsing: text).evaluate(source: { _ in .null }, functions: functions)
    }

    @Test(arguments: [
        ("7 / 2", Value.double(3.5)), ("6 / 2", .integer(3)), ("div(7, 2)", .integer(3)), ("div(-7, 2)", .integer(-3)),
        ("div(7, -2)", .integer(-3)), ("div(nil, 2)", .null), ("sqrt(16)", .double(4)), ("pow(2, 10)", .double(1024)),
        ("pow(2, 0.5)", .double(2.0.squareRoot())), ("exp(0)", .double(1)), ("ln(1)", .double(0)),
        ("log(1000)", .double(3)), ("sin(0)", .double(0)), ("cos(0)", .double(1)), ("tan(0)", .double(0)),
        ("asin(1)", .double(Double.pi / 2)), ("acos(1)", .double(0)), ("atan(0)", .double(0)),
        ("atan2(1, 1)", .double(Double.pi / 4)), ("sqrt(nil)", .null),
    ])
    func math(_ text: String, _ expected: Value) throws {
        #expect(try Self.evaluate(text) == expected, "\(text)")
    }

    @Test func integerDivisionIsCheckedAsTheOperatorIs() {
        #expect(throws: DecantError.self) { try Self.evaluate("div(1, 0)") }
        #expect(throws: DecantError.self) { try Self.evaluate("div(-9223372036854775807 - 1, -1)") }
        #expect(throws: DecantError.self) { try Self.evaluate("div(1.5, 2)") }
    }

    @Test func parametersAreGivenToTheRun() throws {
        #expect(try Self.evaluate("$param.bundleID", parameters: ["bundleID": "com.example.app"]) == "com.example.app")
        #expect(try Self.evaluate("param('bundleID') + '.x'", parameters: ["bundleID": "a"]) == "a.x")
        #expect(try ValueExpression(parsing: "$param.bundleID").parameterNames == ["bundleID"])
        let missing = try #require(throws: DecantError.self) { try Self.evaluate("$param.bundleID") }
        #expect(missing.code == .usage && missing.message.contains("--param bundleID=VALUE"))
        #expect(throws: DecantError.self) { try ValueExpression(parsing: "$param") }
        #expect(throws: DecantError.self) { try ValueExpression(parsing: "$other.x") }
    }
}
