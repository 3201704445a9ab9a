import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Top-level objects keyed by a uniqueness constraint are not remembered until something inside another object
/// mentions their hierarchy; then the keys read so far are recalled, and the result is what remembering every key
/// (as `--key` still does) gives: the same records, the same errors at the same places.
@Suite("Plain JSON key recall")
struct PlainJSONKeyRecallTests {
    static let model = PlainJSONImportTests.model

    /// `text` read as plain JSON of `entity`, the key remembered from the start (`--key`) or not (the constraint).
    static func read(
        _ text: String, entity: String = "Tag", style: JSONRecordWriter.Style, remembering: Bool
    ) throws -> InMemoryStore {
        var options = FormatOptions(bundle: JSONTesting.bundle(model))
        options.entity = entity
        if remembering { options.keys = ["Tag": "name"] }
        return try JSONTesting.read(Data(text.utf8), style: style, options: options, batchSize: 2)
    }

    /// Lines mentioning Tags from inside Books: earlier, the current and later ones by key, a nested Tag seen before
    /// and one not seen before.
    static let mentions = [
        #"{"name": "a"}"#,
        #"{"name": "b", "books": [{"title": "X", "tags": ["a", "b", "c"]}]}"#,
        #"{"name": "c"}"#,
        #"{"name": "d", "books": [{"title": "Y", "tags": [{"name": "a"}, {"name": "e"}, "d"]}]}"#,
        #"{"name": "f"}"#,
    ]

    @Test(arguments: [JSONRecordWriter.Style.lines, .document])
    func recallGivesWhatRememberingGives(style: JSONRecordWriter.Style) throws {
        let text =
            style == .lines ? Self.mentions.joined(separator: "\n") : "[" + Self.mentions.joined(separator: ",\n") + "]"
        let recalled = try Self.read(text, style: style, remembering: false)
        let remembered = try Self.read(text, style: style, remembering: true)
        #expect(try JSONTesting.cells(recalled) == JSONTesting.cells(remembered))
        // A nested object is appended before the object it is nested in.
        #expect(recalled.records(of: "Tag").map(\.id) == ["a", "b", "c", "e", "d", "f"].map { .external($0) })
        #expect(recalled.records(of: "Book").count == 2)
    }

    /// Every key read again must be single: a duplicate read before the recall is found by it, at its place.
    @Test(arguments: [
        "{\"name\": \"a\"}\n{\"name\": \"a\"}\n{\"name\": \"b\", \"books\": [{\"title\": \"X\", \"tags\": [\"a\"]}]}",
        "{\"name\": \"a\"}\n{\"name\": \"a\", \"books\": [{\"title\": \"X\", \"tags\": [\"a\"]}]}",
        "{\"name\": \"a\"}\n{\"name\": \"b\", \"books\": [{\"title\": \"X\", \"tags\": [\"a\"]}]}\n{\"name\": \"a\"}",
    ])
    func duplicatesAreFoundAsBefore(text: String) {
        var errors: [DecantError?] = []
        for remembering in [false, true] {
            errors.append(#expect(throws: DecantError.self) { try Self.read(text, style: .lines, remembering: remembering) })
        }
        #expect(errors[0]?.message == errors[1]?.message)
        #expect(errors[0]?.message.contains("a second Tag with name a") == true)
        #expect(errors[0]?.location?.line == 2 || errors[0]?.location?.line == 3)
        #expect(errors[0]?.location?.line == errors[1]?.location?.line)
        #expect(errors[0]?.location?.column == errors[1]?.location?.column)
    }

    @Test func aMentionOfAKeyNoObjectHasIsStillAnError() {
        let text = "{\"name\": \"a\"}\n{\"name\": \"b\", \"books\": [{\"title\": \"X\", \"tags\": [\"a\", \"zz\"]}]}"
        let error = #expect(throws: DecantError.self) { try Self.read(text, style: .lines, remembering: false) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 2)
        #expect(error?.message.contains("the Tag with name zz, which is not in the input") == true)
    }

    /// Without a mention, a key two top-level objects share is left to the store's unique index (the reader no
    /// longer remembers every key to find it), and nothing is recalled.
    @Test func withoutAMentionKeysAreNotRemembered() throws {
        let store = try Self.read("{\"name\": \"a\"}\n{\"name\": \"b\"}", style: .lines, remembering: false)
        #expect(store.records(of: "Tag").map(\.id) == [.external("a"), .external("b")])
    }

    /// Top-level objects of a hierarchy no relationship leads to are anonymous: nothing can refer to them.
    @Test func objectsNothingCanReferToAreAnonymous() throws {
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "id", type: .integer64), Attribute(name: "text", type: .string)]
        note.uniquenessConstraints = [["id"]]
        let model = ObjectModel(versionName: "Notes", entities: [note])
        var options = FormatOptions(bundle: JSONTesting.bundle(model))
        options.entity = "Note"
        func firstBatch(_ options: FormatOptions) throws -> RecordBatch {
            let reader = try JSONRecordReader(
                data: Data("{\"id\": 1, \"text\": \"x\"}\n{\"text\": \"y\", \"id\": 2}".utf8), style: .lines,
                options: options)
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: model)))
            #expect(try reader.nextBatch(into: &batch))
            return batch
        }
        let batch = try firstBatch(options)
        #expect(batch.count == 2)
        #expect(batch.isAnonymous(at: 0) && batch.isAnonymous(at: 1))
        #expect(batch.id(at: 1) == .external("2"))
        options.keys = ["Note": "id"]
        #expect(try !firstBatch(options).isAnonymous(at: 0))
        // Book.tags leads to Tag: its top-level objects keep their ids.
        let tags = try Self.read("{\"name\": \"a\"}", style: .lines, remembering: false)
        #expect(tags.records(of: "Tag").map(\.id) == [.external("a")])
    }
}
