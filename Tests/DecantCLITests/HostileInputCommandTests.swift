import DecantTestSupport
import Foundation
import Testing

/// What a fuzzer found through the binary: a mapping file whose expression overflowed killed `plan` with SIGILL, a
/// long `IN[c]` list took quadratic time, a join file's link to an object no entity file has was dropped with exit 0,
/// and a model cache Decant could not decode stopped runs given the model. Each now ends as it should.
@Suite("decant on hostile mappings, predicates and join files", .serialized)
struct HostileInputCommandTests {
    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    /// A Notes 3 store of `count` notes titled `U0`, `U1`, … in a fresh folder.
    static func store(count: Int) throws -> (folder: URL, store: URL) {
        let folder = try Fixtures.temporaryDirectory()
        let input = folder.appendingPathComponent("csv")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let rows = (0..<count).map { "p\($0 + 1),U\($0)\n" }.joined()
        try Data(("_id,title\n" + rows).utf8).write(to: input.appendingPathComponent("Note.csv"))
        let store = folder.appendingPathComponent("Notes.sqlite")
        let run = try EndToEndTests.run(["convert", input.path, store.path, "--model", notes, "--quiet"])
        try #require(run.status == 0, "\(run.stderr)")
        return (folder, store)
    }

    @Test(.requiresDecantBinary) func anOverflowingMappingExits65AtItsLine() throws {
        let (folder, store) = try Self.store(count: 3)
        defer { try? FileManager.default.removeItem(at: folder) }
        let mapping = folder.appendingPathComponent("overflow.yaml")
        let text =
            "source: Notes 3\ndestination: Notes 3\nentities:\n  Note:\n    attributes:\n      title: \"floor(1e308)\"\n"
        try Data(text.utf8).write(to: mapping)
        for command in ["plan", "migrate"] {
            var arguments = [command, store.path, "--model", Self.notes, "--mapping", mapping.path]
            if command == "migrate" { arguments += ["--output", folder.appendingPathComponent("out.sqlite").path] }
            let run = try EndToEndTests.run(arguments)
            #expect(run.status == 65, "\(command): \(run.stderr)")
            #expect(
                run.stderr.contains("overflow.yaml:6: key entities.Note.attributes.title: malformed input: "),
                "\(run.stderr)")
            #expect(run.stderr.contains("floor(1e+308) does not fit a 64-bit integer"))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
    }

    @Test(.requiresDecantBinary) func aLongCaseInsensitiveInListKeepsItsMeaning() throws {
        let (folder, store) = try Self.store(count: 300)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.ndjson")
        // Every even title, written in lower case, plus names no note has.
        let items = (0..<150).map { "'u\($0 * 2)'" } + (0..<500).map { "'none\($0)'" }
        for (op, written) in [("IN[c]", 150), ("IN[cd]", 150), ("IN", 0)] {
            try? FileManager.default.removeItem(at: output)
            let run = try EndToEndTests.run([
                "convert", store.path, output.path, "--model", Self.notes, "--entity", "Note",
                "--where", "title \(op) {\(items.joined(separator: ", "))}",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("Note  \(written),"), "\(op): \(run.stdout)")
        }
    }

    /// A 5,000-term `AND` on the command line was refused as damaged input (exit 65, SQLite's "Expression tree is
    /// too large"): it is a usage problem that says the limit, and nothing is written.
    @Test(.requiresDecantBinary) func aPredicateWithTooManyTermsIsAUsageErrorSayingTheLimit() throws {
        let (folder, store) = try Self.store(count: 3)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.ndjson")
        let predicate = (0..<5000).map { "title != 'x\($0)'" }.joined(separator: " AND ")
        let run = try EndToEndTests.run([
            "convert", store.path, output.path, "--model", Self.notes, "--entity", "Note", "--where", predicate,
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--where:1:"), "\(run.stderr)")
        #expect(run.stderr.contains("more than 1000 AND/OR terms, the limit"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test(.requiresDecantBinary) func aJoinRowWhoseMemberNoEntityFileHasIsLocated() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Tags.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" \
            systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Book" representedClassName="Book" syncable="YES">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" \
            destinationEntity="Tag" inverseName="books" inverseEntity="Tag"/>
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" \
            destinationEntity="Book" inverseName="tags" inverseEntity="Book"/>
                </entity>
            </model>
            """.utf8
        ).write(to: model.appendingPathComponent("contents"))
        let input = folder.appendingPathComponent("csv")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try Data("_id,title\np1,A\np2,B\n".utf8).write(to: input.appendingPathComponent("Book.csv"))
        try Data("_id,name\np1,x\n".utf8).write(to: input.appendingPathComponent("Tag.csv"))
        try Data("owner,member\np1,Tag/p1\np2,Tag/p7\n".utf8).write(to: input.appendingPathComponent("Book.tags.csv"))
        let output = folder.appendingPathComponent("out.sqlite")
        let run = try EndToEndTests.run(["convert", input.path, output.path, "--model", model.path])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("Book.tags.csv:3:4: entity Book, key tags: malformed input: "), "\(run.stderr)")
        #expect(
            run.stderr.contains("member Tag/p7 is not an object of Tag.csv: the member side of this link is missing"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test(.requiresDecantBinary) func aModelCacheThatCannotBeDecodedIsAWarningWhenTheModelIsGiven() throws {
        let (folder, store) = try Self.store(count: 2)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Valid DEFLATE (one stored block, "hello") of something that is not a model archive.
        let damaged = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            [store.path, "UPDATE Z_MODELCACHE SET Z_CONTENT = x'010500faff68656c6c6f'"])
        try #require(damaged.status == 0, "\(damaged.errors)")
        let output = folder.appendingPathComponent("out.ndjson")
        let given = try EndToEndTests.run(["convert", store.path, output.path, "--model", Self.notes])
        #expect(given.status == 0, "\(given.stderr)")
        #expect(given.stderr.hasPrefix("warning: "), "\(given.stderr)")
        #expect(given.stderr.contains("Z_MODELCACHE cannot be decoded"))
        #expect(given.stdout.contains("2 objects written"))
        // A migration run inside SQLite says so too.
        let migrated = try EndToEndTests.run([
            "migrate", store.path, "--model", Self.notes, "--to-version", "Notes 3", "--output",
            folder.appendingPathComponent("copy.sqlite").path,
        ])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stderr.contains("warning: ") && migrated.stderr.contains("Z_MODELCACHE cannot be decoded"))
        let inspected = try EndToEndTests.run(["inspect", store.path, "--model", Self.notes])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdout.contains("model cache:       yes"))
        // Without a model the cache is needed, and its error stops the run.
        try? FileManager.default.removeItem(at: output)
        for arguments in [["convert", store.path, output.path], ["inspect", store.path]] {
            let run = try EndToEndTests.run(arguments)
            #expect(run.status == 65, "\(arguments[0]): \(run.stderr)")
            #expect(run.stderr.contains("(Z_MODELCACHE)"), "\(run.stderr)")
        }
    }
}
