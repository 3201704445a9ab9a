import Decant
import DecantTestSupport
import Foundation
import Testing

/// `plan` prints a summary by default (issue 21): per hop the entities copied, transformed, added and removed and
/// only the properties that change; `--verbose` prints every property; `--json` keeps everything.
@Suite("decant plan summary", .serialized)
struct PlanSummaryTests {

    @Test(.requiresDecantBinary) func theSummaryListsOnlyWhatChanges() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let arguments = ["plan", store.path, "--model", MigrationCommandTests.notes]
        let summary = try EndToEndTests.run(arguments)
        #expect(summary.status == 0, "\(summary.stderr)")
        let hops = summary.stdout.split(separator: "\n").filter { $0.hasPrefix("hop ") }
        let counts = summary.stdout.split(separator: "\n").filter { $0.hasPrefix("  entities: ") }
        #expect(hops.count == 2)
        #expect(counts.count == hops.count, "\(summary.stdout)")
        #expect(counts.allSatisfy { $0.contains(" copied, ") && $0.contains(" transformed, ") && $0.hasSuffix(" removed") })
        // The rename shows; the properties copied as they were do not.
        #expect(summary.stdout.contains("text = $source.content  (renamed from content)"))
        #expect(!summary.stdout.contains("(copied)"), "\(summary.stdout)")
        #expect(summary.stdout.contains("destructive changes:"))
        #expect(summary.stdout.contains("pre-flight: 2 objects read, none would be rejected"))

        let verbose = try EndToEndTests.run(arguments + ["--verbose"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stdout.contains("(copied)"))
        #expect(verbose.stdout.contains("text = $source.content  (renamed from content)"))
        #expect(verbose.stdout.split(separator: "\n").count > summary.stdout.split(separator: "\n").count)

        let json = try EndToEndTests.run(arguments + ["--json"])
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""change" : "copied""#))
    }
}
