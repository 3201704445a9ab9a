import DecantCore
import Foundation
import Testing

/// NSPredicate format syntax: parsing, NSPredicate's evaluation rules, and errors that point at the problem.
@Suite("Predicates")
struct ObjectPredicateTests {
    static let note: [String: Value] = [
        "text": .string("Buy Milk and Crème fraîche"), "pages": .integer(12), "rating": .double(4.5),
        "pinned": .bool(true), "title": .null,
        "date": .date(Date(timeIntervalSinceReferenceDate: 600_000_000)),
    ]

    static func evaluate(_ text: String) throws -> Bool {
        try ObjectPredicate(parsing: text).evaluate { path in note[path.joined(separator: ".")] ?? .null }
    }

    @Test("evaluates as NSPredicate does", arguments: [
        ("pages > 10", true), ("pages >= 12 AND pages <= 12", true), ("pages == 12.0", true), ("pages != 12", false),
        ("pages => 13", false), ("pages =< 12", true), ("pages <> 11", true), ("12 < pages", false),
        ("rating BETWEEN {4, 5}", true), ("pages IN {1, 2, 12}", true), ("NOT pages IN {1, 2}", true),
        ("pinned == YES", true), ("pinned = FALSE", false), ("title == nil", true), ("title != nil", false),
        ("title != 'x'", true), ("title < 'x'", false), ("NOT (title < 'x')", true), ("title BEGINSWITH ''", false),
        ("text BEGINSWITH 'Buy'", true), ("text BEGINSWITH 'buy'", false), ("text BEGINSWITH[c] 'buy'", true),
        ("text ENDSWITH 'fraîche'", true), ("text ENDSWITH[d] 'fraiche'", true), ("text ENDSWITH 'fraiche'", false),
        ("text CONTAINS[cd] 'CREME'", true), ("text CONTAINS 'milk'", false), ("text LIKE 'Buy*'", true),
        ("text LIKE '?uy M*e'", true), ("text LIKE 'Buy'", false), ("text LIKE[c] '*MILK*'", true),
        (#"text MATCHES "Buy .* and .*""#, true), (#"text MATCHES "Milk""#, false),
        ("pages > 10 && (rating < 1 || pinned == YES)", true), ("! (pages > 10)", false),
        (#"date > CAST("2019-01-01", "NSDate")"#, true), (#"date < CAST("2019-01-01T00:00:00+02:00", "NSDate")"#, false),
        ("date == CAST(600000000, 'NSDate')", true), ("TRUEPREDICATE", true), ("FALSEPREDICATE OR pages == 12", true),
        ("#text CONTAINS 'Milk'", true), (#"text == "Buy \"Milk\"""#, false),
    ])
    func evaluates(_ text: String, _ expected: Bool) throws {
        #expect(try Self.evaluate(text) == expected, "\(text)")
    }

    @Test("errors name the position", arguments: [
        ("pages >", 8, "expected a value or key path"), ("pages >> 2", 8, "expected a key path"),
        ("pages ~ 2", 7, "expected a comparison operator"), ("text CONTAINS[x] 'a'", 15, "unknown comparison option"),
        ("(pages > 1", 11, "expected )"), ("text == 'open", 9, "no closing"), ("ANY tags.name == 'x'", 1, "ANY"),
        ("pages > $limit", 9, "variables"), ("pages > 1 pages", 11, "expected AND, OR or the end"),
        (#"date > CAST("yesterday", "NSDate")"#, 8, "ISO 8601"), ("notes.@count > 2", 7, "collection operators"),
        ("rating BETWEEN {1}", 19, "BETWEEN takes"),
    ])
    func errors(_ text: String, _ column: Int, _ message: String) throws {
        let error = #expect(throws: DecantError.self) { try ObjectPredicate(parsing: text) }
        #expect(error?.code == .usage)
        #expect(error?.location?.column == column, "\(text): \(error?.description ?? "")")
        #expect(error?.message.contains(message) == true, "\(text): \(error?.message ?? "")")
        #expect(error?.location?.path == "--where")
    }

    @Test func nestingIsBounded() throws {
        let deep = String(repeating: "(", count: 10_000) + "pages > 1" + String(repeating: ")", count: 10_000)
        let error = #expect(throws: DecantError.self) { try ObjectPredicate(parsing: deep) }
        #expect(error?.message.contains("nested more than") == true)
        let negations = String(repeating: "NOT ", count: 10_000) + "pages > 1"
        #expect(throws: DecantError.self) { try ObjectPredicate(parsing: negations) }
    }

    @Test func likeNeverBacktracksExponentially() throws {
        let text = String(repeating: "a", count: 5_000)
        let predicate = try ObjectPredicate(parsing: "text LIKE '" + String(repeating: "*a", count: 200) + "b'")
        #expect(predicate.evaluate { _ in .string(text) } == false)
    }

    @Test func sortKeys() throws {
        let keys = try SortKey.list(parsing: "date:desc, title ,folder.name:asc")
        #expect(keys == [
            SortKey(keyPath: ["date"], ascending: false), SortKey(keyPath: ["title"]),
            SortKey(keyPath: ["folder", "name"]),
        ])
        let error = #expect(throws: DecantError.self) { try SortKey.list(parsing: "date,title:up") }
        #expect(error?.location?.column == 6)
        #expect(error?.code == .usage)
    }
}
