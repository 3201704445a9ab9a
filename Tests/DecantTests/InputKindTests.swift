import Decant
import DecantTestSupport
import Foundation
import Testing

/// `InputKind` asks the registry which format an input is: each format owns its magic bytes, and none are checked
/// again outside it (issue 19).
@Suite struct InputKindTests {
    /// A test-only format whose files are binary property lists with its own marker after the header: its
    /// `recognizes` is the only place that knows the marker.
    struct PackedNotesFormat: RecordFormat {
        let name = "packed"
        let fileExtensions = ["packed"]
        static let magic = Data("bplist00PACKEDNOTES".utf8)

        func recognizes(_ probe: FormatProbe) -> Bool {
            !probe.isDirectory && probe.header.starts(with: Self.magic)
        }

        func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
            throw DecantError(.unsupportedFormat, "a test format", at: Location(path: url.displayPath))
        }

        func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
            throw DecantError(.unsupportedFormat, "a test format", at: Location(path: url.displayPath))
        }
    }

    @Test func aRegisteredFormatIsToldByItsOwnMagicBytes() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The extension says nothing: only the content tells the format.
        let file = folder.appendingPathComponent("notes.data")
        try (PackedNotesFormat.magic + Data(repeating: 0, count: 64)).write(to: file)
        var registry = FormatRegistry.builtIn
        registry.register(PackedNotesFormat())
        #expect(try InputKind(of: file, registry: registry) == .records("packed"))
        // Without the format, a binary property list nothing claims is taken for a compiled model.
        #expect(try InputKind(of: file, registry: .builtIn) == .model)
    }

    @Test func theBuiltInFormatsTellStoresArchivesAndRecords() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("store.bin")
        let writer = try SQLiteStoreWriter(creating: store, model: LibraryFixture.model, journalMode: .delete)
        try writer.finish()
        #expect(try InputKind(of: store) == .sqliteStore)
        let json = folder.appendingPathComponent("records.txt")
        try Data("[{\"title\": \"Dune\"}]".utf8).write(to: json)
        #expect(try InputKind(of: json) == .records("json"))
        let unknown = folder.appendingPathComponent("notes.unknown")
        try Data("plain text".utf8).write(to: unknown)
        #expect(throws: DecantError.self) { try InputKind(of: unknown) }
    }
}
