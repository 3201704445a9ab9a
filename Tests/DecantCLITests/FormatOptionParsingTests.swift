import ArgumentParser
import Decant
@testable import DecantCLI
import Testing

/// The shared format option groups, parsed in-process: every command that reads records has the input's options,
/// convert and migrate the output's, with the library's enums as values.
@Suite("format option groups")
struct FormatOptionParsingTests {
    @Test func migrateTakesTheInputsAndTheOutputsOptions() throws {
        let migrate = try #require(
            try DecantCommand.parseAsRoot([
                "migrate", "--entity", "Note", "in.json", "--model", "M.xcdatamodeld", "--output", "out",
                "--to", "csv", "--delimiter", ";", "--null", "NULL", "--date-epoch", "reference", "--journal", "delete",
                "--key", "Folder=name", "--from", "json",
            ]) as? DecantCommand.Migrate)
        // --entity takes one value: the store after it stays the store.
        #expect(migrate.stores == ["in.json"])
        #expect(migrate.inputOptions.entityNames == ["Note"])
        #expect(migrate.inputOptions.from == "json")
        #expect(migrate.outputOptions.to == "csv")
        #expect(migrate.outputOptions.journal == .delete)
        let settings = try migrate.inputOptions.keys()
        #expect(settings == ["Folder": "name"])
        #expect(migrate.inputOptions.json.dateEpoch == .reference)
        #expect(migrate.inputOptions.csv.delimiter?.character == ";")
    }

    @Test func theGroupsFillTheFormatsOwnOptions() throws {
        let convert = try #require(
            try DecantCommand.parseAsRoot([
                "convert", "a.csv", "b.sqlite", "--entity", "Note", "--delimiter", "tab", "--null", "\\N",
                "--date-epoch", "reference", "--class", "LegacyNote=Note", "--journal", "delete",
            ]) as? DecantCommand.Convert)
        var options = FormatOptions()
        try convert.inputOptions.apply(to: &options)
        convert.outputOptions.apply(to: &options)
        #expect(options.entity == "Note")
        #expect(options.csv.delimiter == "\t")
        #expect(options.csv.nullMarker == "\\N")
        #expect(options.json.dateEpoch == .reference)
        #expect(options.archive.classEntities == ["LegacyNote": "Note"])
        #expect(options.sqlite.journalMode == .delete)
    }

    @Test(arguments: ["seed", "plan", "validate", "inspect"])
    func everyCommandThatReadsHasTheInputsOptions(command: String) throws {
        let commands: [String: any ParsableCommand.Type] = [
            "seed": DecantCommand.Seed.self, "plan": DecantCommand.Plan.self,
            "validate": DecantCommand.Validate.self, "inspect": DecantCommand.Inspect.self,
        ]
        let help = DecantCommand.helpMessage(for: try #require(commands[command]), columns: 1000)
        for option in ["--from", "--entity", "--key", "--date-epoch", "--delimiter", "--null", "--class", "--class-mapping"] {
            #expect(help.contains(option + " "), "\(command) lacks \(option)")
        }
        #expect(!help.contains("--journal"), "\(command) writes no output")
    }

    @Test func severalEntitiesAreOnlyConvertsSelection() throws {
        expectUsageError(["plan", "S.json", "--model", "M.xcdatamodeld", "--entity", "Note", "--entity", "Folder"])
        let convert = try #require(
            try DecantCommand.parseAsRoot(["convert", "a", "b", "--entity", "Note,Folder", "--entity", "Tag"])
                as? DecantCommand.Convert)
        #expect(convert.inputOptions.entityNames == ["Note", "Folder", "Tag"])
    }
}
