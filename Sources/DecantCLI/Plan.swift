import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Plan: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how a store would be migrated, without writing anything.",
            discussion: """
                Prints the store's version (found among the versions of --model by its entity hashes), the \
                destination (the current version, or --to-version), the versions' order (Xcode's numbering, --version-order, or unknown), the path (hop by hop, or Core Data's \
                single step and why), the hops between them and for each whether it is \
                inferred or comes from a mapping file or an Xcode mapping model, what happens to every entity and property, the destructive \
                changes (data dropped), and a dry run's count of objects that would be rejected. It says which Xcode \
                mapping models the search of the model's project found and used (--no-mapping-search turns it off) \
                and notes mappings no hop of this store uses.

                Exits 1, as migrate would, when the dry run would reject objects, or when the plan cannot run, with the reason per entity and property and what to write in a \
                mapping file instead, or the policy class or function (app code) an Xcode mapping model needs, or the \
                willMigrate/didMigrate closures (file and line) of a custom stage of a SwiftData migration plan, whose \
                stages give the hops; a mapping file for that hop (--mapping) stands for them. The notes say what \
                becomes of the store's persistent history. --json prints the document described by schemas/plan.schema.json. --diagram \
                mermaid|dot draws the hops and per hop the entity mappings, changed properties and destructive changes.
                """
        )

        @Argument(help: "The store to plan for.")
        var store: String

        @OptionGroup var migration: MigrationOptions

        @OptionGroup var inputOptions: InputFormatOptions

        @Flag(name: .long, help: "Skip the dry run (no pre-flight counts).")
        var noDryRun = false

        @Option(help: "Draw the plan instead: mermaid (Markdown) or dot (Graphviz).")
        var diagram: ModelDiagram.Style?

        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard migration.modelOptions.model != nil else { throw ValidationError("give the model with --model") }
            guard migration.rejects == nil else { throw ValidationError("--rejects goes with migrate and seed") }
            try inputOptions.requireOneEntity()
        }

        func run() throws {
            try reportingErrors(verbose: options.verbose, json: options.json) {
                let settings = try migration.settings(input: inputOptions)
                let report = try StoreMigration.plan(
                    store: URL(fileURLWithPath: store),
                    options: settings,
                    dryRun: !noDryRun
                )
                if let diagram {
                    printOut(PlanDiagram(plan: report.plan, style: diagram).text)
                    return
                }
                let document = PlanDocument(report: report, store: store, registry: settings.environment.registry)
                // A summary by default (what changes); --verbose lists every property, --json keeps everything.
                printOut(
                    options.json
                        ? String(decoding: try document.jsonDocument(), as: UTF8.self)
                        : document.text(verbose: options.verbose > 0))
                // As migrate would: a plan that cannot run, or whose dry run rejects objects, is a problem found.
                if document.foundProblems { throw ExitCode(1) }
            }
        }
    }
}
