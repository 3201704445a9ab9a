import ArgumentParser
@testable import DecantCLI
import Testing

/// One spelling per concept (issue 21): a model version is `--model-version`, a destination or source version
/// `--to-version` / `--from-version`, so that `--from` / `--to` mean a format everywhere (as in `convert`) and
/// nothing clashes with the root `--version` flag. Parsed in-process.
@Suite("option spellings")
struct OptionSpellingTests {

    @Test("plan, migrate and seed take the destination version as --to-version, not --to")
    func destinationVersion() throws {
        let plan = try #require(
            try DecantCommand.parseAsRoot(["plan", "S.sqlite", "--model", "M.xcdatamodeld", "--to-version", "V 2"])
                as? DecantCommand.Plan)
        #expect(plan.migration.destinationVersion == "V 2")
        let migrate = try #require(
            try DecantCommand.parseAsRoot([
                "migrate", "S.sqlite", "--model", "M.xcdatamodeld", "--to-version", "V 2", "--output", "O.sqlite",
            ]) as? DecantCommand.Migrate)
        #expect(migrate.migration.destinationVersion == "V 2")
        for command in [
            ["plan", "S.sqlite", "--model", "M.xcdatamodeld"], ["migrate", "S.sqlite", "--model", "M.xcdatamodeld"],
            ["seed", "--default", "D.sqlite", "--store", "S.sqlite", "--model", "M.xcdatamodeld"],
        ] {
            expectUsageError(command + ["--to", "V 2"], "\(command[0]) --to is a format's spelling")
        }
    }

    @Test("seed takes the seed's model version as --model-version, not --version")
    func seedModelVersion() throws {
        let seed = try #require(
            try DecantCommand.parseAsRoot([
                "seed", "--default", "d.json", "--store", "S.sqlite", "--model", "M.xcdatamodeld", "--model-version",
                "V 2", "--to-version", "V 3",
            ]) as? DecantCommand.Seed)
        #expect(seed.version == "V 2")
        #expect(seed.migration.destinationVersion == "V 3")
        let help = DecantCommand.helpMessage(for: DecantCommand.Seed.self, columns: 100)
        #expect(help.contains("--model-version <model-version>"))
        #expect(!help.contains("--version <version>"))
        #expect(help.contains("--to-version <to-version>"))
    }

    @Test("infer-mapping names its versions --from-version and --to-version")
    func inferMappingVersions() throws {
        let infer = try #require(
            try DecantCommand.parseAsRoot([
                "infer-mapping", "--model", "M.xcdatamodeld", "--from-version", "V 1", "--to-version", "V 2",
            ]) as? DecantCommand.InferMapping)
        #expect(infer.sourceVersion == "V 1")
        #expect(infer.destinationVersion == "V 2")
        expectUsageError(["infer-mapping", "--model", "M.xcdatamodeld", "--from", "V 1", "--to", "V 2"])
    }
}
