import DecantTestSupport
import DecantTesting
import Foundation
import Testing

/// A store made with a model file finds its project's Xcode mapping models when it migrates, as `decant migrate
/// --model` does: samples/PolicyMigration's `Journal 1-Journal 2.xcmappingmodel` moves each Note's text into a
/// Paragraph through a Swift policy, the sample's own (`NoteToParagraphPolicy.swift` here is a link to the sample's
/// source file, so the test runs the code the sample ships).
@Suite("Testing library mapping search")
struct MappingSearchTestStoreTests {
    static let model = Fixtures.samplesRoot.appendingPathComponent("PolicyMigration/Journal.xcdatamodeld")

    static func journal(marker: String = "") throws -> TestStore {
        var store = try TestStore(model: model, version: "Journal")
        try store.insert("Note", ["text": .string("Walked to the harbour\(marker)")])
        try store.insert("Note", ["text": .string("Rain all day\(marker)")])
        return store
    }

    @Test func theProjectsMappingModelIsFound() throws {
        var functions = ValueExpressionFunctions()
        functions.registerPolicy(NoteToParagraphPolicy(), as: "NotesMigration.NoteToParagraphPolicy")
        let migrated = try Self.journal().migrated(functions: functions)
        #expect(migrated.model.versionName == "Journal 2")
        #expect(try migrated.count("Paragraph") == 2)
        let rain = try #require(try migrated.fetch("Paragraph", where: "body == 'Rain all day'").first)
        #expect(try migrated.related(rain, "note").count == 1)
        let note = try #require(try migrated.fetch("Note").first)
        #expect(try migrated.related(note, "paragraphs").count == 1)
    }

    @Test func withoutTheSearchTheHopIsInferred() throws {
        var store = try Self.journal()
        store.searchesForMappings = false
        let migrated = try store.migrated()
        // Inference drops text and makes no Paragraph.
        #expect(try migrated.count("Note") == 2 && migrated.count("Paragraph") == 0)
    }

    @Test func aMigrationWritesNoFile() throws {
        // The notes carry a text no other test writes; while the policy runs, mid-migration, no file this process
        // has open holds it: the objects are neither in a store written for the migration nor in its output.
        let marker = " \(UUID().uuidString)"
        let watch = OpenFilesWatch(marker: marker)
        var functions = ValueExpressionFunctions()
        functions.registerPolicy(
            WatchingPolicy(watch: watch, policy: NoteToParagraphPolicy()), as: "NotesMigration.NoteToParagraphPolicy")
        let migrated = try Self.journal(marker: marker).migrated(functions: functions)

        #expect(watch.calls == 2)
        #expect(watch.filesHoldingMarker == [])
        #expect(try migrated.count("Paragraph", where: "body ENDSWITH '\(marker)'") == 2)
        #expect(migrated.migrationReport?.output == "<memory>")
        #expect(migrated.migrationReport?.engine == .stream)
        #expect(migrated.migrationReport?.hops == ["Journal → Journal 2"])
        #expect(migrated.migrationReport?.written == ["Note": 2, "Paragraph": 2])

        // The watch sees a file that holds the marker when one is open.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Journal.sqlite")
        try Self.journal(marker: marker).write(to: file)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        #expect(try OpenFilesWatch.openFiles(holding: marker).contains(file.resolvingSymlinksInPath().path))
    }
}

/// The sample's policy, with a look at the files the process has open each time it runs.
struct WatchingPolicy: EntityMigrationPolicy {
    let watch: OpenFilesWatch
    let policy: NoteToParagraphPolicy

    func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try watch.look()
        try policy.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}

/// The regular files this process has open (Linux's /proc/self/fd) whose bytes hold a marker, seen at each ``look()``.
final class OpenFilesWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: Set<String> = []
    private var looks = 0
    let marker: String

    init(marker: String) {
        self.marker = marker
    }

    var calls: Int { lock.withLock { looks } }
    var filesHoldingMarker: Set<String> { lock.withLock { seen } }

    func look() throws {
        let found = try Self.openFiles(holding: marker)
        lock.withLock {
            looks += 1
            seen.formUnion(found)
        }
    }

    /// The paths of the regular files open in this process that hold `marker` (as UTF-8).
    static func openFiles(holding marker: String) throws -> Set<String> {
        let manager = FileManager.default
        let descriptors = try manager.contentsOfDirectory(atPath: "/proc/self/fd")
        let needle = Data(marker.utf8)
        var result: Set<String> = []
        for descriptor in descriptors {
            // A descriptor closed since the listing, a pipe or a socket is no file of the migration.
            guard let path = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                path.hasPrefix("/"), !path.hasPrefix("/proc/"), !path.hasPrefix("/dev/"),
                let attributes = try? manager.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int, size < 64 << 20,
                let data = manager.contents(atPath: path)
            else { continue }
            if data.range(of: needle) != nil { result.insert(path) }
        }
        return result
    }
}
