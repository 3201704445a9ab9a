public import DecantCore
import Foundation

/// A model with every attribute type and relationship kind, and records that use them all: inheritance with an
/// entity-key column, ordered one-to-many, many-to-many, to-many without inverse, external binary storage.
/// Every format's round trip runs on it.
///
/// ```swift
/// var store = InMemoryStore(model: LibraryFixture.model)
/// for (_, records) in LibraryFixture.records { for record in records { try store.insert(record) } }
/// ```
public enum LibraryFixture {
    /// Shelf (ordered to-many books) ⇄ Book (every attribute type; EBook below it) ⇄ Author (many-to-many),
    /// Book.tags (to-many without inverse), Reading.book (to-one without inverse, to an entity with a sub-entity).
    public static let model: ObjectModel = {
        var shelf = Entity(name: "Shelf")
        shelf.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        var books = Relationship(name: "books", destination: "Book", inverse: "shelf", toMany: true)
        books.isOrdered = true
        shelf.relationships = [books]

        var book = Entity(name: "Book")
        var cover = Attribute(name: "cover", type: .binary, isOptional: true)
        cover.allowsExternalBinaryDataStorage = true
        book.attributes = [
            Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "id", type: .uuid, isOptional: true),
            cover,
            Attribute(name: "published", type: .date, isOptional: true),
            Attribute(name: "price", type: .decimal, isOptional: true),
            Attribute(name: "rating", type: .double, isOptional: true),
            Attribute(name: "pages", type: .integer32, isOptional: true),
            Attribute(name: "link", type: .uri, isOptional: true),
            Attribute(name: "extra", type: .transformable, isOptional: true),
            Attribute(name: "available", type: .boolean, isOptional: true),
        ]
        book.relationships = [
            Relationship(name: "shelf", destination: "Shelf", inverse: "books"),
            Relationship(name: "authors", destination: "Author", inverse: "books", toMany: true),
            Relationship(name: "tags", destination: "Tag", toMany: true),
        ]
        var ebook = Entity(name: "EBook", parentName: "Book")
        ebook.attributes = [Attribute(name: "fileSize", type: .integer64, isOptional: true)]
        var author = Entity(name: "Author")
        author.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        author.relationships = [Relationship(name: "books", destination: "Book", inverse: "authors", toMany: true)]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var reading = Entity(name: "Reading")
        reading.attributes = [Attribute(name: "when", type: .date, isOptional: true)]
        reading.relationships = [Relationship(name: "book", destination: "Book")]
        return ObjectModel(versionName: "Library", entities: [shelf, book, ebook, author, tag, reading], versionIdentifiers: ["1"])
    }()

    /// A reference by primary key.
    public static func reference(_ entity: String, _ key: Int64) -> ObjectReference {
        ObjectReference(entity: entity, id: .primaryKey(key))
    }

    /// The records of the library, by entity, in primary-key order.
    public static let records: [String: [Record]] = {
        let day = Date(timeIntervalSinceReferenceDate: 737_057_646.84)
        func book(_ key: Int64, entity: String, title: String, shelf: Int64?, authors: [Int64], tags: [Int64]) -> Record {
            Record(
                entity: entity, id: .primaryKey(key),
                values: [
                    .bool(key % 2 == 0), .data(Data(repeating: UInt8(key), count: Int(key) * 10)),
                    .transformable(Data("bplist00".utf8)),
                ] + (entity == "EBook" ? [.integer(1 << 40)] : []) + [ .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5\(key)") ?? UUID()),
                    .uri("https://example.com/\(key)"), .integer(100 + key), .decimal(Decimal(string: "10.5")!),
                    .date(day.addingTimeInterval(Double(key))), .double(4.5), .string(title),
                ],
                relationships: [
                    .toMany(authors.map { reference("Author", $0) }),
                    .toOne(shelf.map { reference("Shelf", $0) }),
                    .toMany(tags.map { reference("Tag", $0) }),
                ])
        }
        return [
            "Shelf": [
                Record(
                    entity: "Shelf", id: .primaryKey(1), values: ["Fiction"],
                    relationships: [.toMany([reference("Book", 3), reference("Book", 1), reference("EBook", 2)])]),
                Record(entity: "Shelf", id: .primaryKey(2), values: ["Empty ✓"], relationships: [.toMany([])]),
            ],
            "Book": [
                book(1, entity: "Book", title: "Dune", shelf: 1, authors: [1, 2], tags: [1]),
                book(3, entity: "Book", title: "", shelf: 1, authors: [], tags: [2]),
            ],
            "EBook": [book(2, entity: "EBook", title: "Snow Crash", shelf: 1, authors: [2], tags: [3])],
            "Author": [
                Record(entity: "Author", id: .primaryKey(1), values: ["Frank"], relationships: [.toMany([reference("Book", 1)])]),
                Record(
                    entity: "Author", id: .primaryKey(2), values: [nil],
                    relationships: [.toMany([reference("Book", 1), reference("EBook", 2)])]),
            ],
            "Tag": [
                Record(entity: "Tag", id: .primaryKey(1), values: ["classic"]),
                Record(entity: "Tag", id: .primaryKey(2), values: ["new"]),
                Record(entity: "Tag", id: .primaryKey(3), values: ["digital"]),
            ],
            "Reading": [
                Record(entity: "Reading", id: .primaryKey(1), values: [.date(day)], relationships: [.toOne(reference("EBook", 2))]),
                Record(entity: "Reading", id: .primaryKey(2), values: [nil], relationships: [.toOne(nil)]),
            ],
        ]
    }()
}
