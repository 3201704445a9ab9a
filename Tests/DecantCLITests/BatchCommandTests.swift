import DecantTestSupport
import Foundation
import Testing

/// `migrate` and `validate` over many stores: a JUnit report with one test case per store, shards that split the
/// list, and an exit code that says whether all passed.
@Suite("decant batch runs", .serialized, .requiresDecantBinary)
struct BatchCommandTests {
    /// Copies every corpus store that keeps its model in `Z_MODELCACHE` (with its companions) into `folder`, under
    /// distinct names. Those without a cache need a model each (`everyStoreWithoutACacheValidatesWithItsModel`).
    static func corpusStores(into folder: URL) throws -> [String] {
        try CorpusStores.withModelCache.enumerated().map { index, relative in
            let source = Fixtures.corpus(relative)
            let target = folder.appendingPathComponent("\(index)-\(source.lastPathComponent)")
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try FileManager.default.copyItem(atPath: source.path + suffix, toPath: target.path + suffix)
            }
            return target.path
        }
    }

    static func junitCounts(_ url: URL) throws -> String {
        try PythonOracle.text(
            "import sys, xml.etree.ElementTree as ET; r = ET.parse(sys.argv[2]).getroot(); "
                + "print(r.get('tests'), r.get('failures'), len(list(r.iter('testcase'))))",
            arguments: [url.path])
    }

    @Test func everyCorpusStoreValidatesInABatchWithAJUnitReport() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stores = try Self.corpusStores(into: folder)
        #expect(stores.count >= 10)
        let report = folder.appendingPathComponent("validate.xml")
        let outcome = try EndToEndTests.run(["validate"] + stores + ["--jobs", "2", "--junit", report.path])
        let passed = outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("PASS") }.count
        let failing = outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(passed + failing.count == stores.count)
        #expect(outcome.stdout.contains("\(passed) of \(stores.count) stores passed"))
        // Apple wrote these stores and Core Data opened them: every one validates, and the batch exits 0.
        #expect(failing.isEmpty, "\(failing.joined(separator: "\n"))")
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(try Self.junitCounts(report) == "\(stores.count) 0 \(stores.count)")
    }

    /// RestKit's seed store (framework 419, no `Z_MODELCACHE`) validates with the Xcode 3 model beside it, and so do
    /// the apps corpus's stores without a cache, but for those listed as damaged (exit 65 naming the table and column)
    /// or as holding references to objects that do not exist (exit 1 naming the object).
    @Test func everyStoreWithoutACacheValidatesWithItsModel() throws {
        let stores = CorpusStores.all.filter { CorpusAllowList.storesWithoutModelCache[$0] != nil }
        #expect(stores.count == CorpusAllowList.storesWithoutModelCache.count)
        for relative in stores {
            let repository = Fixtures.corpus(String(relative.prefix { $0 != "/" }))
            let models = Fixtures.corpusItems { ["xcdatamodel", "xcdatamodeld"].contains($0.pathExtension) }
                .filter { $0.path.hasPrefix(repository.path + "/") }
            let model = try #require(models.first, "no model source beside \(relative)")
            #expect(models.count == 1, "\(relative): which of \(models.map(\.path)) is its model?")
            let outcome = try EndToEndTests.run(["validate", Fixtures.corpus(relative).path, "--model", model.path])
            let listed = CorpusAllowList.damagedStores[relative].map { (65, $0.names) }
                ?? CorpusAllowList.danglingReferences[relative].map { (1, $0.names + ["which does not exist"]) }
            if let (status, names) = listed {
                #expect(outcome.status == status, "\(relative): \(outcome.stdout)\(outcome.stderr)")
                for name in names { #expect(outcome.stderr.contains(name), "\(relative): \(outcome.stderr)") }
                continue
            }
            #expect(outcome.status == 0, "\(relative): \(outcome.stdout)\(outcome.stderr)")
            #expect(outcome.stdout.contains("all valid"), "\(outcome.stdout)")
        }
    }

    static let sampleNotes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    /// `count` stores of the sample notes at version Notes (`notes-1.sqlite`, …) in `folder`, their paths.
    static func sampleStores(_ count: Int, in folder: URL) throws -> [String] {
        try (1...count).map { index in
            let store = folder.appendingPathComponent("notes-\(index).sqlite").path
            let made = try EndToEndTests.run([
                "convert", Fixtures.samplesRoot.appendingPathComponent("notes-v1").path, store, "--model", sampleNotes,
                "--model-version", "Notes", "--journal", "delete",
            ])
            try #require(made.status == 0, "\(made.stderr)")
            return store
        }
    }

    /// A batch says what a single run says: each store's warnings (here a row whose `Z_ENT` names another entity, in
    /// a table its entity has to itself) follow its line on standard error, and with `--json` sit in its entry.
    @Test func batchRunsKeepEachStoresWarnings() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = Self.sampleNotes
        let stores = try Self.sampleStores(2, in: folder)
        for store in stores {
            try ConvertFailureTests.sqlite(
                URL(fileURLWithPath: store), "UPDATE ZNOTE SET Z_ENT = 42 WHERE Z_PK = (SELECT MIN(Z_PK) FROM ZNOTE)")
        }
        let text = try EndToEndTests.run(["validate"] + stores + ["--model", notes, "--jobs", "2"])
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        let warnings = text.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") && $0.contains("of ZNOTE") }
        #expect(warnings.count == 2, "\(text.stderr)")
        for store in stores { #expect(warnings.contains { $0.contains(URL(fileURLWithPath: store).lastPathComponent) }) }
        let json = try EndToEndTests.run(["validate"] + stores + ["--model", notes, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let kinds = try PythonOracle.text(
            "import json, sys; print(sorted(w['kind'] for s in json.loads(sys.argv[2]) for w in s['warnings']))",
            arguments: [json.stdout])
        #expect(kinds == "['stray-entity-number', 'stray-entity-number']")
        // The document is typed: passed a boolean, the exit code a number (they were the strings "true" and "0").
        #expect(try EndToEndTests.validate(json.stdout, schema: "batch") == "valid", "\(json.stdout)")
        #expect(json.stdout.contains(#""passed" : true"#) && json.stdout.contains(#""exitCode" : 0"#), "\(json.stdout)")
        // A store that fails is an entry too, with its own exit code.
        let broken = folder.appendingPathComponent("broken.sqlite")
        try Data("not a store".utf8).write(to: broken)
        let failing = try EndToEndTests.run(["validate"] + stores + [broken.path, "--model", notes, "--json"])
        #expect(failing.status == 65, "\(failing.stderr)")
        #expect(try EndToEndTests.validate(failing.stdout, schema: "batch") == "valid", "\(failing.stdout)")
        #expect(failing.stdout.contains(#""passed" : false"#) && failing.stdout.contains(#""exitCode" : 65"#))
    }

    @Test func migrateShardsSplitTheListAndAllPass() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = Self.sampleNotes
        let stores = try Self.sampleStores(5, in: folder)
        var migrated: [String] = []
        for shard in ["1/2", "2/2"] {
            let out = folder.appendingPathComponent("out", isDirectory: true)
            let report = folder.appendingPathComponent("junit-\(shard.first ?? "x").xml")
            let outcome = try EndToEndTests.run(
                ["migrate"] + stores + ["--model", notes, "--output-dir", out.path, "--jobs", "2", "--shard", shard,
                    "--junit", report.path])
            #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
            migrated += outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("PASS") }.map(String.init)
        }
        #expect(migrated.count == 5)
        let outputs = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
        #expect(outputs.filter { $0.hasSuffix(".sqlite") }.count == 5)
        let bad = try EndToEndTests.run(["migrate"] + stores + ["--model", notes, "--output", "x.sqlite"])
        #expect(bad.status == 64)
    }
}

/// The corpus's SQLite stores, by path below the corpus.
enum CorpusStores {
    static let all: [String] = Fixtures.corpusStores

    /// Those whose model is in their `Z_MODELCACHE`.
    static let withModelCache: [String] = all.filter { CorpusAllowList.storesWithoutModelCache[$0] == nil }
}
