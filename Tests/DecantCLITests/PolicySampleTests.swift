import Decant
import DecantTestSupport
import Foundation
import Testing

/// `samples/PolicyMigration` as the README runs it: the Swift policy through the Xcode mapping model, and the same
/// migration as a Decant mapping file through `decant migrate`, give the same store.
@Suite("Policy sample", .serialized)
struct PolicySampleTests {
    static let sample = Fixtures.samplesRoot.appendingPathComponent("PolicyMigration", isDirectory: true)

    @Test(.enabled(if: EndToEndTests.hasBinary), .timeLimit(.minutes(30)))
    func policyAndMappingFileMigrateAlike() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Self.sample.appendingPathComponent("Journal.xcdatamodeld").path
        let store = folder.appendingPathComponent("journal.sqlite")
        let seeded = try EndToEndTests.run([
            "convert", Self.sample.appendingPathComponent("notes.csv").path, store.path, "--model", model,
            "--version", "Journal", "--entity", "Note",
        ])
        #expect(seeded.status == 0, "\(seeded.stderr)")

        // The sample package builds against this checkout and runs its policy. SwiftPM keeps a dependency's build
        // plan in the package's `.build/*.yaml` and does not notice files added to or removed from this checkout
        // since (it then fails on a missing input): the plan is dropped and made again, the objects are kept.
        let plans = Self.sample.appendingPathComponent(".build", isDirectory: true)
        for file in (try? FileManager.default.contentsOfDirectory(atPath: plans.path)) ?? [] where file.hasSuffix(".yaml") {
            try? FileManager.default.removeItem(at: plans.appendingPathComponent(file))
        }
        let swift = URL(fileURLWithPath: "/usr/bin/env")
        let build = try Subprocess.run(swift, ["swift", "build", "--package-path", Self.sample.path], timeout: 1500)
        #expect(build.status == 0, "\(build.output)\(build.errors)")
        let binPath = try Subprocess.run(
            swift, ["swift", "build", "--package-path", Self.sample.path, "--show-bin-path"], timeout: 300)
        let binary = URL(fileURLWithPath: binPath.output.trimmingCharacters(in: .whitespacesAndNewlines))
            .appendingPathComponent("NotesMigration")
        let byPolicy = folder.appendingPathComponent("by-policy.sqlite")
        let run = try Subprocess.run(binary, [store.path, byPolicy.path], timeout: 300)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("migrated Journal → Journal 2"))

        let byFile = folder.appendingPathComponent("by-file.sqlite")
        let migrate = try EndToEndTests.run([
            "migrate", store.path, "--model", model, "--mapping",
            Self.sample.appendingPathComponent("Journal1-Journal2.yaml").path, "--output", byFile.path,
        ])
        #expect(migrate.status == 0, "\(migrate.stderr)")

        let bundle = try ModelBundle.load(from: URL(fileURLWithPath: model))
        let policy = try Self.contents(byPolicy, bundle: bundle)
        #expect(policy == (try Self.contents(byFile, bundle: bundle)))
        let paragraphs = try #require(policy["Paragraph"])
        #expect(paragraphs.count == 4)
        #expect(paragraphs.contains("Buy oat milk, coffee beans and a new notebook before the weekend.|0|Buy oat milk, coffee bea|note"))
    }

    /// Each object's values and whether its relationships are set, sorted: both runs give the same objects.
    static func contents(_ url: URL, bundle: ModelBundle) throws -> [String: [String]] {
        var reader = try SQLiteFormat().makeReader(at: url, options: FormatOptions(bundle: bundle))
        var result: [String: [String]] = [:]
        for (entity, records) in try RecordDump.records(of: &reader) {
            result[entity] = records.map { record in
                let values = record.values.map { $0.text ?? "" }
                let links = record.relationships.map { link -> String in
                    switch link {
                    case .toOne(let target): target == nil ? "" : "note"
                    case .toMany(let members): "\(members.count)"
                    case .viaInverse: "via inverse"
                    }
                }
                return (values + links).joined(separator: "|")
            }.sorted()
        }
        return result
    }
}
