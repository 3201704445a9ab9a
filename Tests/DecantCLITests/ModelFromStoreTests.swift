import Decant
import DecantTestSupport
import Foundation
import Testing

/// `--model` also takes a Core Data store (issue 21): its `Z_MODELCACHE` model, hashes checked, so a store exported
/// to NDJSON without a model file comes back into the same version.
@Suite("--model takes a store", .serialized)
struct ModelFromStoreTests {

    @Test(.requiresDecantBinary) func anExportImportsBackIntoTheSameVersion() throws {
        let (folder, _) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let exported = try ConvertCSVTests.run(in: folder, ["convert", "Notes.sqlite", "notes.ndjson"])
        #expect(exported.status == 0, "\(exported.errors)")
        let seeded = try ConvertCSVTests.run(
            in: folder, ["seed", "--default", "notes.ndjson", "--store", "Back.sqlite", "--model", "Notes.sqlite"])
        #expect(seeded.status == 0, "\(seeded.errors)")
        let original = try SQLiteStore(contentsOf: folder.appendingPathComponent("Notes.sqlite"))
        let back = try SQLiteStore(contentsOf: folder.appendingPathComponent("Back.sqlite"))
        #expect(back.metadata.entityVersionHashes == original.metadata.entityVersionHashes)
        #expect(!back.metadata.entityVersionHashes.isEmpty)
        // convert takes it too.
        let converted = try ConvertCSVTests.run(
            in: folder, ["convert", "notes.ndjson", "Converted.sqlite", "--model", "Notes.sqlite"])
        #expect(converted.status == 0, "\(converted.errors)")
        let convertedStore = try SQLiteStore(contentsOf: folder.appendingPathComponent("Converted.sqlite"))
        #expect(convertedStore.metadata.entityVersionHashes == original.metadata.entityVersionHashes)

        // The library call every command's --model goes through.
        let bundle = try ModelBundle.load(modelOrStore: folder.appendingPathComponent("Notes.sqlite"))
        #expect(bundle.versions.count == 1)
        #expect(bundle.sourceKind == .storeCache)
        // A file that is neither a model nor a store keeps load(from:)'s error.
        try Data("not a model".utf8).write(to: folder.appendingPathComponent("plain.txt"))
        let error = #expect(throws: DecantError.self) {
            try ModelBundle.load(modelOrStore: folder.appendingPathComponent("plain.txt"))
        }
        #expect(error?.code == .unsupportedFormat)
    }
}
