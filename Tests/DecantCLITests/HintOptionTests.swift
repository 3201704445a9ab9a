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
        // A folder no format reads: its hint must not name convert's --from on commands without it.
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
            #expect(run.status != 0, "\(arguments) should fail")
            let named = Self.options(in: run.stderr)
            let missing = named.subtracting(Self.defined(by: command))
            #expect(missing.isEmpty, "\(arguments[0]) names \(missing.sorted()), which it does not have: \(run.stderr)")
            checked += named.count
        }
        // The cases do print hints (convert's names --from): the check is not vacuous.
        #expect(checked > 0)
    }
}
