import DecantCore
import Foundation
import Testing

/// Expressions and predicates a fuzzer found: integer overflow (which trapped), nesting and length past what the
/// expression parser took, and `IN` lists long enough to make a scan of the list per object quadratic.
@Suite("Hostile expressions and predicates")
struct HostileExpressionTests {
    static func evaluate(_ text: String) throws -> Value {
        try ValueExpression(parsing: text).evaluate(source: { _ in .null }, functions: ValueExpressionFunctions())
    }

    @Test(
        "arithmetic past a 64-bit integer throws a ValueOverflow, never traps",
        arguments: [
            "floor(1e308)", "ceil(-1e308)", "round(1e308)", "integer(1e308)", "integer('nan')", "integer('inf')",
            "floor(9223372036854775808.0)", "-(-9223372036854775807 - 1)", "(-9223372036854775807 - 1) / -1",
            "9223372036854775807 + 1", "-9223372036854775807 - 2", "3037000500 * 3037000500",
            "abs(-9223372036854775807 - 1)", "integer(string(1e300))",
        ])
    func overflowThrows(_ text: String) throws {
        let error = try #require(throws: DecantError.self) { try Self.evaluate(text) }
        #expect(error.code == .malformedInput)
        #expect(error.underlyingError is ValueOverflow)
        #expect(error.message.contains("does not fit a 64-bit integer"))
    }

    @Test func theEdgesThemselvesAreFine() throws {
        #expect(try Self.evaluate("(-9223372036854775807 - 1) % -1") == .integer(0))
        #expect(try Self.evaluate("9223372036854775806 + 1") == .integer(.max))
        #expect(try Self.evaluate("-9223372036854775807 - 1") == .integer(.min))
        #expect(try Self.evaluate("floor(-9223372036854775808.0)") == .integer(.min))
        #expect(try Self.evaluate("round(2.5, 400)") == .double(2.5))
        #expect(try Self.evaluate("round(2.5, -400)") == .double(0))
        #expect(Value.double(1e300).converted(to: .integer64) == nil)
        #expect(Value.double(.nan).converted(to: .integer64) == nil)
        #expect(Value.double(-9_223_372_036_854_775_808).converted(to: .integer64) == .integer(.min))
        // Decimal(Double) traps on an infinity, and is NaN past about 1e165.
        #expect(Value.double(.infinity).converted(to: .decimal) == nil)
        #expect(Value.double(1e200).converted(to: .decimal) == nil)
        #expect(Value.double(.nan).converted(to: .decimal) == nil)
        #expect(Value.double(2.5).converted(to: .decimal) == .decimal(Decimal(string: "2.5") ?? 0))
    }

    /// An integer default reads as NSString's integerValue (section 1.9): the digits as far as they go, the nearest
    /// bound past 64 bits, never a trap.
    @Test func aModelDefaultPast64BitsIsItsNearestBoundRatherThanATrap() {
        var attribute = Attribute(name: "count", type: .integer64)
        let cases: [(String, Value?)] = [
            ("1e308", .integer(1)), ("nan", .integer(0)), ("-1e19", .integer(-1)), ("2.0", .integer(2)),
            ("1e3", .integer(1)), ("-9223372036854775808", .integer(.min)), ("7.9", .integer(7)),
            ("18446744073709551616", .integer(.max)), ("-18446744073709551616", .integer(.min)),
        ]
        for (text, expected) in cases {
            attribute.defaultValue = text
            #expect(attribute.defaultLiteral == expected, "\(text)")
        }
    }

    @Test func parsingIsBounded() throws {
        let deep = String(repeating: "(", count: 5_000) + "1" + String(repeating: ")", count: 5_000)
        #expect(throws: DecantError.self) { try ValueExpression(parsing: deep) }
        // The limit counts levels as written: 199 parentheses around a literal are fine, 200 are not.
        let allowed = String(repeating: "(", count: 199) + "1" + String(repeating: ")", count: 199)
        #expect(try Self.evaluate(allowed) == .integer(1))
        let refused = String(repeating: "(", count: 200) + "1" + String(repeating: ")", count: 200)
        #expect(throws: DecantError.self) { try ValueExpression(parsing: refused) }
        let negations = String(repeating: "-", count: 5_000) + "1"
        #expect(throws: DecantError.self) { try ValueExpression(parsing: negations) }
        let long = Array(repeating: "1", count: 5_000).joined(separator: " + ")
        let error = try #require(throws: DecantError.self) { try ValueExpression(parsing: long) }
        #expect(error.message.contains("more than 1000 operators"))
        let longest = try ValueExpression(parsing: Array(repeating: "1", count: 1_001).joined(separator: " + "))
        #expect(try longest.evaluate(source: { _ in .null }, functions: ValueExpressionFunctions()) == .integer(1_001))
    }

    /// Values of every kind `IN` meets, and lists of them, with and without `[c]` and `[d]`.
    static let values: [Value] = [
        .null, "Milk", "milk", "MILK", "café", "CAFÉ", "cafe", "cafe\u{301}", .uri("Milk"), .integer(1), .integer(2),
        .double(1.0), .double(-0.0), .integer(0), .double(.nan), .bool(true), .decimal(Decimal(2)),
        .date(Date(timeIntervalSinceReferenceDate: 1)), .data(Data([1, 2])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
    ]

    @Test(arguments: ["IN", "IN[c]", "IN[cd]", "IN[d]"])
    func aMatcherAnswersAsThePredicateDoes(_ op: String) throws {
        let lists: [[Value]] = [
            [], ["milk"], ["MILK", "Café"], [.null, .integer(1)], [.double(.nan)], [.bool(false), "x"],
            [.date(Date(timeIntervalSinceReferenceDate: 1))], [.data(Data([1, 2])), .integer(2)], Self.values,
        ]
        for list in lists {
            let items = list.map(PredicateOperand.value)
            let options: ObjectPredicate.ComparisonOptions =
                op == "IN" ? [] : op == "IN[c]" ? [.caseInsensitive] : op == "IN[d]" ? [.diacriticInsensitive]
                : [.caseInsensitive, .diacriticInsensitive]
            let predicate = ObjectPredicate.comparison(.keyPath(["v"]), .in, .list(items), options)
            let matcher = ObjectPredicateMatcher(predicate)
            for value in Self.values {
                #expect(
                    matcher.evaluate { _ in value } == predicate.evaluate { _ in value },
                    "\(value) \(op) \(list)")
            }
        }
        // Parsed, and inside AND, OR and NOT.
        let parsed = try ObjectPredicate(parsing: "NOT (v \(op) {'milk', 'CAFE', 2}) OR (v == 'x' AND v \(op) {nil})")
        let matcher = ObjectPredicateMatcher(parsed)
        for value in Self.values {
            #expect(matcher.evaluate { _ in value } == parsed.evaluate { _ in value }, "\(value)")
        }
    }
}
