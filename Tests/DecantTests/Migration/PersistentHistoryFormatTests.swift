import Decant
import DecantTestSupport
import Foundation
import Testing

/// A format of the tests alone (``MemoFormat``, whose history is a file beside the store) adopts
/// ``PersistentHistoryFormat`` and nothing else changes: `plan` gives its notes, `migrate` has it carry the history
/// into a new memo store whichever engine runs, in place too, and a migration or conversion into another format says
/// the history is not carried. ``StoreMigration`` and ``StoreConversion`` name no format.
@Suite struct PersistentHistoryFormatTests {
    /// V1: Folder, Note, Tag, Draft. V2 renames Tag to Label (a renaming identifier) and removes Draft.
    static let bundle: ModelBundle = {
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var draft = Entity(name: "Draft")
        draft.attributes = [Attribute(name: "body", type: .string, isOptional: true)]
        var v1 = MigrationFixtures.folderNotes("Diary", version: 1)
        v1.entities += [tag, draft]
        var label = tag
        label.name = "Label"
        label.renamingIdentifier = "Tag"
        var v2 = MigrationFixtures.folderNotes("Diary", version: 2)
        v2.entities.append(label)
        return MigrationFixtures.bundle("Diary", [v1, v2])
    }()

    /// Two transactions: the first inserted Folder 1, Note 1 and Tag 1, the second Draft 1 and updated Note 1.
    static let history = "1 Folder 1 insert\n1 Note 1 insert\n1 Tag 1 insert\n2 Draft 1 insert\n2 Note 1 update\n"

    /// A v1 memo store with `history` beside it, and a registry that knows the memo format.
    static func store(in folder: URL, history: String = Self.history) throws -> (URL, StoreMigration.Options) {
        let v1 = bundle.versions[0]
        var memory = InMemoryStore(model: v1)
        for record in [
            MigrationFixtures.record("Folder", 1, in: v1, ["name": "Home"]),
            MigrationFixtures.record(
                "Note", 1, in: v1, ["content": "milk"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
            MigrationFixtures.record("Tag", 1, in: v1, ["name": "errands"]),
            MigrationFixtures.record("Draft", 1, in: v1, ["body": "eggs?"]),
        ] {
            try memory.insert(record)
        }
        let url = folder.appendingPathComponent("diary.memo")
        var reader = memory.makeReader()
        var writer = try MemoFormat().makeWriter(at: url, model: v1, options: FormatOptions())
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        try Data(history.utf8).write(to: URL(fileURLWithPath: url.path + "-history"))
        var options = StoreMigration.Options(bundle: bundle)
        options.environment.registry = FormatRegistry([MemoFormat()] + FormatRegistry.builtIn.formats)
        options.formatOptions.version = "Diary 1"
        return (url, options)
    }

    static func history(of store: URL) throws -> String {
        try String(contentsOf: URL(fileURLWithPath: store.path + "-history"), encoding: .utf8)
    }

    /// The history a migration to V2 keeps: Tag's change names Label, Draft's is left out.
    static let migrated = "1 Folder 1 insert\n1 Note 1 insert\n1 Label 1 insert\n2 Note 1 update\n"

    static let draftDropped =
        "memo history: the 1 changes of Draft are not kept: Draft is removed in Diary 1 → Diary 2"

    @Test func thePlanGivesTheFormatsNotes() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, options) = try Self.store(in: folder)
        let notes = try StoreMigration.plan(store: store, options: options).plan.notes
        #expect(notes.contains("memo history: 5 changes, kept in a memo output"), "\(notes)")
        #expect(
            notes.contains("memo history: the changes of Draft are not kept: Draft is removed in Diary 1 → Diary 2"))
        #expect(!notes.contains { $0.contains("Tag") }, "Tag's objects keep their keys as Label")
    }

    @Test(arguments: [true, false]) func aMigrationIntoTheFormatCarriesItsHistory(inStore: Bool) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var (store, options) = try Self.store(in: folder)
        options.environment.runsInStoreWhenPossible = inStore
        let output = folder.appendingPathComponent("diary-2.memo")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.engine == (inStore ? .inStore(format: "memo") : .stream))
        // Tag's change names Label; Draft's is left out, and the report says so.
        #expect(try Self.history(of: output) == Self.migrated)
        #expect(report.warnings.filter { $0.kind == .persistentHistory }.map(\.message) == [Self.draftDropped])
        #expect(try Self.history(of: store) == Self.history)
    }

    @Test func aMigrationInPlaceCarriesItAndBacksUpTheOld() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, options) = try Self.store(in: folder)
        let backup = folder.appendingPathComponent("diary-1.memo")
        let report = try StoreMigration.migrate(store: store, to: .inPlace(backup: backup), options: options)
        #expect(report.backup != nil)
        #expect(try Self.history(of: store) == Self.migrated)
        #expect(try Self.history(of: backup) == Self.history)
    }

    @Test func intoAnotherFormatOrByConversionItIsNotCarriedAndSaidSo() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, options) = try Self.store(in: folder)
        let json = folder.appendingPathComponent("diary-2.json")
        let migrated = try StoreMigration.migrate(store: store, to: .file(json), options: options)
        #expect(migrated.warnings.filter { $0.kind == .persistentHistory }.map(\.message) == [
            "persistent history (diary.memo-history: 2 transactions, 5 changes) is not carried into the json output: "
                + "the data is, its history is not"
        ])
        let copy = folder.appendingPathComponent("copy.ndjson")
        var formatOptions = options.formatOptions
        formatOptions.bundle = Self.bundle
        let converted = try StoreConversion.convert(
            from: store, to: copy, options: formatOptions, registry: options.environment.registry)
        #expect(converted.warnings.filter { $0.kind == .persistentHistory }.map(\.message) == [
            "persistent history (diary.memo-history: 2 transactions, 5 changes) is not carried into the ndjson output: "
                + "the data is, its history is not"
        ])
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["copy.ndjson", "diary-2.json", "diary.memo", "diary.memo-history"])
    }

    @Test func aHistoryLineThatIsNoChangeStopsThePlanAndTheMigrationAtItsLine() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, options) = try Self.store(in: folder, history: "1 Folder 1 insert\n1 Note renamed\n")
        let planned = #expect(throws: DecantError.self) { try StoreMigration.plan(store: store, options: options) }
        #expect(planned?.code == .malformedInput)
        #expect(planned?.location?.line == 2, "\(planned as Any)")
        #expect(planned?.location?.path?.hasSuffix("diary.memo-history") == true)
        let output = folder.appendingPathComponent("diary-2.memo")
        let migrated = #expect(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        }
        #expect(migrated?.code == .malformedInput)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + "-history"))
    }
}
