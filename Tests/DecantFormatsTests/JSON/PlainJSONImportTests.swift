import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Plain JSON as other tools export it: an array of one entity's objects with snake_case keys, nested related
/// objects, `author_id` links by key, ISO 8601 dates with offsets or epoch numbers.
@Suite("Plain JSON import")
struct PlainJSONImportTests {
    /// Author (key: id, by uniqueness constraint) ⇄ Book (no key) ⇄ Tag (key: name), Book.author to-one with the
    /// inverse Author.books; Book.tags ⇄ Tag.books many-to-many.
    static let model: ObjectModel = {
        var author = Entity(name: "Author")
        author.attributes = [
            Attribute(name: "id", type: .integer64), Attribute(name: "name", type: .string, isOptional: true),
            Attribute(name: "birthDate", type: .date, isOptional: true),
        ]
        author.uniquenessConstraints = [["id"]]
        author.relationships = [Relationship(name: "books", destination: "Book", inverse: "author", toMany: true)]
        var book = Entity(name: "Book")
        book.attributes = [
            Attribute(name: "isbn", type: .string, isOptional: true),
            Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "publishedAt", type: .date, isOptional: true),
            Attribute(name: "pageCount", type: .integer16, isOptional: true),
            Attribute(name: "price", type: .decimal, isOptional: true),
            Attribute(name: "inStock", type: .boolean, isOptional: true),
        ]
        book.relationships = [
            Relationship(name: "author", destination: "Author", inverse: "books"),
            Relationship(name: "tags", destination: "Tag", inverse: "books", toMany: true),
        ]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string)]
        tag.uniquenessConstraints = [["name"]]
        tag.relationships = [Relationship(name: "books", destination: "Book", inverse: "tags", toMany: true)]
        return ObjectModel(versionName: "Books", entities: [author, book, tag])
    }()

    static func ref(_ entity: String, _ id: String) -> ObjectReference {
        ObjectReference(entity: entity, id: .external(id))
    }

    /// The instant of a UTC calendar date, computed by Foundation (an oracle independent of Decant's parser).
    static func utc(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
    ) -> Double {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return calendar.date(from: components)?.timeIntervalSinceReferenceDate ?? .nan
    }

    static let books = """
        [
          {"title": "Dune", "published_at": "1965-08-01T00:00:00-04:00", "page_count": 412, "price": "9.99",
           "in_stock": true, "author": {"id": 1, "name": "Frank Herbert", "BirthDate": "1920-10-08"},
           "tags": [{"name": "classic"}, {"name": "sf"}]},
          {"Title": "Children of Dune", "publishedAt": "1976-04-01T12:30:00.5+01:30", "author_id": 1,
           "tags": [{"name": "sf"}], "price": 12.50, "PAGE-COUNT": "444"},
          {"title": "Neuromancer", "author": {"id": 2, "name": "William Gibson"}, "published_at": 457574400,
           "in_stock": 0, "price": null}
        ]
        """

    @Test func snakeCaseKeysNestedObjectsLinksByKeyAndDates() throws {
        let store = try JSONTesting.importPlain(Self.books, model: Self.model, entity: "Book")
        #expect(store.counts == ["Author": 2, "Book": 3, "Tag": 2])
        let books = store.records(of: "Book")
        // Layout: inStock, isbn, pageCount, price, publishedAt, title; author, tags.
        #expect(books.map(\.values[5]) == ["Dune", "Children of Dune", "Neuromancer"])
        #expect(books.map(\.values[2]) == [.integer(412), .integer(444), .null])
        #expect(books.map(\.values[0]) == [.bool(true), .null, .bool(false)])
        #expect(books[0].values[3] == .decimal(Decimal(string: "9.99") ?? 0))
        #expect(books[1].values[3] == .decimal(Decimal(string: "12.50") ?? 0))
        #expect(books[0].values[4] == .date(Date(timeIntervalSinceReferenceDate: Self.utc(1965, 8, 1, 4))))
        #expect(books[1].values[4] == .date(Date(timeIntervalSinceReferenceDate: Self.utc(1976, 4, 1, 11) + 0.5)))
        #expect(books[2].values[4] == .date(Date(timeIntervalSince1970: 457_574_400)))
        // Books have no key: generated ids. Their authors are found by key, nested or by author_id.
        let bookIDs = books.map(\.id)
        #expect(Set(bookIDs).count == 3)
        #expect(
            books.map(\.relationships[0]) == [
                .toOne(Self.ref("Author", "1")), .toOne(Self.ref("Author", "1")), .toOne(Self.ref("Author", "2")),
            ])
        #expect(
            books.map(\.relationships[1]) == [
                .toMany([Self.ref("Tag", "classic"), Self.ref("Tag", "sf")]), .toMany([Self.ref("Tag", "sf")]),
                .toMany([]),
            ])
        let authors = store.records(of: "Author")
        #expect(authors.map(\.id) == [.external("1"), .external("2")])
        #expect(
            authors[0].values == [
                .date(Date(timeIntervalSinceReferenceDate: Self.utc(1920, 10, 8))), .integer(1), "Frank Herbert",
            ])
        // Author.books is kept by Book.author, its inverse.
        #expect(authors.allSatisfy { $0.relationships == [.viaInverse] })
        // A tag nested twice is one tag; a new nested tag lists the book it was nested in.
        let tags = store.records(of: "Tag")
        #expect(tags.map(\.id) == [.external("classic"), .external("sf")])
        #expect(tags[1].relationships == [.toMany([ObjectReference(entity: "Book", id: bookIDs[0])])])
    }

    @Test func keysFromOptionsIdentifyObjects() throws {
        let text = #"[{"isbn": "0-441-17271-7", "title": "Dune", "author": {"id": 1}}, {"isbn": "0-441-10266-2"}]"#
        let store = try JSONTesting.importPlain(text, model: Self.model, entity: "Book") { $0.keys = ["Book": "isbn"] }
        #expect(store.records(of: "Book").map(\.id) == [.external("0-441-17271-7"), .external("0-441-10266-2")])
    }

    @Test func nestedChildrenPointBackToTheirParent() throws {
        let text = """
            [{"id": 7, "name": "Ann", "books": [{"title": "One", "tag_ids": []}, {"title": "Two"}]},
             {"id": 8, "books": []}]
            """
        let store = try JSONTesting.importPlain(text, model: Self.model, entity: "Author")
        let books = store.records(of: "Book")
        #expect(books.map(\.relationships[0]) == [.toOne(Self.ref("Author", "7")), .toOne(Self.ref("Author", "7"))])
        #expect(store.records(of: "Author").map(\.relationships) == [[.viaInverse], [.viaInverse]])
    }

    @Test func linksMayComeBeforeTheirObject() throws {
        let text = #"[{"title": "A", "author_id": 3}, {"title": "B", "author": {"id": 3, "name": "Late"}}]"#
        let store = try JSONTesting.importPlain(text, model: Self.model, entity: "Book")
        #expect(
            store.records(of: "Book").map(\.relationships[0]) == [
                .toOne(Self.ref("Author", "3")), .toOne(Self.ref("Author", "3")),
            ])
    }

    @Test func datesAsNumbersFollowTheEpoch() throws {
        let text = #"[{"title": "A", "published_at": 0}, {"title": "B", "published_at": 1.25e2}]"#
        let unix = try JSONTesting.importPlain(text, model: Self.model, entity: "Book")
        #expect(
            unix.records(of: "Book").map(\.values[4]) == [
                .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 125)),
            ])
        let reference = try JSONTesting.importPlain(text, model: Self.model, entity: "Book") {
            $0.json.dateEpoch = .reference
        }
        #expect(
            reference.records(of: "Book").map(\.values[4]) == [
                .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 125)),
            ])
    }

    @Test(
        "ISO 8601 forms",
        arguments: [
            ("2024-05-19", utc(2024, 5, 19)),
            ("2024-05-19T18:14", utc(2024, 5, 19, 18, 14)),
            ("2024-05-19T18:14:06Z", utc(2024, 5, 19, 18, 14, 6)),
            ("2024-05-19 18:14:06.250", utc(2024, 5, 19, 18, 14, 6) + 0.25),
            ("2024-05-19T20:14:06,75+02:00", utc(2024, 5, 19, 18, 14, 6) + 0.75),
            ("2024-05-19T13:44:06-0430", utc(2024, 5, 19, 18, 14, 6)),
            ("2024-05-20T03:14:06+09", utc(2024, 5, 19, 18, 14, 6)),
            ("1900-02-28T23:59:59.999999999Z", utc(1900, 3, 1) - 0.000_000_001),
        ])
    func isoForms(text: String, seconds: Double) throws {
        let store = try JSONTesting.importPlain(
            #"[{"title": "x", "published_at": "\#(text)"}]"#, model: Self.model, entity: "Book")
        #expect(store.records(of: "Book").first?.values[4] == .date(Date(timeIntervalSinceReferenceDate: seconds)))
    }

    @Test func plainNDJSONLines() throws {
        var options = FormatOptions(bundle: JSONTesting.bundle(Self.model))
        options.entity = "Tag"
        let store = try JSONTesting.read(
            Data("{\"name\": \"a\"}\n\n{\"name\": \"b\"}\r\n{\"name\": \"c\"}".utf8), style: .lines, options: options)
        #expect(store.records(of: "Tag").map(\.id) == [.external("a"), .external("b"), .external("c")])
    }

    @Test func theOnlyEntityNeedsNoName() throws {
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string)]
        let model = ObjectModel(versionName: "Tags", entities: [tag])
        let store = try JSONTesting.importPlain(#"[{"name": "a"}, {"NAME": "b"}]"#, model: model, entity: nil)
        #expect(store.records(of: "Tag").map(\.values) == [["a"], ["b"]])
        #expect(store.records(of: "Tag").map(\.id) == [.external("#1"), .external("#2")])
    }

    // MARK: Refused

    static func error(
        _ text: String, entity: String? = "Book", configure: (inout FormatOptions) -> Void = { _ in }
    ) -> DecantError? {
        var options = FormatOptions(bundle: JSONTesting.bundle(model))
        options.entity = entity
        configure(&options)
        return JSONTesting.readError(text, options: options)
    }

    @Test func unknownKeysAreNamed() {
        let error = Self.error("[{\"title\": \"A\"},\n {\"title\": \"B\", \"subtitle\": \"C\"}]")
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.column == 17)
        #expect(error?.location?.keyPath == "subtitle")
        #expect(error?.location?.entity == "Book")
        #expect(error?.message.contains("unknown key subtitle") == true)
        #expect(
            error?.description.hasPrefix("in.json:2:17: entity Book, key subtitle: malformed input: unknown key")
                == true)
    }

    @Test(
        "wrong types name the attribute and what was expected",
        arguments: [
            (#"[{"page_count": "many"}]"#, "page_count", "a whole number (Integer 16)"),
            (#"[{"page_count": 40000}]"#, "page_count", "fits Integer 16"),
            (#"[{"page_count": 1.5}]"#, "page_count", "a whole number"),
            (#"[{"title": 12}]"#, "title", "a string, found a number"),
            (#"[{"in_stock": "yes"}]"#, "in_stock", "true or false"),
            (#"[{"published_at": "yesterday"}]"#, "published_at", "an ISO 8601 date"),
            (#"[{"published_at": "2023-02-29"}]"#, "published_at", "out of range"),
            (#"[{"price": "ten"}]"#, "price", "a decimal number"),
            (#"[{"author": [1]}]"#, "author", "expects one Author, found an array"),
            (#"[{"tags": {"name": "x"}}]"#, "tags", "expects an array"),
            (#"[{"author_id": {"id": 1}}]"#, "author_id", "the key of a Author"),
        ])
    func wrongTypes(text: String, key: String, expected: String) {
        let error = Self.error(text)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 1)
        #expect(error?.location?.keyPath == key)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test func aLinkWithoutItsObjectIsAnError() {
        let error = Self.error("[{\"title\": \"A\", \"author_id\": 1},\n{\"title\": \"B\", \"author_id\": 99}]")
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 1)
        #expect(error?.message.contains("the Author with id 1, which is not in the input") == true)
        #expect(error?.message.contains("1 more") == true)
    }

    @Test func aKeyTwiceAtTheTopIsAnError() {
        let error = Self.error(#"[{"isbn": "1"}, {"isbn": "1"}]"#) { $0.keys = ["Book": "isbn"] }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.column == 17)
        #expect(error?.message.contains("a second Book with isbn 1") == true)
    }

    @Test func linksByKeyNeedAKey() {
        let error = Self.error(#"[{"name": "x", "book_ids": [1]}]"#, entity: "Tag")
        #expect(error?.message.contains("--key Book=ATTRIBUTE") == true)
    }

    @Test func aToManyKeptByItsInverseTakesNoKeys() {
        let error = Self.error(#"[{"id": 1, "books": ["x"]}]"#, entity: "Author") { $0.keys = ["Book": "isbn"] }
        #expect(error?.message.contains("books is set through Book.author") == true)
    }

    @Test func theEntityAndModelMustBeKnown() {
        let noEntity = Self.error("[]", entity: nil)
        #expect(noEntity?.code == .usage)
        #expect(noEntity?.message.contains("--entity") == true)
        let unknown = Self.error("[]", entity: "Magazine")
        #expect(unknown?.code == .usage)
        let noModel = JSONTesting.readError("[]", options: FormatOptions())
        #expect(noModel?.code == .usage)
        #expect(noModel?.message.contains("--model") == true)
        let badKey = Self.error("[]") { $0.keys = ["Book": "barcode"] }
        #expect(badKey?.code == .usage)
    }

    @Test func aTopLevelObjectThatIsNotADocumentIsRefused() {
        let error = Self.error(#"{"title": "A"}"#)
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("first key is \"decant\"") == true)
    }
}
