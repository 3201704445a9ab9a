@testable import Decant
import DecantTestSupport
import Foundation
import Testing

/// The mapping search reads each found mapping model's hashes first and reads whole only those that fit a hop
/// (issue 38): mapping models of other bundles in the tree are never parsed whole, whether their names already rule
/// them out, their hashes do, or they are `.cdm` files; the same mapping found twice is used from the copy nearest the
/// model; a batch or a seeding searches once.
@Suite("Mapping search, hashes first")
struct MappingSearchHashFirstTests {
    static let moodyHops = ["Moody 2-Moody 3", "Moody 3-Moody 4", "Moody 4-Moody 5", "Moody 5-Moody 6"]

    /// Copies `corpusPath` (a mapping model) into `folder` below `project`.
    static func copy(_ corpusPath: String, into folder: String, of project: URL) throws {
        let source = Fixtures.corpus(corpusPath)
        let target = project.appendingPathComponent(folder, isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source, to: target.appendingPathComponent(source.lastPathComponent))
    }

    /// Runs `body` with a parse observer; returns its result and the file names read whole.
    static func observing<T>(_ body: () throws -> T) rethrows -> (T, [String]) {
        let observer = XcodeMappingParseObserver()
        let result = try XcodeMappingParseObserver.$current.withValue(observer) { try body() }
        return (result, observer.parsed.map { URL(fileURLWithPath: $0).lastPathComponent })
    }

    /// Beside the Moody bundle's four mapping models, other projects' mapping models (CoreDataPlus's
    /// `.xcmappingmodel` and its `.cdm`, XcodeGen's, two of Apptentive's): only Moody's are read whole; the others are
    /// ignored with the note they always had.
    @Test func aMappingModelThatDoesNotFitIsNeverParsedWhole() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (project, model) = try MappingSearchTests.moodyProject(in: folder)
        let sample = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        try Self.copy("\(sample)/MappingModels/V2toV3.xcmappingmodel", into: "Other/CoreDataPlus", of: project)
        try Self.copy("\(sample)/Fixtures/V2toV3.cdm", into: "Other/CoreDataPlus", of: project)
        try Self.copy(
            "yonaskolb__XcodeGen/Tests/Fixtures/TestProject/App_iOS/Model.xcmappingmodel", into: "Other/XcodeGen",
            of: project)
        let apptentive = "apps:apptentive__apptentive-ios/Apptentive/Apptentive/Model"
        try Self.copy("\(apptentive)/ATDataModel v1 to v2.xcmappingmodel", into: "Other/Apptentive", of: project)
        try Self.copy("\(apptentive)/ATDataModel v4 to v5.xcmappingmodel", into: "Other/Apptentive", of: project)
        let options = try MappingSearchTests.moodyOptions(model: model)

        let ((models, outcome), parsed) = try Self.observing { try options.searchedMappings() }
        #expect(parsed.sorted() == Self.moodyHops.map { "\($0).xcmappingmodel" }, "\(parsed)")
        #expect(models.count == 4)
        #expect(outcome?.found.count == 9)
        let ignored = outcome?.notes.filter { MappingFiles.isAnotherBundleNote($0) } ?? []
        #expect(ignored.count == 5, "\(outcome?.notes ?? [])")
        #expect(ignored.allSatisfy { $0.hasSuffix("(its entity hashes fit no two versions of Moody)") }, "\(ignored)")
    }

    /// A mapping model of another bundle whose entity names this bundle has (so its names do not rule it out and its
    /// snapshots are decoded for their hashes) is still not parsed whole: its hashes fit no two versions.
    @Test func namesThatFitButHashesThatDoNotAreNotParsedWhole() throws {
        // XcodeGen's mapping maps Entity → Entity of App_iOS/Model.xcdatamodeld; this bundle's Entity has other
        // attributes, so its hashes differ.
        var entity = Entity(name: "Entity")
        entity.attributes = [Attribute(name: "mineOnly", type: .string, isOptional: true)]
        var entity2 = entity
        entity2.attributes.append(Attribute(name: "count", type: .integer64, isOptional: true))
        let bundle = MigrationFixtures.bundle(
            "Mine",
            [
                ObjectModel(versionName: "Mine", entities: [entity], versionIdentifiers: []),
                ObjectModel(versionName: "Mine 2", entities: [entity2], versionIdentifiers: []),
            ])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = folder.appendingPathComponent("Project", isDirectory: true)
        try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
        try Data("// swift-tools-version:6.0\n".utf8).write(to: project.appendingPathComponent("Package.swift"))
        try Self.copy(
            "yonaskolb__XcodeGen/Tests/Fixtures/TestProject/App_iOS/Model.xcmappingmodel", into: "Mappings",
            of: project)
        var options = StoreMigration.Options(bundle: bundle)
        options.modelURL = project.appendingPathComponent("Model/Mine.xcdatamodeld")

        let header = try XcodeMappingHeader(
            contentsOf: project.appendingPathComponent("Mappings/Model.xcmappingmodel"))
        #expect(header.needsSnapshot(bundle: bundle))
        let names = (source: header.sourceEntityNames.sorted(), destination: header.destinationEntityNames.sorted())
        #expect(names.source == ["Entity"] && names.destination == ["Entity"], "\(names)")
        let couldFit = MappingFiles.VersionSets(bundle).namesCouldFit(
            source: header.sourceEntityNames, destination: header.destinationEntityNames)
        #expect(couldFit)
        let ((models, outcome), parsed) = try Self.observing { try options.searchedMappings() }
        #expect(parsed.isEmpty, "\(parsed)")
        #expect(models.isEmpty)
        #expect(outcome?.notes.count == 1)
        #expect(outcome?.notes.first?.hasSuffix("(its entity hashes fit no two versions of Mine)") == true)
    }

    @Test func folderStepsCountUpThenDown() {
        let model = URL(fileURLWithPath: "/P/Model/Moody.xcdatamodeld")
        #expect(MappingFiles.folderSteps(from: model, to: URL(fileURLWithPath: "/P/Model/A.cdm")) == 0)
        #expect(MappingFiles.folderSteps(from: model, to: URL(fileURLWithPath: "/P/Model/Sub/A.cdm")) == 1)
        #expect(MappingFiles.folderSteps(from: model, to: URL(fileURLWithPath: "/P/A.xcmappingmodel")) == 1)
        #expect(MappingFiles.folderSteps(from: model, to: URL(fileURLWithPath: "/P/Mappings/A.cdm")) == 2)
        #expect(MappingFiles.folderSteps(from: model, to: URL(fileURLWithPath: "/P/Other/Deep/A.cdm")) == 3)
    }

    /// The same mapping found twice for one hop (a copy): the copy nearest the model serves the hop, although the
    /// other comes first by path; both fit, so both are read whole (and compared).
    @Test func theCopyNearestTheModelServesTheHop() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (project, model) = try MappingSearchTests.moodyProject(in: folder)
        let hop = "Moody 4-Moody 5.xcmappingmodel"
        // Beside the bundle: 0 steps; `Mappings/` (first by path) is 2 steps away.
        try FileManager.default.copyItem(
            at: project.appendingPathComponent("Mappings/\(hop)"),
            to: model.deletingLastPathComponent().appendingPathComponent(hop))
        let store = try Fixtures.copyStore(Fixtures.corpus("\(MappingSearchTests.moodyStores)/Moody 4.moody"), into: folder)
        let options = try MappingSearchTests.moodyOptions(model: model)

        let (report, parsed) = try Self.observing { try StoreMigration.plan(store: store, options: options, dryRun: false) }
        #expect(report.plan.isExecutable, "\(report.plan.problems)")
        #expect(parsed.filter { $0 == hop }.count == 2, "\(parsed)")
        let search = try #require(report.mappingSearch)
        let near = model.deletingLastPathComponent().appendingPathComponent(hop).standardizedFileURL.path
        let far = project.appendingPathComponent("Mappings/\(hop)").standardizedFileURL.path
        #expect(search.found.firstIndex(of: far) ?? 0 < search.found.firstIndex(of: near) ?? 0, "\(search.found)")
        #expect(search.used.contains(near), "\(search.used)")
        #expect(!search.used.contains(far), "\(search.used)")
        #expect(report.plan.hops.first?.file == near)

        // Without the model to measure from, the first by path serves, as before.
        var loaded = MappingFiles.Loaded()
        for url in [far, near] {
            try MappingFiles.loadXcode(
                from: URL(fileURLWithPath: url), bundle: options.bundle, named: false, into: &loaded)
        }
        #expect(try MappingFiles.resolve(loaded, bundle: options.bundle).count == 1)
        #expect(loaded.xcode.map(\.path) == [far, near])
    }

    /// A seeding plans the seed's copy, then migrates it: one search, each fitting mapping model read whole once.
    @Test func aSeedingSearchesOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try MappingSearchTests.moodyProject(in: folder)
        var bundle = try ModelBundle.load(from: model)
        bundle.currentVersionName = "Moody 5"
        let seed = try Fixtures.copyStore(Fixtures.corpus("\(MappingSearchTests.moodyStores)/Moody 2.moody"), into: folder)
        let destination = folder.appendingPathComponent("App/Moody.sqlite")
        var migration = StoreMigration.Options(bundle: bundle)
        migration.modelURL = model

        let (report, parsed) = try Self.observing {
            try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: bundle), migration: migration)
        }
        #expect(report.action == .seeded)
        #expect(report.migratedFrom == "Moody 2")
        #expect(parsed.sorted() == Self.moodyHops.map { "\($0).xcmappingmodel" }, "\(parsed)")
    }

    /// Options made to search once (a batch's) search once for every store migrated with them; plain options search
    /// for each run, so files changed between runs are seen.
    @Test func aBatchSearchesOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try MappingSearchTests.moodyProject(in: folder)
        let stores = try ["Moody 3", "Moody 4"].map { version in
            try Fixtures.copyStore(Fixtures.corpus("\(MappingSearchTests.moodyStores)/\(version).moody"), into: folder)
        }
        let options = try MappingSearchTests.moodyOptions(model: model)

        let once = options.searchingMappingsOnce()
        let (reports, parsed) = try Self.observing {
            try stores.map { try StoreMigration.migrate(store: $0, to: .inPlace(backup: nil), options: once) }
        }
        #expect(reports.map(\.destinationVersion) == ["Moody 6", "Moody 6"])
        #expect(parsed.sorted() == Self.moodyHops.map { "\($0).xcmappingmodel" }, "\(parsed)")

        let (_, each) = try Self.observing {
            try stores.map { try StoreMigration.plan(store: $0, options: options, dryRun: false) }
        }
        #expect(each.count == 8, "\(each)")
    }
}
