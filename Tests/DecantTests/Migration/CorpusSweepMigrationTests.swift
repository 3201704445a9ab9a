import Decant
import DecantTestSupport
import Foundation
import Testing

/// Every SQLite store of the corpus that sits in the repository of its model bundle migrates to the bundle's current
/// version with no mapping named (the mapping search finds the project's mapping models), as Core Data migrates it
/// on an app's first launch; over every inferred hop each entity keeps its objects.
@Suite("Corpus sweep: every store to its current version")
struct CorpusSweepMigrationTests {
    /// Stores with no model bundle in the corpus that has their entity hashes, with the reason.
    static let withoutBundle: [String: String] = [
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite":
            "CoreDataPlus ships SampleModel2's stores without its model",
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite":
            "CoreDataPlus ships SampleModel2's stores without its model",
        "\(Fixtures.appsPrefix)duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite":
            "the app merges several packages' models into the one it opens this store with",
    ]

    /// Stores that cannot migrate with no flags, as Core Data could not either, each with the reason and the words
    /// its refusal must say (a test that accepted any error would pass a crash of the planner).
    static let refused: [String: (reason: String, says: [String])] = [
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite": (
            "SampleModel.xcdatamodeld names SampleModel (V1) as its current version, older than this store's "
                + "SampleModel2 (the CoreDataPlus tests pick SampleModel3 in code): a store newer than the current "
                + "version is refused (exit 64) unless --to-version names a version", ["newer than"]
        ),
        "\(Fixtures.appsPrefix)mwkirk__MWKCoreData/Tests/Stores/MWKCoreDataTests2.sqlite": (
            "the store is at MWKCoreDataTests2, newer than its bundle's current version MWKCoreDataTests",
            ["newer than", "--to-version"]
        ),
        "\(Fixtures.appsPrefix)LoopKit__LoopKit/LoopKitHostedTests/TestCoreData/Model.sqlite.v1.original": (
            "the hop Model → Modelv4 is LoopKit's Modelv1v4.xcmappingmodel, whose entity mappings name two "
                + "NSEntityMigrationPolicy classes (app code) until a mapping file stands in for them",
            [
                "LoopKit.CachedCarbObjectv3EntityMigrationPolicy", "LoopKit.DeletedCarbObjectv3EntityMigrationPolicy",
                "app code", "Decant mapping file and give it with --mapping",
            ]
        ),
    ]

    static func stores() -> [String] {
        Fixtures.corpusStores
    }

    /// The bundle (an `.xcdatamodeld`, else a `.momd`, else an `.xcdatamodel` outside a bundle, as Xcode 3 projects
    /// kept theirs) in the store's repository that has a version with the store's entity hashes.
    static func bundle(for store: String) throws -> (URL, ModelBundle)? {
        let repository = String(store.split(separator: "/").first ?? "")
        let hashes = try MigrationFixtures.hashes(Fixtures.corpus(store))
        let kinds = ["xcdatamodeld", "momd", "xcdatamodel"]
        let rank = { (url: URL) in kinds.firstIndex(of: url.pathExtension.lowercased()) ?? kinds.count }
        let candidates = Fixtures.corpusItems { url in
            Fixtures.corpusRelativePath(url).hasPrefix(repository + "/")
                && kinds.contains(url.pathExtension.lowercased())
        }.sorted { (rank($0), $0.path) < (rank($1), $1.path) }
        for url in candidates {
            let bundle = try ModelBundle.load(from: url)
            if bundle.versions.contains(where: { $0.entityVersionHashes == hashes }) { return (url, bundle) }
        }
        return nil
    }

    @Test func theCorpusHasTheStoresThisSweepExpects() {
        let stores = Self.stores()
        #expect(stores.count >= 10, "\(stores)")
        #expect(Set(Self.withoutBundle.keys).isSubset(of: Set(stores)))
        #expect(Set(Self.refused.keys).isSubset(of: Set(stores)))
    }

    @Test(arguments: stores()) func migratesToTheCurrentVersionWithNoFlags(_ store: String) throws {
        let found = try Self.bundle(for: store)
        guard let (modelURL, bundle) = found else {
            #expect(Self.withoutBundle[store] != nil, "no bundle in the corpus has the hashes of \(store)")
            return
        }
        #expect(Self.withoutBundle[store] == nil)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try Fixtures.copyStore(Fixtures.corpus(store), into: folder)
        var options = StoreMigration.Options(bundle: bundle)
        options.modelURL = modelURL
        // The app code the projects' mapping models call, registered as the app would.
        options.functions.registerPolicy(Country5ToCountry6Policy(), as: "Migrations.Country5ToCountry6Policy")
        options.functions.registerPolicy(V2to3MakerPolicy(), as: "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        if let refusal = Self.refused[store] {
            let error = try #require(throws: DecantError.self, Comment(rawValue: refusal.reason)) {
                _ = try StoreMigration.migrate(
                    store: copy, to: .file(folder.appendingPathComponent("out.sqlite")), options: options)
            }
            for words in refusal.says { #expect(error.description.contains(words), "\(store): \(error)") }
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
            return
        }
        if CorpusAllowList.damagedStores[store] != nil {
            _ = try CorpusAllowList.readingRows(of: store) {
                try StoreMigration.migrate(store: copy, to: .file(folder.appendingPathComponent("out.sqlite")), options: options)
            }
            return
        }
        let plan = try StoreMigration.plan(store: copy, options: options)
        #expect(plan.plan.isExecutable, "\(store): \(plan.plan.problems)")
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: copy, to: .file(output), options: options)
        let current = try #require(bundle.currentVersion)
        #expect(report.destinationVersion == current.versionName)
        #expect(try MigrationFixtures.hashes(output) == current.entityVersionHashes)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let removed = Set(plan.plan.destructiveChanges.compactMap { change -> String? in
            if case .entityRemoved(let hop, let entity) = change { return "\(hop) \(entity)" }
            return nil
        })
        for (hop, ledger) in zip(plan.plan.hops, report.ledgers) where hop.isInferred {
            for (entity, row) in ledger.rows where !removed.contains("\(hop.name) \(entity)") {
                #expect(row.removed == 0 && row.rejected == 0, "\(store) \(hop.name) \(entity): \(row)")
            }
        }
    }
}
