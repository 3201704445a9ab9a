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
        #expect(try InputKind(of: store) == .store("sqlite"))
        let json = folder.appendingPathComponent("records.txt")
        try Data("[{\"title\": \"Dune\"}]".utf8).write(to: json)
        #expect(try InputKind(of: json) == .records("json"))
        let unknown = folder.appendingPathComponent("notes.unknown")
        try Data("plain text".utf8).write(to: unknown)
        #expect(throws: DecantError.self) { try InputKind(of: unknown) }
    }

    /// A plain property list is one (issue 20): by content, named `.plist` or not; a keyed archive named `.plist`
    /// stays an archive, and a damaged `.plist` goes to the property-list reader, which says what is wrong.
    @Test func plainPropertyListsAreToldFromArchivesAndModels() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let xml = folder.appendingPathComponent("Bookmarks.plist")
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <array><dict><key>Title</key><string>a</string></dict></array>
            </plist>
            """.utf8
        ).write(to: xml)
        #expect(try InputKind(of: xml) == .propertyList)
        let binary = folder.appendingPathComponent("defaults.data")
        try BinaryPropertyListWriter().write(["Items": [["Title": "a"]]]).write(to: binary)
        #expect(try InputKind(of: binary) == .propertyList)
        let damaged = folder.appendingPathComponent("damaged.plist")
        try Data("bplist00garbage".utf8).write(to: damaged)
        #expect(try InputKind(of: damaged) == .propertyList)
        let archive = Fixtures.corpus(
            "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-ArrayTest.plist")
        #expect(try InputKind(of: archive) == .keyedArchive)
    }
}
