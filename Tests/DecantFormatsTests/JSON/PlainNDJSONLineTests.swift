import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Plain NDJSON lines read straight into batches give exactly the batches, and the errors, of the tree path.
@Suite("Plain NDJSON lines")
struct PlainNDJSONLineTests {
    static let model = PlainJSONImportTests.model

    /// What reading `data` as plain NDJSON of `entity` gives: every batch, cell by cell and byte by byte, or the
    /// error; and how many lines went straight into batches.
    static func read(
        _ data: Data, entity: String, direct: Bool, batchSize: Int = 3, model: ObjectModel = model,
        keys: [String: String] = [:]
    ) -> (String, Int) {
        do {
            var options = FormatOptions(bundle: JSONTesting.bundle(model))
            options.entity = entity
            options.keys = keys
            let reader = try JSONRecordReader(
                data: data, path: "in.ndjson", style: .lines, options: options, batchSize: batchSize)
            reader.readsLinesDirectly = direct
            return (try JSONTesting.dump(reader, entity: entity), reader.linesReadDirectly)
        } catch {
            return ("error \(error)", 0)
        }
    }

    /// Checks that `data` reads the same both ways at several batch sizes; returns how many lines went straight in.
    @discardableResult
    static func same(
        _ data: Data, entity: String = "Book", model: ObjectModel = model, keys: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        var count = 0
        for batchSize in [1, 3, 1000] {
            let (tree, _) = read(data, entity: entity, direct: false, batchSize: batchSize, model: model, keys: keys)
            let (direct, directCount) = read(
                data, entity: entity, direct: true, batchSize: batchSize, model: model, keys: keys)
            #expect(
                direct == tree, "\(String(decoding: data, as: UTF8.self).suffix(400))", sourceLocation: sourceLocation)
            count = directCount
        }
        return count
    }

    @discardableResult
    static func same(
        _ lines: [String], entity: String = "Book", keys: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        same(Data(lines.joined(separator: "\n").utf8), entity: entity, keys: keys, sourceLocation: sourceLocation)
    }

    /// Lines before each unusual one: an author and tags defined, at the top level and nested.
    static let setup = [
        #"{"title": "Dune", "author": {"id": 1, "name": "Frank Herbert"}, "tags": [{"name": "sf"}, "sf"]}"#,
        #"{"tags": ["sf", {"name": "classic"}], "author_id": 1, "page_count": 412}"#,
    ]

    /// Lines of every kind, good and bad; each is read after ``setup``, and the good ones all together.
    static let unusual: [(String, Bool)] = [
        (#"{"title": "a\"b\\c\/d\b\f\n\r\t\u00e9\u00C9\ud83d\ude42 línea 日本 🙂"}"#, true),
        (#"{"Title": "x", "published_at": "1965-08-01T00:00:00-04:00", "PAGE-COUNT": 7, "inStock": false}"#, true),
        (#"{"published_at": "2024-05-19T18:14:06.84Z", "in_stock": true, "isbn": "0-441"}"#, true),
        (#"{"published_at": "2024-05-19T20:14:06.750000+02:00", "price": null, "title": null}"#, true),
        (#"{ "title" : "x" , "tags" : [ "sf" , { "name" : "new" } ] }  "#, true),
        ("\t{\"title\": \"x\"}\r", true),
        ("{}", true),
        (#"{"author": null, "tags": null}"#, true),
        (#"{"author": {"id": 1}, "tags": []}"#, true),
        (#"{"author": {"name": "nobody"}, "tags": [{"name": "x"}, {"name": "x"}, "x"]}"#, true),
        (#"{"author": {"id": 7, "birth_date": "1920-10-08"}, "tag_ids": ["sf"]}"#, true),
        (#"{"author": {"id": 8, "birthDate": 1234}}"#, true),
        (#"{"page_count": "444", "in_stock": 1, "price": "9.99"}"#, true),
        (#"{"page_count": 4.0, "in_stock": "true", "price": 12.5}"#, true),
        (#"{"publishedAt": 457574400, "page_count": -32768}"#, true),
        (#"{"author": {"id": 2, "books": []}}"#, true),
        (#"{"author_id": "1"}"#, true),
        (#"{"title": "\u0000"}"#, true),
        (#"{"title": "\ud83d"}"#, false),
        (#"{"title": "\udc00x"}"#, false),
        (#"{"title": "\x"}"#, false),
        ("{\"title\": \"tab\there\"}", false),
        (#"{"title": "x""#, false),
        (#"{"title": "x"} x"#, false),
        (#"{"title": "x",}"#, false),
        (#"{"title" "x"}"#, false),
        (#"[1]"#, false),
        (#""x""#, false),
        (#"{"page_count": 40000}"#, false),
        (#"{"page_count": 1e2}"#, true),
        (#"{"publishedAt": "garbage"}"#, false),
        (#"{"publishedAt": "2024-02-30T00:00:00Z"}"#, false),
        (#"{"subtitle": "x"}"#, false),
        (#"{"title": "a", "Title": "b"}"#, false),
        (#"{"author": 1, "author_id": 1}"#, false),
        (#"{"author": [1]}"#, false),
        (#"{"tags": "sf"}"#, false),
        (#"{"author_id": {"id": 3}}"#, false),
        (#"{"author": 99}"#, false),
        (#"{"tags": ["sf", "missing"]}"#, false),
        (#"{"author_id": 9223372036854775808}"#, false),
        (#"{"in_stock": nul}"#, false),
        (#"{"title": tru}"#, false),
        (#"{"title": 5}"#, false),
        (#"{"in_stock": "yes"}"#, false),
    ]

    @Test func unusualLinesMatchTheTreePath() {
        for (line, good) in Self.unusual {
            let lines = Self.setup + [line, #"{"title": "after"}"#]
            Self.same(lines)
            if good {
                #expect(!Self.read(Data(lines.joined(separator: "\n").utf8), entity: "Book", direct: true).0
                    .hasPrefix("error"), "\(line)")
            } else {
                #expect(Self.read(Data(lines.joined(separator: "\n").utf8), entity: "Book", direct: true).0
                    .hasPrefix("error"), "\(line)")
            }
        }
        let goodLines = Self.setup + Self.unusual.filter(\.1).map(\.0)
        #expect(Self.same(goodLines) >= goodLines.count / 2)
        // The same lines with keys remembered from the start, as `--key` does.
        Self.same(goodLines, keys: ["Author": "id"])
    }

    @Test func invalidUTF8MatchesTheTreePath() {
        var data = Data(Self.setup.joined(separator: "\n").utf8)
        data.append(contentsOf: Array("\n{\"title\": \"a".utf8) + [0xC3, 0x28] + Array("\"}".utf8))
        Self.same(data)
        var overlong = Data(#"{"title": "a"#.utf8)
        overlong.append(contentsOf: [0xE0, 0x80, 0x80] + Array("\"}".utf8))
        Self.same(overlong)
    }

    /// Top-level Tags (keyed by their unique name, not remembered) holding nested Books: a mention of a Tag from
    /// inside recalls the keys, lines after it take either path.
    @Test func topLevelKeysUnrememberedMatchTheTreePath() {
        let lines = [
            #"{"name": "a"}"#,
            #"{"books": [{"title": "X", "page_count": 3}], "name": "b"}"#,
            #"{"name": "c", "books": []}"#,
            #"{"name": "d", "books": [{"title": "Y", "tags": ["a", "d"]}]}"#,
            #"{"name": "e"}"#,
            #"{"name": "e"}"#,
        ]
        Self.same(lines, entity: "Tag")
        Self.same(Array(lines.prefix(5)), entity: "Tag")
        Self.same(Array(lines.prefix(3)) + [lines[5], lines[5]], entity: "Tag")
        Self.same(lines, entity: "Tag", keys: ["Tag": "name"])
    }

    /// The benchmark's shape, written as another tool writes it: keys in any order, `\u` escapes in one line of
    /// three, nested folders and tags named by their key the first time and now and then after, nulls.
    @Test func realisticLinesGoStraightInAndMatch() {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        folder.uniquenessConstraints = [["name"]]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
        tag.uniquenessConstraints = [["name"]]
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "content", type: .string, isOptional: true),
            Attribute(name: "date", type: .date, isOptional: true),
            Attribute(name: "id", type: .integer64, isOptional: true),
            Attribute(name: "pinned", type: .boolean, isOptional: true),
            Attribute(name: "wordCount", type: .integer32, isOptional: true),
        ]
        note.relationships = [
            Relationship(name: "folder", destination: "Folder", inverse: "notes"),
            Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true),
        ]
        note.uniquenessConstraints = [["id"]]
        let model = ObjectModel(versionName: "Keyed", entities: [folder, note, tag])
        let words = ["milk", "línea", "日本", #"note, \"quoted\""#, "two\\nlines", "tab\\there", "back\\\\slash", "🙂"]
        let escaped = ["milk", "l\\u00ednea", "\\u65e5\\u672c", #"note, \"quoted\""#, "two\\nlines", "tab\\there",
            "back\\\\slash", "\\ud83d\\ude42"]
        var seen = Set<String>()
        func mention(_ name: String, _ index: Int) -> String {
            if seen.contains(name), index % 10 != 0 { return "\"\(name)\"" }
            seen.insert(name)
            return "{\"name\": \"\(name)\"}"
        }
        var lines: [String] = []
        for index in 1...300 {
            let ascii = index % 3 == 1
            let content =
                index % 50 == 0
                ? "null" : "\"" + (0..<(index % 5 + 1)).map { (ascii ? escaped : words)[($0 + index) % 8] }
                    .joined(separator: " ") + "\""
            let date = ["\"2024-05-19T18:14:19.25Z\"", "\"2024-05-19T18:14:59Z\"",
                "\"2024-05-19T20:14:45.750000+02:00\""][index % 3]
            let folder = index % 20 == 0 ? "null" : mention("Folder \(index % 7) «x»", index)
            let tags = (0..<(index % 3)).map { mention(["red", "grün", "a,b"][($0 + index) % 3], index + $0) }
            var members = [
                "\"id\": \(index)", "\"date\": \(date)", "\"content\": \(content)", "\"wordCount\": \(index % 9)",
                "\"pinned\": \(index % 7 == 0)", "\"folder\": \(folder)", "\"tags\": [\(tags.joined(separator: ", "))]",
            ]
            if index % 4 == 0 { members.sort() }
            lines.append("{" + members.joined(separator: ", ") + "}")
        }
        let data = Data(lines.joined(separator: "\n").utf8)
        let direct = Self.same(data, entity: "Note", model: model)
        // Every line but the first (read to tell plain NDJSON from Decant's) goes straight in.
        #expect(direct == lines.count - 1)
        Self.same(data, entity: "Note", model: model, keys: ["Note": "id"])
    }

    /// JSON's escapes (RFC 8259 §7) read as the bytes written out here by hand, on both paths. The two paths share
    /// one escape table, so comparing them with each other would pass whatever the table said (`\f` read as 0x0B).
    @Test(arguments: [true, false])
    func escapesReadAsTheBytesTheyName(direct: Bool) throws {
        var options = FormatOptions(bundle: JSONTesting.bundle(Self.model))
        options.entity = "Book"
        // The first line is read to tell plain NDJSON from Decant's; the second is the one under test.
        let lines = [
            #"{"title": "first"}"#,
            #"{"title": "b\bf\fs\/l\u00e9\u00ffU\u00C9\u001f\ud83d\ude42q\"\\n\nr\rt\t"}"#,
        ]
        var reader = try JSONRecordReader(
            data: Data(lines.joined(separator: "\n").utf8), path: "in.ndjson", style: .lines, options: options,
            batchSize: 4)
        reader.readsLinesDirectly = direct
        var writer = InMemoryStore.Writer(model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        #expect(reader.linesReadDirectly == (direct ? 1 : 0), "the line did not take the path under test")
        let title = try #require(RecordLayout(entity: "Book", in: Self.model)?.attributeIndex("title"))
        let books = writer.store.records(of: "Book")
        try #require(books.count == 2)
        guard case .string(let text) = books[1].values[title] else {
            Issue.record("the title is \(books[1].values[title])")
            return
        }
        let expected: [UInt8] = [
            0x62, 0x08, 0x66, 0x0C, 0x73, 0x2F,  // b \b f \f s \/
            0x6C, 0xC3, 0xA9, 0xC3, 0xBF,  // l é ÿ (lower-case hex digits)
            0x55, 0xC3, 0x89, 0x1F,  // U É (upper-case) U+001F
            0xF0, 0x9F, 0x99, 0x82,  // 🙂 from a surrogate pair
            0x71, 0x22, 0x5C, 0x6E, 0x0A, 0x72, 0x0D, 0x74, 0x09,  // q \" \\ n \n r \r t \t
        ]
        #expect(Array(text.utf8) == expected)
    }

    /// Keys compare by their UTF-8 bytes, as a store's unique index and staged ids do: `Café` (one precomposed
    /// character) and `Cafe` with a combining accent are two tags, and a reference in one spelling does not find the
    /// object defined in the other (before, both paths took them for one key: the store then got a reference to no
    /// row, or lost the second tag).
    @Test(arguments: [true, false])
    func keysCompareByTheirBytes(direct: Bool) throws {
        var options = FormatOptions(bundle: JSONTesting.bundle(Self.model))
        options.entity = "Book"
        func read(_ lines: [String]) throws -> InMemoryStore {
            var reader = try JSONRecordReader(
                data: Data(lines.joined(separator: "\n").utf8), path: "in.ndjson", style: .lines, options: options,
                batchSize: 4)
            reader.readsLinesDirectly = direct
            var writer = InMemoryStore.Writer(model: reader.model)
            _ = try RecordTransfer.copy(from: &reader, to: &writer)
            return writer.store
        }
        func bytes(_ id: RecordID) -> [UInt8] { Array("\(id)".utf8) }
        let decomposed = "Cafe\u{301}", precomposed = "Caf\u{e9}"
        let store = try read([
            #"{"title": "A", "tags": [{"name": "Cafe\u0301"}]}"#,
            #"{"title": "B", "tags": [{"name": "Caf\u00e9"}, "Cafe\u0301"]}"#,
        ])
        #expect(store.records(of: "Tag").map { bytes($0.id) } == [decomposed, precomposed].map { Array($0.utf8) })
        let second = try #require(store.records(of: "Book").last)
        guard case .toMany(let tags)? = second.relationships.last else {
            Issue.record("book B has no tags: \(second)")
            return
        }
        #expect(tags.map { bytes($0.id) } == [precomposed, decomposed].map { Array($0.utf8) })

        let error = #expect(throws: DecantError.self) {
            _ = try read([#"{"title": "A", "tags": [{"name": "Cafe\u0301"}]}"#, #"{"title": "B", "tags": ["Caf\u00e9"]}"#])
        }
        #expect(error?.location?.line == 2)
        #expect(error?.message.contains("refers to the Tag with name Café, which is not in the input") == true,
            "\(error?.message ?? "")")
    }
}
