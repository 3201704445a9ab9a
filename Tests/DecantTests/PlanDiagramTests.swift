@testable import Decant
import DecantTestSupport
import Foundation
import Testing

/// Plan diagrams: Graphviz renders them without a warning; the Mermaid text has every hop and every entity mapping
/// exactly once, every label quoted; the README's Notes v1 → v3 plan is the command's output.
@Suite("Plan diagrams")
struct PlanDiagramTests {
    /// The samples' Notes v1 store and its plan to the current version.
    static func notesPlan(in folder: URL) throws -> MigrationPlan {
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let store = folder.appendingPathComponent("NotesV1.sqlite")
        var options = FormatOptions(bundle: bundle, version: "Notes")
        options.sqlite.journalMode = .delete
        _ = try StoreConversion.convert(from: Fixtures.samplesRoot.appendingPathComponent("notes-v1"), to: store, options: options)
        return try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle)).plan
    }

    /// Plans of corpus stores that need no Xcode mapping model, one hop at a time through their bundles.
    static func corpusPlans(in folder: URL) throws -> [(String, MigrationPlan)] {
        let chains: [(store: String, bundle: String, to: String)] = [
            ("objcio__core-data/Migrations/MigrationsTests/Moody.moody", "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld", "Moody 2"),
            ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
             "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", "SampleModel2"),
        ]
        return try chains.map { chain in
            let bundle = try ModelBundle.load(from: Fixtures.corpus(chain.bundle))
            let copy = folder.appendingPathComponent(URL(fileURLWithPath: chain.store).lastPathComponent)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: Fixtures.corpus(chain.store).path + suffix) {
                try FileManager.default.copyItem(atPath: Fixtures.corpus(chain.store).path + suffix, toPath: copy.path + suffix)
            }
            let options = StoreMigration.Options(bundle: bundle, destinationVersion: chain.to)
            return (chain.store, try StoreMigration.plan(store: copy, options: options, dryRun: false).plan)
        }
    }

    @Test(.enabled(if: Graphviz.shouldRun, Graphviz.skipReason)) func graphvizRendersThePlansWithoutWarnings() throws {
        let dot = try #require(Graphviz.dot, "`dot` is not on PATH, and make test (make deps) installs graphviz")
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plans = [("Notes", try Self.notesPlan(in: folder))] + (try Self.corpusPlans(in: folder))
        for (name, plan) in plans {
            let source = folder.appendingPathComponent("plan.dot")
            try Data(PlanDiagram(plan: plan, style: .dot).text.utf8).write(to: source)
            let outcome = try Subprocess.run(dot, ["-Tsvg", source.path])
            #expect(outcome.status == 0, "\(name): \(outcome.errors)")
            #expect(outcome.errors.isEmpty, "\(name): \(outcome.errors)")
        }
    }

    @Test func mermaidHasEveryHopAndMappingOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plans = [("Notes", try Self.notesPlan(in: folder))] + (try Self.corpusPlans(in: folder))
        for (name, plan) in plans {
            let text = PlanDiagram(plan: plan, style: .mermaid).text
            let lines = text.split(separator: "\n").map(String.init)
            for (index, hop) in plan.hops.enumerated() {
                #expect(lines.filter { $0.hasPrefix("    subgraph hop\(index + 1)[") }.count == 1, "\(name)")
                #expect(lines.filter { $0.contains("-->|\"hop \(index + 1),") }.count == 1, "\(name)")
                for position in hop.mapping.entityMappings.indices {
                    #expect(lines.filter { $0.hasPrefix("        hop\(index + 1)m\(position)[\"") }.count == 1, "\(name)")
                }
            }
            // Every label is quoted, and no quote or angle bracket is left raw inside one.
            for line in lines where line.contains("[") && !line.contains("classDef") {
                let label = line.drop { $0 != "[" }
                #expect(label.hasPrefix("[\"") && label.hasSuffix("\"]"), "\(name): \(line)")
                #expect(!label.dropFirst(2).dropLast(2).contains("\""), "\(name): \(line)")
            }
        }
    }

    @Test func theNotesPlansMermaidIsAsWrittenByHand() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = PlanDiagram(plan: try Self.notesPlan(in: folder), style: .mermaid).text
        #expect(
            text == """
                flowchart LR
                    classDef destructive fill:#fdd,stroke:#c00,color:#600
                    v0["Notes"]
                    v1["Notes 2"]
                    v2["Notes 3"]
                    v0 -->|"hop 1, inferred"| v1
                    subgraph hop1["hop 1: Notes → Notes 2 (inferred)"]
                        direction TB
                        hop1m0["Note → Note: transform<br/>text: renamed from content<br/>title: added (nil)"]
                    end
                    v1 -->|"hop 2, inferred"| v2
                    subgraph hop2["hop 2: Notes 2 → Notes 3 (inferred)"]
                        direction TB
                        hop2m0["(none) → Folder: added<br/>name: added (nil)<br/>notes: added (nil)"]
                        hop2m1["Note → Note: transform<br/>folder: added (nil)"]
                    end
                """)
    }

    @Test func readmeShowsTheNotesPlan() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let readme = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/USAGE.md"), encoding: .utf8)
        let block = "```mermaid\n" + PlanDiagram(plan: try Self.notesPlan(in: folder), style: .mermaid).text + "\n```"
        #expect(readme.contains(block), "docs/USAGE.md's Notes plan differs from `decant plan … --diagram mermaid`:\n\(block)")
    }
}
