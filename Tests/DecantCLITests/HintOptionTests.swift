import ArgumentParser
import Decant
@testable import DecantCLI
import DecantTestSupport
import Foundation
import Testing

/// Every hint names an option that exists on the command that prints it (issue 21). The errors are driven through
/// the binary; each `--option` their text names is checked against that command's ArgumentParser definition.
@Suite("hints name the command's own options", .serialized)
struct HintOptionTests {

    /// The `--options` a text names.
    static func options(in text: String) -> Set<String> {
        var found: Set<String> = []
        var rest = text[...]
        while let start = rest.range(of: "--") {
            let name = rest[start.upperBound...].prefix { $0.isLetter || $0 == "-" }
            if let first = name.first, first.isLetter { found.insert("--" + name) }
            rest = rest[start.upperBound...]
        }
        return found
    }

    /// The options `command` defines (its help lists every one).
    static func defined(by command: any ParsableCommand.Type) -> Set<String> {
        options(in: DecantCommand.helpMessage(for: command, columns: 1000))
    }

    @Test(.requiresDecantBinary) func everyHintNamesAnOptionOfItsCommand() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = MigrationCommandTests.notes
        // A folder no format reads: its hint names --from, which every command that reads records has.
        let unknown = folder.appendingPathComponent("Unknown")
        try FileManager.default.createDirectory(at: unknown, withIntermediateDirectories: false)
        try Data("?".utf8).write(to: unknown.appendingPathComponent("thing.bin"))
        let out = folder.appendingPathComponent("Out.sqlite").path
        let cases: [(command: any ParsableCommand.Type, arguments: [String])] = [
            (DecantCommand.Migrate.self, ["migrate", unknown.path, "--model", notes, "--output", out]),
            (DecantCommand.Plan.self, ["plan", unknown.path, "--model", notes]),
            (DecantCommand.Seed.self, ["seed", "--default", unknown.path, "--store", out]),
            (DecantCommand.Validate.self, ["validate", unknown.path, "--model", notes]),
            (DecantCommand.Convert.self, ["convert", unknown.path, out]),
            (DecantCommand.Plan.self, ["plan", store.path, "--model", notes, "--to-version", "Nope"]),
            (DecantCommand.Migrate.self, ["migrate", store.path, "--model", notes, "--to-version", "Nope", "--output", out]),
        ]
        var checked = 0
        for (command, arguments) in cases {
            let run = try EndToEndTests.run(arguments)
            // An input no format reads is bad input (65); a version the model does not have is a usage error (64).
            #expect(run.status == (arguments.contains("Nope") ? 64 : 65), "\(arguments): \(run.stderr)")
            let named = Self.options(in: run.stderr)
            let missing = named.subtracting(Self.defined(by: command))
            #expect(missing.isEmpty, "\(arguments[0]) names \(missing.sorted()), which it does not have: \(run.stderr)")
            checked += named.count
        }
        // The cases do print hints (each unknown input's names --from): the check is not vacuous.
        #expect(checked >= 5)
    }

    // MARK: Every hint text in the sources

    /// Who can print a message the library writes, by the option it names: the commands that read an input (any
    /// format reader's hint), write an output, plan a migration, or run the one feature that names it. An option
    /// a library message names but this table does not know fails the test, so a new hint is classified here.
    static let printers: [String: [any ParsableCommand.Type]] = {
        let readers: [any ParsableCommand.Type] = [
            DecantCommand.Convert.self, DecantCommand.Migrate.self, DecantCommand.Seed.self, DecantCommand.Plan.self,
            DecantCommand.Validate.self, DecantCommand.Inspect.self,
        ]
        let storeReaders: [any ParsableCommand.Type] = [
            DecantCommand.Convert.self, DecantCommand.Migrate.self, DecantCommand.Seed.self, DecantCommand.Plan.self,
            DecantCommand.Validate.self,
        ]
        let writers: [any ParsableCommand.Type] = [DecantCommand.Convert.self, DecantCommand.Migrate.self]
        let planners: [any ParsableCommand.Type] = [
            DecantCommand.Migrate.self, DecantCommand.Seed.self, DecantCommand.Plan.self,
        ]
        return [
            // Format readers (every command that reads an input of any format).
            "--model": readers, "--from": readers, "--entity": readers, "--key": readers, "--date-epoch": readers,
            "--class": readers, "--class-mapping": readers, "--key-path": readers, "--plist-mapping": readers,
            // The SQLite store reader, which only `inspect` runs with missing external data kept.
            "--missing-external-data": storeReaders,
            // Format writers and the choice of an output format.
            "--to": writers,
            // Migration plans and runs.
            "--to-version": planners, "--mapping": planners, "--strict": planners, "--param": planners,
            "--rejects": [DecantCommand.Migrate.self, DecantCommand.Seed.self, DecantCommand.Validate.self],
            "--in-place": [DecantCommand.Migrate.self], "--backup": [DecantCommand.Migrate.self],
            // Batch runs; conversion's selection.
            "--shard": [DecantCommand.Migrate.self, DecantCommand.Validate.self],
            "--where": [DecantCommand.Convert.self], "--sort": [DecantCommand.Convert.self],
            // A plan's text: what --verbose adds to it.
            "--verbose": [DecantCommand.Plan.self],
        ]
    }()

    /// The command-line files and the commands whose help or errors their text is (an option group's file: every
    /// command that has the group).
    static let cliFiles: [String: [any ParsableCommand.Type]] = [
        "Convert.swift": [DecantCommand.Convert.self], "Migrate.swift": [DecantCommand.Migrate.self],
        "Seed.swift": [DecantCommand.Seed.self], "Plan.swift": [DecantCommand.Plan.self],
        "Validate.swift": [DecantCommand.Validate.self], "Inspect.swift": [DecantCommand.Inspect.self],
        "InferMapping.swift": [DecantCommand.InferMapping.self], "Lock.swift": [DecantCommand.Lock.self],
        "MigrationOptions.swift": [DecantCommand.Migrate.self, DecantCommand.Seed.self, DecantCommand.Plan.self],
        "BatchOptions.swift": [DecantCommand.Migrate.self, DecantCommand.Validate.self],
        "RulesOptions.swift": [DecantCommand.Convert.self],
        // The root: it looks for any command's --json, and names no option in a message.
        "DecantCommand.swift": [],
    ]

    /// Each `--option` the code and string literals of the Swift files under `folder` name (comments left out), with
    /// the file and line that names it.
    static func named(under folder: URL) throws -> [(option: String, file: String, line: Int)] {
        var found: [(String, String, Int)] = []
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for option in options(in: code) { found.append((option, file.lastPathComponent, number + 1)) }
            }
        }
        return found
    }

    @Test func everyOptionALibraryMessageNamesExistsOnEachCommandThatCanPrintIt() throws {
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources")
        var named: [(option: String, file: String, line: Int)] = []
        for module in ["Decant", "DecantCore", "DecantFormats", "DecantSQLite", "DecantYAML"] {
            named += try Self.named(under: sources.appendingPathComponent(module))
        }
        // The sweep finds the hints it is about (a reader's, a writer's, a plan's).
        let options = Set(named.map(\.option))
        #expect(options.isSuperset(of: ["--entity", "--key", "--class", "--date-epoch", "--model", "--to", "--mapping"]))
        for (option, file, line) in named {
            guard let commands = Self.printers[option] else {
                Issue.record("\(file):\(line) names \(option): say in HintOptionTests.printers which commands print it")
                continue
            }
            for command in commands {
                let name = command.configuration.commandName ?? "?"
                #expect(
                    Self.defined(by: command).contains(option),
                    "\(file):\(line) names \(option), which \(name) can print but does not have")
            }
        }
    }

    @Test func everyOptionACommandsHelpOrErrorNamesIsItsOwn() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Sources/DecantCLI")
        var checked = 0
        for (option, file, line) in try Self.named(under: folder) {
            let commands: [any ParsableCommand.Type]
            if file == "FormatOptionGroups.swift" {
                // The format groups' texts: --from and the input's settings on every command that reads, --to on
                // those that write.
                commands = option == "--to"
                    ? [DecantCommand.Convert.self, DecantCommand.Migrate.self]
                    : [DecantCommand.Convert.self, DecantCommand.Migrate.self, DecantCommand.Seed.self,
                       DecantCommand.Plan.self, DecantCommand.Validate.self, DecantCommand.Inspect.self]
            } else if let owners = Self.cliFiles[file] {
                commands = owners
            } else {
                Issue.record("\(file):\(line) names \(option): say in HintOptionTests.cliFiles whose text it is")
                continue
            }
            for command in commands {
                checked += 1
                let name = command.configuration.commandName ?? "?"
                #expect(
                    Self.defined(by: command).contains(option), "\(file):\(line) names \(option), which \(name) does not have")
            }
        }
        #expect(checked > 50)
    }
}
