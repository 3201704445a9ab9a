import Decant
import DecantTestSupport
import Foundation
import Testing

/// `samples/PolicyMigration` as the README runs it: the Swift policy through the Xcode mapping model, and the same
/// migration as a Decant mapping file through `decant migrate`, give the same store.
///
/// Slow (it builds a package against this checkout): `make test` leaves it to `make test-all`, and checks the same
/// promise in process (`MappingSearchTestStoreTests.thePolicyAndTheMappingFileMigrateAlike`, the sample's own policy
/// source against its mapping file). The sample is built
/// from a copy in the temporary folder, never inside the checkout, so no build file of the repository is touched.
@Suite("Policy sample", .serialized, .tags(.slow))
struct PolicySampleTests {
    static let sample = Fixtures.samplesRoot.appendingPathComponent("PolicyMigration", isDirectory: true)

    /// A copy of the sample in a fixed place of the temporary folder (its build is kept there between runs), its
    /// dependency on Decant pointing at this checkout; returns the copy and its build folder.
    static func temporaryCopy() throws -> (package: URL, scratch: URL) {
        let manager = FileManager.default
        // One place per checkout (FNV-1a of its path), so worktrees do not share a build.
        let key = String(Fixtures.packageRoot.path.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }, radix: 16)
        let root = manager.temporaryDirectory.appendingPathComponent("decant-policy-sample-\(key)", isDirectory: true)
        let package = root.appendingPathComponent("PolicyMigration", isDirectory: true)
        let scratch = root.appendingPathComponent("build", isDirectory: true)
        if manager.fileExists(atPath: package.path) { try manager.removeItem(at: package) }
        try manager.createDirectory(at: root, withIntermediateDirectories: true)
        try manager.copyItem(at: sample, to: package)
        let manifest = package.appendingPathComponent("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let pointed = text.replacingOccurrences(of: #"path: "../..""#, with: "path: \"\(Fixtures.packageRoot.path)\"")
        try #require(pointed != text, "the sample's Package.swift no longer names Decant at ../..")
        try Data(pointed.utf8).write(to: manifest)
        // SwiftPM keeps a dependency's build plan in `*.yaml` and does not notice files added to or removed from
        // this checkout since (it then fails on a missing input): the copy's plan is dropped, its objects kept.
        for file in (try? manager.contentsOfDirectory(atPath: scratch.path)) ?? [] where file.hasSuffix(".yaml") {
            try manager.removeItem(at: scratch.appendingPathComponent(file))
        }
        return (package, scratch)
    }

    @Test(.requiresDecantBinary, .timeLimit(.minutes(30)))
    func policyAndMappingFileMigrateAlike() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Self.sample.appendingPathComponent("Journal.xcdatamodeld").path
        let store = folder.appendingPathComponent("journal.sqlite")
        let seeded = try EndToEndTests.run([
            "convert", Self.sample.appendingPathComponent("notes.csv").path, store.path, "--model", model,
            "--model-version", "Journal", "--entity", "Note",
        ])
        #expect(seeded.status == 0, "\(seeded.stderr)")

        // The sample package builds (from a temporary copy) against this checkout and runs its policy.
        let copy = try Self.temporaryCopy()
        let swift = URL(fileURLWithPath: "/usr/bin/env")
        let place = ["--package-path", copy.package.path, "--scratch-path", copy.scratch.path]
        let build = try Subprocess.run(swift, ["swift", "build"] + place, timeout: 1500)
        try #require(build.status == 0, "\(build.output)\(build.errors)")
        let binPath = try Subprocess.run(swift, ["swift", "build"] + place + ["--show-bin-path"], timeout: 300)
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
