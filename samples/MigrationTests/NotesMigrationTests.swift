// A migration test as an app's own test target writes it with DecantTesting (`swift test` on Linux, no simulator):
// the Notes model of samples/ at version 1 meets the current version, where `content` was renamed to `text` and a
// Folder entity added. In an app's Package.swift:
//
//     .testTarget(name: "NotesMigrationTests", dependencies: [.product(name: "DecantTesting", package: "decant")])
import DecantTesting
import Foundation
import Testing

@Suite("Notes sample migration")
struct NotesMigrationTests {
    /// The sample folder, found from this file.
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let model = samples.appendingPathComponent("Notes.xcdatamodeld")

    @Test func contentBecomesText() throws {
        var store = try TestStore(model: Self.model, version: "Notes")
        try store.insert("Note", ["content": "Buy milk", "date": .date(Date(timeIntervalSinceReferenceDate: 0))])
        try store.insert("Note", ["content": "Call mum"])

        let migrated = try store.migrated()   // to the current version, Notes 3

        #expect(migrated.model.versionName == "Notes 3")
        #expect(try migrated.count("Note") == 2)
        let milk = try #require(try migrated.fetch("Note", where: "text BEGINSWITH[c] 'buy'").first)
        #expect(milk["text"] == "Buy milk")
        #expect(milk["title"] == .null)
        #expect(try migrated.count("Folder") == 0)
        #expect(try migrated.count("Note", where: "folder == nil") == 2)
    }

    @Test func theSampleStoreMigrates() throws {
        // The fixture: the CSV export samples/demo.sh starts from, read at version 1.
        let store = try TestStore.load(
            Self.samples.appendingPathComponent("notes-v1"), model: Self.model, version: "Notes")
        #expect(try store.count("Note") == 4)

        let migrated = try store.migrated(to: "Notes 3")

        #expect(try migrated.count("Note", where: "text CONTAINS 'photos'") == 1)
        #expect(migrated.migrationReport?.written["Note"] == 4)
    }
}
