import DecantTestSupport
import Foundation
import Testing

/// Runs the built `decant` binary: what only `main` does (exit codes, stdout versus stderr).
@Suite("decant binary", .serialized)
struct EndToEndTests {
    static let binary = Fixtures.packageRoot.appendingPathComponent(".build/debug/decant")

    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try #require(binaryProblem == nil, "\(binaryProblem ?? "")")
        let outcome = try Subprocess.run(binary, arguments)
        return (outcome.status, outcome.output, outcome.errors)
    }

    static var hasBinary: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }

    /// Why the CLI tests cannot run the binary, or nil: it is missing, or older than a file it is built from (a
    /// source under `Sources/`, or `Package.swift`), so a plain `swift test` after an edit would test the old code.
    /// Worked out once per test run.
    static let binaryProblem: String? = {
        let rebuild = "build it with `swift build --product decant` (make test does)"
        guard hasBinary else { return "\(binary.path) is missing: \(rebuild)" }
        let manager = FileManager.default
        func modified(_ url: URL) -> Date? {
            (try? manager.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
        }
        guard let built = modified(binary) else { return "\(binary.path) cannot be examined: \(rebuild)" }
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources", isDirectory: true)
        var inputs = [Fixtures.packageRoot.appendingPathComponent("Package.swift")]
        if let walk = manager.enumerator(at: sources, includingPropertiesForKeys: nil) {
            for case let url as URL in walk { inputs.append(url) }
        }
        let newer = inputs.filter { (modified($0) ?? .distantPast) > built }.map(\.path).sorted()
        guard let first = newer.first else { return nil }
        return "\(binary.path) is older than \(first)\(newer.count > 1 ? " and \(newer.count - 1) more" : ""): "
            + "re\(rebuild)"
    }()

    @Test(.requiresDecantBinary) func inspectsASampleModel() throws {
        let outcome = try Self.run(["inspect", Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("version Notes 3 (current)"))
        #expect(outcome.stderr.isEmpty)
    }

    @Test(.requiresDecantBinary) func missingInputExits66() throws {
        let outcome = try Self.run(["inspect", "/nonexistent/Nope.xcdatamodeld"])
        #expect(outcome.status == 66)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("Error: /nonexistent/Nope.xcdatamodeld"))
    }

    @Test(.requiresDecantBinary) func malformedModelNamesTheLine() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?>\n<model>\n<entity name=\"A\">\n</model>\n".utf8)
            .write(to: model.appendingPathComponent("contents"))
        let outcome = try Self.run(["inspect", model.path])
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("contents:"))
    }

    @Test(.requiresDecantBinary) func usageErrorExits64() throws {
        let outcome = try Self.run(["convert", "only-one-argument"])
        #expect(outcome.status == 64)
    }

    @Test(.requiresDecantBinary) func convertsAStoreAndInspectsIt() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody")
        let output = folder.appendingPathComponent("Moody.sqlite")
        let converted = try Self.run(["convert", input.path, output.path, "--journal", "delete"])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path + "-wal"))
        let inspected = try Self.run(["inspect", output.path, "--json"])
        #expect(inspected.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [String: Any]
        #expect(json?["kind"] as? String == "store")
        #expect(json?["journalMode"] as? String == "delete")
        let same = try Self.run(["convert", output.path, output.path])
        #expect(same.status == 64)
    }
}

extension EndToEndTests {
    /// Validates `document` against `schemas/inspect.schema.json` with Python's jsonschema (a test oracle).
    static func validate(_ document: String, schema name: String = "inspect") throws -> String {
        let schema = Fixtures.packageRoot.appendingPathComponent("schemas/\(name).schema.json").path
        let script = "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))); print('valid')"
        return (try? PythonOracle.text(script, input: Data(document.utf8), arguments: [schema])) ?? "invalid"
    }

    @Test(.requiresDecantBinary) func jsonFollowsTheSchema() throws {
        let model = try Self.run(["inspect", Fixtures.samplesRoot.appendingPathComponent("Lessons.xcdatamodeld").path, "--json"])
        #expect(try Self.validate(model.stdout) == "valid")
        let momd = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd")
        #expect(try Self.validate(Self.run(["inspect", momd.path, "--json"]).stdout) == "valid")
        let store = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite")
        let bundle = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld")
        #expect(try Self.validate(Self.run(["inspect", store.path, "--model", bundle.path, "--json"]).stdout) == "valid")
        #expect(try Self.validate(Self.run(["inspect", store.path, "--json"]).stdout) == "valid")
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let converted = try Self.run(["convert", store.path, folder.appendingPathComponent("out.sqlite").path, "--json"])
        #expect(try Self.validate(converted.stdout, schema: "convert") == "valid")
    }
}

extension EndToEndTests {
    /// `make demo`'s story runs as the README tells it. It runs in a temporary folder (with `samples` linked into
    /// it), so its `.build/demo` is written there and not into the checkout.
    @Test(.requiresDecantBinary) func theDemoTellsTheStory() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("samples"), withDestinationURL: Fixtures.samplesRoot)
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, "bash", "samples/demo.sh", Self.binary.path])
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(".build/demo/App/Books.sqlite").path))
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        for line in [
            ".build/demo/Books.sqlite: 8 objects written (model Books)",
            ".build/demo/App/Books.sqlite: seeded from .build/demo/Books.sqlite (8 objects, model Books)",
            ".build/demo/App/Books.sqlite: already seeded, version Books current; nothing changed",
            "text = $source.content  (renamed from content)",
            ".build/demo/App/Notes.sqlite: seeded from .build/demo/NotesV1.sqlite (4 objects, model Notes 3, migrated from Notes)",
            ".build/demo/Legacy.sqlite: 5 objects written (model Notes)",
            ".build/demo/App/LegacyNotes.sqlite: migrated Notes → Notes 3",
        ] {
            #expect(outcome.output.contains(line), "\(line)")
        }
    }

    /// The README's first screen runs as written: its block of Decant's three jobs, in a fresh folder with `samples`
    /// linked into it and `decant` on the PATH (seed makes `App/`, as an app's first run does).
    @Test(.requiresDecantBinary) func theReadmesFirstScreenRunsAsWritten() throws {
        let readme = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        let jobs = try #require(blocks.first { $0.contains("decant convert samples/books") })
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("samples"), withDestinationURL: Fixtures.samplesRoot)
        let script = "set -e\nexport PATH=\"\(Self.binary.deletingLastPathComponent().path):$PATH\"\n" + jobs
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, "bash", "-c", script])
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        for file in ["Books.sqlite", "App/Books.sqlite", "App/Notes.sqlite", "App/LegacyNotes.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file)")
        }
    }

    /// Every command block of the README and `docs/` runs in a test as written or says it is an illustration: the
    /// one block fenced `sh` is the first screen (run above); blocks of commands on files of the reader's own are
    /// fenced `console`. A command block fenced otherwise (or not at all) fails here, so a new one must choose.
    @Test func everyCommandBlockRunsOrIsAnIllustration() throws {
        let root = Fixtures.packageRoot
        let documents = ["README.md", "Benchmarks/README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var run: [String] = []
        var unmarked: [String] = []
        for document in documents {
            let lines = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
                .components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                let fence = lines[index].trimmingCharacters(in: .whitespaces)
                guard fence.hasPrefix("```") else {
                    index += 1
                    continue
                }
                let info = String(fence.dropFirst(3))
                var end = index + 1
                while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
                let body = lines[(index + 1)..<min(end, lines.count)]
                let commands = body.contains { line in
                    let text = line.trimmingCharacters(in: .whitespaces)
                    return ["decant ", "$ decant ", "make ", "$ make ", "swift ", "$ swift "].contains { text.hasPrefix($0) }
                }
                if info == "sh" {
                    run.append("\(document):\(index + 1)")
                } else if commands, !["console", "yaml", "swift", "json"].contains(info) {
                    unmarked.append("\(document):\(index + 1) (```\(info))")
                }
                index = end + 1
            }
        }
        #expect(unmarked.isEmpty, "command blocks neither run nor marked as illustrations: \(unmarked)")
        // The only `sh` block is the one theReadmesFirstScreenRunsAsWritten runs.
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let firstScreen = readme.components(separatedBy: "```sh\n").dropFirst()
            .filter { $0.components(separatedBy: "```").first?.contains("decant convert samples/books") == true }
        #expect(run.count == 1 && firstScreen.count == 1, "blocks fenced sh: \(run)")
    }
}
