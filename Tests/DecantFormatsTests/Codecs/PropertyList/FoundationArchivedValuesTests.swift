import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// ``FoundationArchivedValues``: what a migration's key path reads inside a keyed archive, and how a value is archived
/// for a Transformable attribute.
@Suite("Key paths into keyed archives")
struct FoundationArchivedValuesTests {
    static let reader = FoundationArchivedValues()

    @Test("keys, indexes and @count read a nested value; a missing key or index is nil; a collection is archived again")
    func readsPaths() throws {
        let data = try TransformableFixtures.nestedDictionary()
        func read(_ path: [String]) throws -> Value { try Self.reader.value(at: path, inArchive: data) }
        #expect(try read(["name"]) == .string("n"))
        #expect(try read(["info", "tags", "[0]"]) == .string("a"))
        #expect(try read(["info", "tags", "[1]"]) == .integer(2))
        #expect(try read(["info", "tags", "[2]"]) == .null)
        #expect(try read(["info", "tags", "@count"]) == .integer(2))
        #expect(try read(["info", "when"]) == .date(Date(timeIntervalSinceReferenceDate: 1000)))
        #expect(try read(["info", "link"]) == .uri("file:///a"))
        #expect(try read(["info", "id"]) == .uuid(UUID(uuid: (7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7))))
        #expect(try read(["info", "nothing"]) == .null)
        #expect(try read(["missing", "deeper"]) == .null)
        #expect(try read(["name", "[0]"]) == .null)
        // The root is the archive itself; an inner collection is archived again, as NSKeyedArchiver lays it out.
        #expect(try read([]) == .transformable(data))
        guard case .transformable(let tags) = try read(["info", "tags"]) else {
            Issue.record("tags is not archived again")
            return
        }
        #expect(
            try FoundationValue(archivedData: tags) == .collection([.string("a"), .integer(2)], .mutableArray))
    }

    @Test("no archive, a damaged one and an app class fail, each as its kind")
    func failures() throws {
        func kind(_ data: Data) -> ArchivedValueFailure.Kind? {
            do {
                _ = try Self.reader.value(at: ["title"], inArchive: data)
                return nil
            } catch {
                return error.kind
            }
        }
        let good = try TransformableFixtures.nestedDictionary()
        #expect(kind(Data("#ff0000".utf8)) == .notAnArchive)
        #expect(kind(good.prefix(good.count - 10)) == .unreadable)
        #expect(kind(try TransformableFixtures.cyclic()) == .unreadable)
        #expect(kind(try TransformableFixtures.object("MyApp.Cover")) == .foreignClass)
    }

    @Test("values are archived as Foundation's classes; a composite as a dictionary in name order")
    func archivesValues() throws {
        let composite = Value.composite(["b": .integer(2), "a": .string("x")])
        let archived = try Self.reader.archivedData(of: composite)
        #expect(
            try FoundationValue(archivedData: archived)
                == .dictionary([.init("a", .string("x")), .init("b", .integer(2))]))
        #expect(try FoundationValue(archivedData: Self.reader.archivedData(of: .uri("https://a"))) == .url("https://a"))
        #expect(throws: ArchivedValueFailure.self) { try Self.reader.archivedData(of: .decimal(1)) }
    }
}
