import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Seed: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a default store in place on first run, safely.",
            discussion: """
                If STORE does not exist, copies SEED into place as one consistent set: a SQLite seed's -wal content \
                included, its .<Name>_SUPPORT/_EXTERNAL_DATA folder beside it, nothing from another copy. The copy \
                is built under a temporary name in STORE's folder, flushed to disk and renamed into place, under an \
                advisory lock beside STORE: two seeders started together make one copy and both succeed, and a \
                temporary copy left by a crashed run is removed. A JSON or CSV seed becomes a new SQLite store for \
                --model, read as convert reads it (--from, --entity, --key, --delimiter, --null, --date-epoch): a key \
                or column it does not mention takes the model's default, and its objects meet the model's rules as \
                Core Data's save makes them (the first that breaks one stops the seeding, STORE left absent; with \
                --rejects FILE they are listed there and left out, and the exit is 1; --no-validate copies them as \
                they are). An existing STORE is never overwritten: a second run says "already seeded" and changes nothing.

                With --model, seeding is migration, with migrate's options (--to-version, --mapping, --no-mapping-search, \
                --version-order, --rejects, --missing-external-data, --strict): a seed at another version is \
                migrated before it is put in place, so a seed whose migration fails leaves STORE exactly as it was \
                (absent); an existing STORE at an older version is migrated in place after a backup beside it \
                (STORE.backup-<version>); a newer or unknown one stops with what differs, and nothing is deleted.
                """
        )

        @Option(name: .customLong("default"), help: "The default store the app ships (any format Decant reads).")
        var seed: String

        @Option(name: .long, help: "Where the app keeps its store.")
        var store: String

        @Option(
            name: .customLong("model-version"),
            help: "For a JSON or CSV seed: the model version it follows (default: the current one).")
        var version: String?

        @OptionGroup var migration: MigrationOptions

        @OptionGroup var inputOptions: InputFormatOptions

        @Flag(
            name: .long,
            help: "A JSON or CSV seed: do not check the model's rules (a raw copy; `decant validate` checks later).")
        var noValidate = false

        @OptionGroup var options: GlobalOptions

        func validate() throws {
            try inputOptions.requireOneEntity()
            if migration.modelOptions.model == nil {
                let given = migration.destinationVersion != nil || !migration.mapping.isEmpty
                    || migration.modelOptions.versionOrder != nil || migration.rejects != nil || migration.strict
                    || migration.noMappingSearch
                guard !given else { throw ValidationError("the migration options go with --model") }
            }
        }

        func run() throws {
            try reportingErrors(verbose: options.verbose, json: options.json) {
                // The seed is read with the format options; the migration after it reads a SQLite store.
                let settings = try migration.modelOptions.model.map { _ in try migration.settings() }
                var formatOptions = FormatOptions(bundle: settings?.bundle, version: version)
                formatOptions.missingExternalData = migration.missingExternalData
                try inputOptions.apply(to: &formatOptions)
                let report = try Seeding.seed(
                    default: URL(fileURLWithPath: seed), store: URL(fileURLWithPath: store), options: formatOptions,
                    inputFormat: inputOptions.from, migration: settings,
                    validation: StoreConversion.Validation(checksRules: !noValidate, rejects: settings?.rejects))
                printWarnings(report.warnings)
                printOut(options.json ? String(decoding: try report.jsonDocument(), as: UTF8.self) : report.text)
                // Objects left out by the model's rules are a problem found: the store is in place without them.
                if report.foundProblems {
                    reportRejected(
                        report.rejected.values.reduce(0, +), perEntity: report.rejected, dangling: report.dangling,
                        version: report.version ?? "the model", listedIn: report.rejectsFile)
                    throw ExitCode(1)
                }
            }
        }
    }
}
