import DecantTestSupport
import Foundation
import Testing

/// A CI step cannot go green on a mistake: `--version` with anything else, an option the command does not have, a
/// seed into folders that do not exist yet (as an app's first run finds them).
@Suite("decant in a CI step", .serialized, .requiresDecantBinary)
struct CIStepTests {
    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    /// The old spelling `--version "Moody 3"` printed Decant's version and exited 0, writing nothing.
    @Test func versionWithAnythingElseIsAUsageError() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("o.sqlite").path
        let run = try EndToEndTests.run(["migrate", "S.sqlite", "--model", Self.notes, "--version", "Notes 2", "--output", output])
        #expect(run.status == 64, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("--model-version") && run.stderr.contains("--to-version"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: output))
        let json = try EndToEndTests.run(["inspect", Self.notes, "--version", "--json"])
        #expect(json.status == 64)
        #expect(json.stdout.contains(#""status""#), "\(json.stdout)")
        let alone = try EndToEndTests.run(["--version"])
        #expect(alone.status == 0 && !alone.stdout.isEmpty)
    }

    /// `migrate S --model M --model-version X --output o.sqlite`: `--model-version` is not a migrate option, and its
    /// value was taken for a second store ("with several stores, give either --output-dir DIR or --in-place").
    @Test func anUnknownOptionIsNamedWithItsNearestSpelling() throws {
        let run = try EndToEndTests.run(
            ["migrate", "S.sqlite", "--model", Self.notes, "--model-version", "X", "--output", "o.sqlite"])
        #expect(run.status == 64)
        #expect(
            run.stderr.contains("migrate has no option --model-version (did you mean --to-version?)"), "\(run.stderr)")
        let typo = try EndToEndTests.run(["convert", "a.csv", "b.sqlite", "--modle", Self.notes])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("convert has no option --modle (did you mean --model?)"), "\(typo.stderr)")
    }

    /// `seed` makes the destination's folders, as an app's first run does; a seed that fails takes them away.
    @Test func seedMakesTheDestinationsFolders() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = folder.appendingPathComponent("Seed.sqlite")
        let made = try EndToEndTests.run([
            "convert", Fixtures.samplesRoot.appendingPathComponent("notes-v1").path, seed.path, "--model", Self.notes,
            "--model-version", "Notes",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let destination = folder.appendingPathComponent("App/Library/Application Support/Notes.sqlite")
        let run = try EndToEndTests.run(["seed", "--default", seed.path, "--store", destination.path, "--model", Self.notes])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: destination.path))
        // A seed that fails (no such seed) leaves no folder behind.
        let failed = folder.appendingPathComponent("Other/Store.sqlite")
        let missing = try EndToEndTests.run(
            ["seed", "--default", folder.appendingPathComponent("none.sqlite").path, "--store", failed.path])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Other").path))
    }

    /// Every output of a run is checked before any work, exit 73 naming the path as typed: a batch's `--junit` in a
    /// missing folder (it failed with a raw Foundation error after migrating every store) and `--rejects` in one.
    @Test func outputsAreCheckedBeforeAnyWork() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try EndToEndTests.run([
            "convert", Fixtures.samplesRoot.appendingPathComponent("notes-v1").path,
            folder.appendingPathComponent("a.sqlite").path, "--model", Self.notes, "--model-version", "Notes",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        try FileManager.default.copyItem(
            at: folder.appendingPathComponent("a.sqlite"), to: folder.appendingPathComponent("b.sqlite"))
        let stores = ["a.sqlite", "b.sqlite"].map { folder.appendingPathComponent($0).path }
        let out = folder.appendingPathComponent("out").path
        let junit = folder.appendingPathComponent("reports/j.xml").path
        let run = try EndToEndTests.run(["migrate"] + stores + ["--model", Self.notes, "--output-dir", out, "--junit", junit])
        #expect(run.status == 73, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.hasPrefix("Error: \(junit): cannot create output"), "\(run.stderr)")
        #expect(!run.stdout.contains("PASS") && !run.stderr.contains("NSCocoaErrorDomain"))
        #expect(!FileManager.default.fileExists(atPath: out))
        let json = try EndToEndTests.run(
            ["validate"] + stores + ["--model", Self.notes, "--junit", junit, "--json"])
        #expect(json.status == 73 && json.stdout.contains(#""status""#), "\(json.stdout)")
        let rejects = folder.appendingPathComponent("nowhere/r.ndjson").path
        let single = try EndToEndTests.run(
            ["migrate", stores[0], "--model", Self.notes, "--output", folder.appendingPathComponent("o.sqlite").path,
                "--rejects", rejects])
        #expect(single.status == 73, "\(single.stderr)")
        #expect(single.stderr.contains(rejects))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("o.sqlite").path))
        let validated = try EndToEndTests.run(["validate", stores[0], "--model", Self.notes, "--rejects", rejects])
        #expect(validated.status == 73, "\(validated.stderr)")
    }

    /// A misspelt key path in an Xcode mapping model was blamed on the data (`<input>: entity Mood, object Mood/p1: …
    /// Country has no property continnent`, found only when objects ran); it is the mapping model's mistake, named with
    /// its file, entity mapping and property when the plan is made, and so is one in a mapping file, at its line.
    @Test func aMisspeltKeyPathIsTheMappingsMistake() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let moody = Fixtures.corpus("objcio__core-data/Migrations/Migrations")
        let mapping = folder.appendingPathComponent("Moody 2-Moody 3.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        let original = try String(
            contentsOf: moody.appendingPathComponent("Moody 2-Moody 3.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        try original.replacingOccurrences(of: "$source.country.continent<", with: "$source.country.continnent<")
            .write(to: mapping.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        let store = try Fixtures.copyStore(
            Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 2.moody"), into: folder)
        let model = moody.appendingPathComponent("Moody.xcdatamodeld").path
        let plan = try EndToEndTests.run(
            ["plan", store.path, "--model", model, "--to-version", "Moody 3", "--mapping", mapping.path, "--no-dry-run"])
        #expect(plan.status == 1, "\(plan.stdout)\(plan.stderr)")
        #expect(
            plan.stdout.contains(
                "Moody 2-Moody 3.xcmappingmodel: MoodToMood reads $source.country.continnent, and Country has no property "
                    + "continnent (did you mean continent?)"), "\(plan.stdout)")
        let file = folder.appendingPathComponent("map.yaml")
        try "source: Notes\ndestination: Notes 2\nentities:\n  Note:\n    attributes:\n      text: $source.contnet\n".write(
            to: file, atomically: true, encoding: .utf8)
        let (_, notes) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: notes.deletingLastPathComponent()) }
        let typo = try EndToEndTests.run(
            ["plan", notes.path, "--model", Self.notes, "--to-version", "Notes 2", "--mapping", file.path, "--no-dry-run"])
        // A mapping file's typo is the file's malformed input, found when it is read and named at its line (65), as a
        // misspelt key is; it was a plan problem (1) found after the store was read.
        #expect(typo.status == 65, "\(typo.stdout)\(typo.stderr)")
        #expect(typo.stdout.isEmpty)
        #expect(
            typo.stderr.contains("map.yaml:6: key entities.Note.attributes.text: malformed input: Note: NoteToNote reads"),
            "\(typo.stderr)")
        #expect(typo.stderr.contains("Note has no property contnet (did you mean content?)"), "\(typo.stderr)")
        let migrate = try EndToEndTests.run(
            ["migrate", notes.path, "--model", Self.notes, "--mapping", file.path, "--output", folder.appendingPathComponent("o.sqlite").path])
        #expect(migrate.status == 65, "\(migrate.stderr)")
    }

    /// A `--where` comparing a text attribute with a number matches nothing, as in NSPredicate: said as a warning,
    /// not an empty output that looks like an empty input.
    @Test func aWhereOfTheWrongKindSaysItMatchesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("a.sqlite").path
        let made = try EndToEndTests.run([
            "convert", Fixtures.samplesRoot.appendingPathComponent("notes-v1").path, store, "--model", Self.notes,
            "--model-version", "Notes",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let run = try EndToEndTests.run(
            ["convert", store, folder.appendingPathComponent("b.ndjson").path, "--where", "content == 5"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "--where: content == 5 compares a String attribute with a number: it matches no object"), "\(run.stderr)")
        let right = try EndToEndTests.run(
            ["convert", store, folder.appendingPathComponent("c.ndjson").path, "--where", "content == '5'"])
        #expect(!right.stderr.contains("matches no object"), "\(right.stderr)")
    }

    /// `inspect STORE --model M` with no version of M matching the store prints the nearest and exits 1.
    @Test func inspectWithAModelNoVersionMatchesExits1() throws {
        let store = Fixtures.corpus(
            "\(Fixtures.appsPrefix)duckduckgo__BrowserServicesKit/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite")
        let wrong = Fixtures.corpus("\(Fixtures.appsPrefix)duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld")
        let run = try EndToEndTests.run(["inspect", store.path, "--model", wrong.path])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("SyncFeatureEntity: in the store, not in the model"), "\(run.stdout)")
        let right = Fixtures.corpus("\(Fixtures.appsPrefix)duckduckgo__BrowserServicesKit/Sources/DDGSync/SyncMetadata.xcdatamodeld")
        #expect(try EndToEndTests.run(["inspect", store.path, "--model", right.path]).status == 0)
    }
}
