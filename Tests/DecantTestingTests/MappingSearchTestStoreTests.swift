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

    /// README's promise for samples/PolicyMigration, in process so that `make test` checks it (the sample's own
    /// package build, `PolicySampleTests`, runs under `make test-all` only): the sample's Swift policy through the
    /// Xcode mapping model, and the sample's Decant mapping file, give the same objects.
    @Test func thePolicyAndTheMappingFileMigrateAlike() throws {
        var functions = ValueExpressionFunctions()
        functions.registerPolicy(NoteToParagraphPolicy(), as: "NotesMigration.NoteToParagraphPolicy")
        // A note longer than the title's excerpt, so the title is cut.
        var journal = try Self.journal()
        try journal.insert("Note", ["text": .string("Buy oat milk, coffee beans and a new notebook before the weekend.")])
        let byPolicy = try journal.migrated(functions: functions)
        var store = journal
        store.searchesForMappings = false
        let file = Fixtures.samplesRoot.appendingPathComponent("PolicyMigration/Journal1-Journal2.yaml")
        let byFile = try store.migrated(mappings: [file])
        #expect(byPolicy.migrationReport?.hops == ["Journal → Journal 2"])
        #expect(byFile.migrationReport?.hops == ["Journal → Journal 2"])
        /// Each object's values and how many objects each relationship holds (a to-many the inverse carries counted
        /// from the other side, as the store would list it), sorted, per entity.
        func contents(_ store: TestStore) throws -> [String: [String]] {
            var result: [String: [String]] = [:]
            let everything = try store.model.entities.flatMap { try store.fetch($0.name) }
            func pointing(at object: TestObject) -> Int {
                everything.filter { other in
                    other.relationships.values.contains { $0 == .toOne(object.reference) }
                }.count
            }
            for entity in store.model.entities.map(\.name) {
                result[entity] = try store.fetch(entity).filter { $0.entity == entity }.map { object in
                    let values = object.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    let links = object.relationships.sorted { $0.key < $1.key }.map { name, link -> String in
                        switch link {
                        case .toOne(let target): "\(name)->\(target == nil ? 0 : 1)"
                        case .toMany(let members): "\(name)->\(members.count)"
                        case .viaInverse: "\(name)->\(pointing(at: object))"
                        }
                    }
                    return (values + links).joined(separator: "|")
                }.sorted()
            }
            return result
        }
        let policy = try contents(byPolicy)
        let mapped = try contents(byFile)
        #expect(policy == mapped)
        #expect(policy["Paragraph"]?.count == 3)
        #expect(policy["Paragraph"]?.contains { $0.contains("title=string(\"Buy oat milk, coffee bea\")") } == true)
        #expect(policy["Paragraph"]?.contains { $0.contains("body=string(\"Rain all day\")") && $0.hasSuffix("note->1") } == true)
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
