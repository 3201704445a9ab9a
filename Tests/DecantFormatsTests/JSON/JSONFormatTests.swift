import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Recognising JSON and NDJSON inputs, and the writer's output lifecycle: built beside the destination, renamed
/// into place by finish, gone after abandon.
@Suite("JSON formats")
struct JSONFormatTests {
    static func probe(_ text: String, name: String = "in.json") -> FormatProbe {
        FormatProbe(url: URL(fileURLWithPath: "/tmp/\(name)"), isDirectory: false, header: Data(text.utf8))
    }

    @Test(
        "content and extension tell JSON from NDJSON",
        arguments: [
            ("{\n  \"decant\": {\"formatVersion\": 1}", "in.json", "json"),
            ("{\"decant\":{\"formatVersion\":1}}\n{\"@id\":\"Note/p1\"}\n", "in.json", "ndjson"),
            ("{\"decant\":{\"formatVersion\":1}}\n", "in.txt", "ndjson"),
            ("\u{FEFF}  [{\"title\": \"a\"},\n {\"title\": \"b\"}]", "in", "json"),
            ("{\"title\": \"a\"}\n{\"title\": \"b\"}\n", "in", "ndjson"),
            ("{\"title\": \"a\"}\n", "in.jsonl", "ndjson"),
            ("{\"title\": \"a\", \"long\": \"", "in.ndjson", "ndjson"),
            ("{\"title\": \"a\"}\n", "in", "json"),
            ("SQLite format 3\0", "in.json", "none"),
            ("title,author\n", "in.csv", "none"),
        ])
    func recognition(text: String, name: String, expected: String) {
        let probe = Self.probe(text, name: name)
        let json = JSONFormat().recognizes(probe)
        let ndjson = NDJSONFormat().recognizes(probe)
        #expect(!(json && ndjson))
        #expect((json ? "json" : ndjson ? "ndjson" : "none") == expected)
    }

    @Test func abandonedWriterLeavesNothingAndKeepsTheOldFile() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try JSONTesting.store(LibraryFixture.model, LibraryFixture.records)
        let existing = folder.appendingPathComponent("existing.json")
        try Data("old".utf8).write(to: existing)
        for (name, style) in [
            ("new.json", JSONRecordWriter.Style.document), ("existing.json", .document), ("new.ndjson", .lines),
        ] {
            let url = folder.appendingPathComponent(name)
            let writer = try JSONRecordWriter(creating: url, model: store.model, style: style)
            var reader = store.makeReader(batchSize: 1)
            var batch = try #require(RecordLayout(entity: "Shelf", in: store.model)).emptyBatch()
            while try reader.nextBatch(into: &batch) { try writer.write(batch) }
            writer.abandon()
            writer.abandon()
            #expect(throws: DecantError.self) { try writer.write(batch) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["existing.json"])
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
    }

    @Test func aWriterReleasedUnfinishedLeavesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let writer = try JSONRecordWriter(
                creating: folder.appendingPathComponent("out.json"), model: LibraryFixture.model)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)
            _ = writer
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aFailedCopyAbandonsTheWriter() throws {
        // A reader that fails midway (a broken second object): the transfer abandons the writer.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let header = String(decoding: JSONDocumentHeader(model: LibraryFixture.model).encoded(), as: UTF8.self)
        let objects = #"[{"@id": "Tag/p1", "name": "a"}, {"@id": "Tag/p2", "name": 1}]"#
        let text = "{\"decant\": \(header), \"objects\": \(objects)}"
        var reader = try JSONRecordReader(
            data: Data(text.utf8), style: .document,
            options: FormatOptions(bundle: JSONTesting.bundle(LibraryFixture.model)),
            batchSize: 1)
        let output = folder.appendingPathComponent("out.ndjson")
        var writer = try JSONRecordWriter(creating: output, model: reader.model, style: .lines)
        let error = #expect(throws: DecantError.self) { _ = try RecordTransfer.copy(from: &reader, to: &writer) }
        #expect(error?.location?.keyPath == "name")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func finishRenamesIntoPlace() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("out.json")
        try Data("old".utf8).write(to: url)
        let writer = try JSONRecordWriter(creating: url, model: LibraryFixture.model)
        #expect(try Data(contentsOf: url) == Data("old".utf8))
        try writer.finish()
        try writer.finish()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.json"])
        #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self).hasPrefix("{\n  \"decant\": {"))
    }

    @Test func valuesTheDocumentCannotCarryStopTheWriter() throws {
        // A store may hold text in an integer column, or bytes that are not UTF-8 in a text column: writing them
        // would lose or corrupt them, so the writer stops naming the object instead.
        let model = JSONRoundTripTests.edgeModel
        let layout = try #require(RecordLayout(entity: "Thing", in: model))
        for (attribute, cell) in [("i64", { (batch: inout RecordBatch) in batch.appendText("7") }),
                                  ("text", { (batch: inout RecordBatch) in batch.appendBlob([0x41]) }),
                                  ("text", { (batch: inout RecordBatch) in
                                      [UInt8]([0xFF]).withUnsafeBytes { batch.appendText(utf8: $0) } })] {
            var batch = layout.emptyBatch()
            batch.beginRecord(id: .primaryKey(9))
            for each in layout.attributes {
                if each.name == attribute { cell(&batch) } else { batch.appendNull() }
            }
            batch.appendNull()
            batch.appendReferenceList([])
            batch.endRecord()
            let folder = try Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let writer = try JSONRecordWriter(creating: folder.appendingPathComponent("out.json"), model: model)
            let error = #expect(throws: DecantError.self) { try writer.write(batch) }
            #expect(error?.code == .malformedInput)
            #expect(error?.location?.object == "Thing/p9")
            #expect(error?.location?.keyPath == attribute)
            writer.abandon()
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test func anUnwritableFolderCannotBeCreated() {
        let error = #expect(throws: DecantError.self) {
            _ = try JSONRecordWriter(
                creating: URL(fileURLWithPath: "/nonexistent/folder/out.json"), model: LibraryFixture.model)
        }
        #expect(error?.code == .cannotCreateOutput)
    }

    @Test func aMissingInputIsNotFound() {
        let error = #expect(throws: DecantError.self) {
            _ = try JSONFormat().makeReader(at: URL(fileURLWithPath: "/nonexistent/in.json"), options: FormatOptions())
        }
        #expect(error?.code == .fileNotFound)
    }

    @Test func aValueThatDoesNotFitItsAttributeFailsNamingTheObjectAndAttribute() throws {
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "count", type: .integer64, isOptional: true),
            Attribute(name: "title", type: .string, isOptional: true),
        ]
        let model = ObjectModel(versionName: "Notes", entities: [note])
        let layout = try #require(RecordLayout(entity: "Note", in: model))
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(fill: (inout RecordBatch) -> Void, keyPath: String, problem: String)] = [
            ({ $0.appendText("seven"); $0.appendNull() }, "count", "the Integer 64 attribute count holds text"),
            (
                { batch in
                    batch.appendInteger(7)
                    [UInt8]([0x61, 0xFF]).withUnsafeBytes { batch.appendText(utf8: $0) }
                }, "title", "holds text that is not valid UTF-8"
            ),
        ]
        for (fill, keyPath, problem) in cases {
            var batch = layout.emptyBatch()
            batch.beginRecord(id: .external("n1"))
            fill(&batch)
            batch.endRecord()
            let writer = try JSONRecordWriter(
                creating: folder.appendingPathComponent("out.ndjson"), model: model, style: .lines)
            let error = #expect(throws: DecantError.self) { try writer.write(batch) }
            #expect(error?.code == .malformedInput)
            #expect(error?.location?.object == "Note/n1")
            #expect(error?.location?.keyPath == keyPath)
            #expect(error?.message.contains(problem) == true)
            writer.abandon()
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test func anObjectThatFailsLeavesNothingOfItselfInTheOutput() throws {
        // A writer kept after a failed write (not abandoned) still finishes a valid document of the objects written.
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "count", type: .integer64, isOptional: true)]
        let model = ObjectModel(versionName: "Notes", entities: [note])
        let layout = try #require(RecordLayout(entity: "Note", in: model))
        func batch(_ fill: (inout RecordBatch) -> Void) -> RecordBatch {
            var batch = layout.emptyBatch()
            batch.beginRecord(id: .external("n1"))
            fill(&batch)
            batch.endRecord()
            return batch
        }
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("out.json")
        let writer = try JSONRecordWriter(creating: url, model: model)
        try writer.write(batch { $0.appendInteger(1) })
        #expect(throws: DecantError.self) { try writer.write(batch { $0.appendText("seven") }) }
        try writer.write(batch { $0.appendInteger(3) })
        try writer.finish()
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        let objects = try #require(document?["objects"] as? [[String: Any]])
        #expect(objects.map { $0["count"] as? Int } == [1, 3])
    }
}
