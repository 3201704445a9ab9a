import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// The CSV writer's output appears whole or not at all: abandoned, released unfinished or failed part-way it leaves
/// nothing; it replaces only what it wrote itself; a single file holds one entity.
@Suite("CSV writer")
struct CSVWriterTests {
    /// What is in `folder`, recursively, as relative paths.
    static func contents(of folder: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        return (enumerator?.allObjects as? [String] ?? []).sorted()
    }

    @Test("an abandoned writer leaves nothing", arguments: ["library", "Book.csv"])
    func abandonedWriterLeavesNothing(_ name: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try CSVWriter(creating: folder.appendingPathComponent(name), model: LibraryFixture.model)
        let book = try #require(LibraryFixture.batches.first { $0.layout.entityName == "Book" })
        try writer.write(book)
        try writer.write(book)
        #expect(!Self.contents(of: folder).isEmpty)
        writer.abandon()
        writer.abandon()
        #expect(Self.contents(of: folder).isEmpty)
        #expect(throws: DecantError.self) { try writer.write(book) }
        try writer.finish()
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test func writerReleasedUnfinishedLeavesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let writer = try CSVWriter(creating: folder.appendingPathComponent("library"), model: LibraryFixture.model)
            for batch in LibraryFixture.batches { try writer.write(batch) }
        }
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test func failedCopyLeavesTheEarlierOutputAsItWas() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        let before = try Self.contents(of: output).map { ($0, try Data(contentsOf: output.appendingPathComponent($0))) }
        // A reader that fails after its third batch.
        struct Failing: RecordReader {
            var batches: [RecordBatch]
            let model = LibraryFixture.model
            mutating func nextBatch(into batch: inout RecordBatch) throws -> Bool {
                guard batches.count > 3 else { throw DecantError(.malformedInput, "failed on purpose") }
                batch = batches.removeFirst()
                return true
            }
        }
        for overlapping in [true, false] {
            var reader = Failing(batches: LibraryFixture.batches)
            var writer = try CSVWriter(creating: output, model: LibraryFixture.model)
            #expect(throws: DecantError.self) {
                try RecordTransfer.copy(from: &reader, to: &writer, overlapping: overlapping)
            }
            let after = try Self.contents(of: output).map {
                ($0, try Data(contentsOf: output.appendingPathComponent($0)))
            }
            #expect(after.map(\.0) == before.map(\.0))
            #expect(after.map(\.1) == before.map(\.1))
            #expect(Self.contents(of: folder).allSatisfy { $0 == "library" || $0.hasPrefix("library/") })
        }
    }

    @Test func replacesOnlyWhatDecantWrote() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out")
        // A folder of someone else's files is refused, and left alone.
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: output.appendingPathComponent("notes.txt"))
        let refused = #expect(throws: DecantError.self) { try CSVWriter(creating: output, model: LibraryFixture.model) }
        #expect(refused?.code == .cannotCreateOutput)
        #expect(refused?.message.contains("not a CSV folder Decant wrote") == true)
        #expect(Self.contents(of: folder) == ["out", "out/notes.txt"])
        // An empty folder, and then a folder Decant wrote, are replaced.
        try FileManager.default.removeItem(at: output.appendingPathComponent("notes.txt"))
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        let tags = try #require(LibraryFixture.batches.first { $0.layout.entityName == "Tag" })
        try CSVTestFiles.write([tags], model: LibraryFixture.model, to: output)
        #expect(Self.contents(of: folder) == ["out", "out/Tag.csv", "out/_decant.json"])
        // A file where a folder goes, or a folder where a file goes, is refused.
        let file = folder.appendingPathComponent("file")
        try Data().write(to: file)
        #expect(throws: DecantError.self) { try CSVWriter(creating: file, model: LibraryFixture.model) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("dir.csv"), withIntermediateDirectories: true)
        #expect(throws: DecantError.self) {
            try CSVWriter(creating: folder.appendingPathComponent("dir.csv"), model: LibraryFixture.model)
        }
    }

    @Test func singleFileHoldsOneEntity() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Book.csv")
        let batches = LibraryFixture.batches
        let book = try #require(batches.first { $0.layout.entityName == "Book" })
        let writer = try CSVWriter(creating: file, model: LibraryFixture.model)
        try writer.write(book)
        try writer.finish()
        // Members of to-many relationships have no join file to go to: a warning, once per relationship.
        #expect(writer.diagnostics.map(\.kind) == [.unstoredProperty, .unstoredProperty])
        #expect(writer.diagnostics.first?.message.contains("Book.authors are not written") == true)
        #expect(Self.contents(of: folder) == ["Book.csv"])
        let back = try CSVTestFiles.read(file, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(back["Book"]?.map(\.values) == (0..<book.count).map { book.record(at: $0).values })

        let mixed = try CSVWriter(creating: folder.appendingPathComponent("mixed.csv"), model: LibraryFixture.model)
        try mixed.write(book)
        let error = #expect(throws: DecantError.self) { try mixed.write(batches[0]) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("a CSV file holds one entity") == true)
        mixed.abandon()
        #expect(Self.contents(of: folder) == ["Book.csv"])
    }

    @Test func emptyInputMakesAnEmptyOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CSVTestFiles.write([], model: LibraryFixture.model, to: folder.appendingPathComponent("empty"))
        try CSVTestFiles.write([], model: LibraryFixture.model, to: folder.appendingPathComponent("Tag.csv"))
        #expect(Self.contents(of: folder) == ["Tag.csv", "empty", "empty/_decant.json"])
        #expect(
            try CSVTestFiles.read(
                folder.appendingPathComponent("empty"), options: FormatOptions(bundle: LibraryFixture.bundle)
            ).isEmpty)
        #expect(
            try CSVTestFiles.read(
                folder.appendingPathComponent("Tag.csv"), options: FormatOptions(bundle: LibraryFixture.bundle)
            ).isEmpty)
    }

    @Test func batchesOfOneEntityMayComeApart() throws {
        // A later batch of an entity appends to its files, header once.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        let batches = LibraryFixture.batches
        try CSVTestFiles.write(
            batches
                + batches.filter { $0.layout.entityName == "Tag" }.map { tags in
                    var more = tags.layout.emptyBatch()
                    more.append(Record(entity: "Tag", id: .primaryKey(9), values: ["late"]))
                    return more
                }, model: LibraryFixture.model, to: output)
        let text = String(decoding: try Data(contentsOf: output.appendingPathComponent("Tag.csv")), as: UTF8.self)
        #expect(text == "_id,name\r\np1,classic\r\np2,new\r\np3,digital\r\np9,late\r\n")
    }
}
