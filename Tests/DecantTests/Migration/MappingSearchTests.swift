import Decant
import DecantTestSupport
import Foundation
import Testing

/// Mapping models found as Core Data finds them (in the project that holds the model), mappings a store does not use
/// passed over with a note, mapping models of other bundles ignored, and two mappings for one hop refused by name.
@Suite("Mapping search")
struct MappingSearchTests {
    static let moodyFolder = "objcio__core-data/Migrations/Migrations"
    static let moodyStores = "objcio__core-data/Migrations/MigrationsTests"

    /// A project folder (with a `Package.swift`) holding a copy of the Moody bundle in `Model/` and of its four
    /// mapping models in `Mappings/`; returns the project and the bundle's URL.
    static func moodyProject(in folder: URL) throws -> (project: URL, model: URL) {
        let project = folder.appendingPathComponent("Project", isDirectory: true)
        let model = project.appendingPathComponent("Model", isDirectory: true)
        let mappings = project.appendingPathComponent("Mappings", isDirectory: true)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
        try Data("// swift-tools-version:6.0\n".utf8).write(to: project.appendingPathComponent("Package.swift"))
        let bundle = model.appendingPathComponent("Moody.xcdatamodeld")
        try FileManager.default.copyItem(at: Fixtures.corpus("\(moodyFolder)/Moody.xcdatamodeld"), to: bundle)
        for hop in ["Moody 2-Moody 3", "Moody 3-Moody 4", "Moody 4-Moody 5", "Moody 5-Moody 6"] {
            try FileManager.default.copyItem(
                at: Fixtures.corpus("\(moodyFolder)/\(hop).xcmappingmodel"),
                to: mappings.appendingPathComponent("\(hop).xcmappingmodel"))
        }
        return (project, bundle)
    }

    static func moodyOptions(model: URL) throws -> StoreMigration.Options {
        var options = StoreMigration.Options(bundle: try ModelBundle.load(from: model))
        options.modelURL = model
        options.functions.registerPolicy(Country5ToCountry6Policy(), as: "Migrations.Country5ToCountry6Policy")
        return options
    }

    @Test func theSearchIsBoundedSkipsBuildFoldersAndCountsAFileOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = FileManager.default
        let project = folder.appendingPathComponent("App", isDirectory: true)
        let modelFolder = project.appendingPathComponent("Sources/App", isDirectory: true)
        try manager.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        try manager.createDirectory(at: project.appendingPathComponent("App.xcodeproj"), withIntermediateDirectories: true)
        let model = modelFolder.appendingPathComponent("Model.xcdatamodeld")
        try manager.createDirectory(at: model, withIntermediateDirectories: true)
        for path in [
            "Sources/App/A.xcmappingmodel", "Mappings/B.cdm", ".build/debug/C.cdm", "DerivedData/D.cdm", "Pods/E.cdm",
            "node_modules/F.cdm", ".git/objects/H.cdm",
        ] {
            let url = project.appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if path.hasSuffix(".cdm") {
                try Data([0]).write(to: url)
            } else {
                try manager.createDirectory(at: url, withIntermediateDirectories: true)
            }
        }
        // Deeper than the bound: not found, and the result says the walk was cut.
        var deep = project.appendingPathComponent("Deep", isDirectory: true)
        for level in 0..<MappingSearch.maximumDepth { deep.appendPathComponent("L\(level)", isDirectory: true) }
        try manager.createDirectory(at: deep, withIntermediateDirectories: true)
        try Data([0]).write(to: deep.appendingPathComponent("G.cdm"))
        // A link back up the tree, and a second name for B.cdm.
        try manager.createSymbolicLink(at: project.appendingPathComponent("Loop"), withDestinationURL: project)
        try manager.createSymbolicLink(
            at: project.appendingPathComponent("Mappings/Link.cdm"),
            withDestinationURL: project.appendingPathComponent("Mappings/B.cdm"))

        #expect(MappingSearch.projectFolder(ofModelAt: model).standardizedFileURL == project.standardizedFileURL)
        let search = MappingSearch.find(forModelAt: model)
        #expect(search.found.map(\.lastPathComponent) == ["B.cdm", "A.xcmappingmodel"])
        #expect(search.isTruncated)
        #expect(MappingSearch.find(forModelAt: model) == search)
        // Without a project marker the model's own folder is searched (`.git` is one too).
        try manager.removeItem(at: project.appendingPathComponent("App.xcodeproj"))
        #expect(MappingSearch.projectFolder(ofModelAt: model).standardizedFileURL == project.standardizedFileURL)
        try manager.removeItem(at: project.appendingPathComponent(".git"))
        let own = MappingSearch.find(forModelAt: model)
        #expect(own.root.standardizedFileURL == modelFolder.standardizedFileURL)
        #expect(own.found.map(\.lastPathComponent) == ["A.xcmappingmodel"])
    }

    /// The depth bound, written out by hand (a test that derives its paths from the constant passes whatever the
    /// constant is): a mapping model in a folder 8 folders below the project is found, one 9 below is not, and the
    /// walk says it was cut.
    @Test func theWalkGoesEightFoldersDeepAndNoFurther() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = FileManager.default
        let eight = folder.appendingPathComponent("1/2/3/4/5/6/7/8", isDirectory: true)
        let nine = eight.appendingPathComponent("9", isDirectory: true)
        try manager.createDirectory(at: nine, withIntermediateDirectories: true)
        try Data([0]).write(to: eight.appendingPathComponent("Eight.cdm"))
        let reached = MappingSearch.search(from: folder)
        #expect(reached.found.map(\.lastPathComponent) == ["Eight.cdm"])
        // Folder 9 is empty, but the walk cannot know that without entering it.
        #expect(reached.isTruncated)

        try Data([0]).write(to: nine.appendingPathComponent("Nine.cdm"))
        try manager.removeItem(at: eight.appendingPathComponent("Eight.cdm"))
        let cut = MappingSearch.search(from: folder)
        #expect(cut.found.isEmpty)
        #expect(cut.isTruncated)

        // Folder 8 holding no folder: nothing is cut.
        try manager.removeItem(at: nine)
        #expect(!MappingSearch.search(from: folder).isTruncated)
    }

    /// The entry bound, written out by hand: the 20,000th entry is looked at, the 20,001st is not, and the walk says
    /// it was cut. Names sort, so the mapping model (`zz.cdm`) is the last entry.
    @Test func theWalkLooksAtTwentyThousandEntriesAndNoMore() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = FileManager.default
        for index in 0..<19_999 {
            #expect(manager.createFile(atPath: folder.appendingPathComponent("f\(index)").path, contents: nil))
        }
        try Data([0]).write(to: folder.appendingPathComponent("zz.cdm"))
        try #require(try manager.contentsOfDirectory(atPath: folder.path).count == 20_000)
        let whole = MappingSearch.search(from: folder)
        #expect(whole.found.map(\.lastPathComponent) == ["zz.cdm"])
        #expect(!whole.isTruncated)

        #expect(manager.createFile(atPath: folder.appendingPathComponent("f-one-more").path, contents: nil))
        let cut = MappingSearch.search(from: folder)
        #expect(cut.found.isEmpty)
        #expect(cut.isTruncated)
    }

    /// A search its bounds cut off says so in the plan's notes, with the bounds, and tells how to name what it did not
    /// reach; a search that saw everything adds no such note.
    @Test func aCutOffSearchIsNotedInThePlan() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (project, model) = try Self.moodyProject(in: folder)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 2.moody"), into: folder)
        let options = try Self.moodyOptions(model: model)
        let note = "the mapping search stopped at its bounds (8 folders deep, 20000 entries) in "

        let whole = try StoreMigration.plan(store: store, options: options)
        #expect(!whole.plan.notes.contains { $0.hasPrefix(note) }, "\(whole.plan.notes)")

        let deep = project.appendingPathComponent("Deep/1/2/3/4/5/6/7/8", isDirectory: true)
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        let cut = try StoreMigration.plan(store: store, options: options)
        let noted = cut.plan.notes.filter { $0.hasPrefix(note) }
        #expect(noted.count == 1, "\(cut.plan.notes)")
        #expect(noted.first?.hasSuffix("; name further mapping models with --mapping") == true, "\(noted)")
        let text = PlanDocument(report: cut, store: "Moody 2.moody").text
        #expect(text.contains("notes:\n  " + note), "\(text)")
        // The four mapping models it reached are still found and used.
        #expect(cut.plan.hops.map(\.isInferred) == [false, false, false, false])
    }

    /// The objc.io SDK shape: a store at Moody 2 reaches Moody 6 through the four mapping models the project ships,
    /// none of them named; the plan says which it found and used. With the search off the mapping hops are inferred.
    @Test func mappingModelsInTheProjectServeTheirHops() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try Self.moodyProject(in: folder)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 2.moody"), into: folder)
        var options = try Self.moodyOptions(model: model)

        let report = try StoreMigration.plan(store: store, options: options)
        #expect(report.plan.isExecutable, "\(report.plan.problems)")
        #expect(report.plan.hops.map(\.isInferred) == [false, false, false, false])
        let search = try #require(report.mappingSearch)
        #expect(search.found.count == 4)
        #expect(search.used == search.found)
        let text = PlanDocument(report: report, store: "Moody 2.moody").text
        #expect(text.contains("mapping models found in "), "\(text)")
        #expect(text.contains("  used: "), "\(text)")

        let output = folder.appendingPathComponent("Moody 6.sqlite")
        let migrated = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(migrated.destinationVersion == "Moody 6")
        #expect(migrated.ledgers.allSatisfy { $0.isReconciled })
        #expect(try MigrationFixtures.hashes(output) == options.bundle.currentVersion?.entityVersionHashes)

        options.searchesForMappings = false
        let off = try StoreMigration.plan(store: store, options: options, dryRun: false)
        #expect(off.mappingSearch == nil)
        #expect(off.plan.hops.allSatisfy { $0.isInferred })
    }

    /// Seeding an app whose existing store is at Moody 2 migrates it through the project's mapping models with only
    /// the model given (its current version set to Moody 5: the Moody 5 → 6 mapping model calls app code).
    @Test func seedingMigratesThroughTheFoundMappingModels() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try Self.moodyProject(in: folder)
        var bundle = try ModelBundle.load(from: model)
        bundle.currentVersionName = "Moody 5"
        let seed = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 5.moody"), into: folder)
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let existing = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 2.moody"), into: app)
        // The search's settings travel in the migration's options (`Seeding.seed(…, migration:)`).
        var migration = StoreMigration.Options(bundle: bundle)
        migration.modelURL = model
        let report = try Seeding.seed(
            default: seed, store: existing, options: FormatOptions(bundle: bundle), migration: migration)
        #expect(report.action == .migrated)
        #expect(report.migratedFrom == "Moody 2")
        #expect(report.version == "Moody 5")
        #expect(try MigrationFixtures.hashes(existing) == bundle.version(named: "Moody 5")?.entityVersionHashes)

        // Without the search, the Moody 2 → 3 hop is inferred, and Core Data's inference cannot make it.
        let again = try Fixtures.copyStore(
            Fixtures.corpus("\(Self.moodyStores)/Moody 2.moody"),
            into: try Fixtures.temporaryDirectory())
        defer { try? FileManager.default.removeItem(at: again.deletingLastPathComponent()) }
        migration.searchesForMappings = false
        let inferred = try Seeding.seed(
            default: seed, store: again, options: FormatOptions(bundle: bundle), migration: migration)
        // Core Data's own Moody 5 store of the same objects is what the mapping models make; inference makes another.
        let apple = CorpusMigrationTests.canonical(try MigrationFixtures.read(seed, bundle: bundle))
        #expect(CorpusMigrationTests.canonical(try MigrationFixtures.read(existing, bundle: bundle)) == apple)
        #expect(CorpusMigrationTests.canonical(try MigrationFixtures.read(again, bundle: bundle)) != apple)
        #expect(inferred.action == .migrated)
    }

    /// A mapping given with --mapping wins over the one the search found for the same hop, and the plan says so.
    @Test func aGivenMappingWinsOverAFoundOne() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try Self.moodyProject(in: folder)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 4.moody"), into: folder)
        var options = try Self.moodyOptions(model: model)
        let bundle = options.bundle
        let source = try #require(bundle.version(named: "Moody 4"))
        let destination = try #require(bundle.version(named: "Moody 5"))
        let text = MappingFileWriter.render(MappingInference.infer(from: source, to: destination).mapping, as: .yaml)
        let file = folder.appendingPathComponent("Moody4-Moody5.yaml")
        try Data(text.utf8).write(to: file)
        try options.loadMappings(from: [file])

        let report = try StoreMigration.plan(store: store, options: options, dryRun: false)
        #expect(report.plan.hops.map(\.file) == [file.displayPath, report.plan.hops.last?.file])
        #expect(report.plan.hops.last?.file?.hasSuffix("Moody 5-Moody 6.xcmappingmodel") == true)
        #expect(report.plan.notes.contains { $0.contains("Moody 4-Moody 5.xcmappingmodel is not used: a mapping given") })
        #expect(report.mappingSearch?.used.map { URL(fileURLWithPath: $0).lastPathComponent } == ["Moody 5-Moody 6.xcmappingmodel"])
    }

    /// Two different mapping models for one hop stop the plan naming both; the same mapping model reached twice (a
    /// copy, or the folder named again) counts once.
    @Test func twoFoundMappingModelsForOneHopAreNamed() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (project, model) = try Self.moodyProject(in: folder)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 4.moody"), into: folder)
        let options = try Self.moodyOptions(model: model)
        let original = project.appendingPathComponent("Mappings/Moody 4-Moody 5.xcmappingmodel")
        let copy = project.appendingPathComponent("Copy/Moody 4-Moody 5.xcmappingmodel")
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: original, to: copy)
        #expect(try StoreMigration.plan(store: store, options: options, dryRun: false).plan.isExecutable)

        // The copy made different: the Mood mapping takes only the moods rated above 0.
        let xml = copy.appendingPathComponent("xcmapping.xml")
        var text = try String(contentsOf: xml, encoding: .utf8)
        let mood = try #require(text.range(of: "<attribute name=\"sourcename\" type=\"string\">Mood</attribute>"))
        text.insert(
            contentsOf: "\n<attribute name=\"sourcefilterpredicatestring\" type=\"string\">rating &gt; 0</attribute>",
            at: mood.upperBound)
        try Data(text.utf8).write(to: xml)
        let error = #expect(throws: DecantError.self) {
            try StoreMigration.plan(store: store, options: options, dryRun: false)
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("two mapping models claim the hop Moody 4 → Moody 5") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("Copy/Moody 4-Moody 5.xcmappingmodel") == true)
        #expect(error?.message.contains("Mappings/Moody 4-Moody 5.xcmappingmodel") == true)
        // Naming the one to use settles it.
        var chosen = options
        try chosen.loadMappings(from: [original])
        let plan = try StoreMigration.plan(store: store, options: chosen, dryRun: false)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.notes.contains { $0.contains("Copy/Moody 4-Moody 5.xcmappingmodel is not used") }, "\(plan.plan.notes)")
    }

    /// CoreDataPlus ships its V2 → V3 mapping model twice, as the `.xcmappingmodel` and as the `.cdm` Xcode compiled
    /// from it: the search finds both, they are one mapping, and the store at V2 reaches V3 through it.
    @Test func aMappingModelAndItsCompiledCDMCountOnce() throws {
        let root = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(Fixtures.corpus("\(root)/Fixtures/SampleModel_V2.sqlite"), into: folder)
        let model = Fixtures.corpus("\(root)/SampleModel.xcdatamodeld")
        var options = StoreMigration.Options(
            bundle: try ModelBundle.load(from: model), destinationVersion: "SampleModel3")
        options.modelURL = model
        options.functions.registerPolicy(V2to3MakerPolicy(), as: "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        let report = try StoreMigration.plan(store: store, options: options)
        #expect(report.plan.isExecutable, "\(report.plan.problems)")
        let search = try #require(report.mappingSearch)
        #expect(search.found.map { URL(fileURLWithPath: $0).lastPathComponent } == ["V2toV3.cdm", "V2toV3.xcmappingmodel"])
        #expect(search.used.count == 1)
        #expect(report.plan.hops.map(\.isInferred) == [false])
        let output = folder.appendingPathComponent("V3.sqlite")
        let migrated = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(migrated.destinationVersion == "SampleModel3")
        #expect(migrated.written["Maker"] ?? 0 > 0, "\(migrated.written)")
    }

    /// A mapping model of another bundle (its hashes fit no two versions of this one, or it names another
    /// `.xcdatamodeld` whose version has the same name as one of this bundle's) is ignored with a note, never compiled
    /// against this bundle's entities.
    @Test func aMappingModelOfAnotherBundleIsIgnoredWithANote() throws {
        // XcodeGen's Model.xcmappingmodel maps App_iOS/Model.xcdatamodeld/Model → Model 2; this bundle also has a
        // version named Model, with other entities.
        var other = Entity(name: "Other")
        other.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        let version1 = ObjectModel(versionName: "Model", entities: [other], versionIdentifiers: [])
        var other2 = other
        other2.attributes.append(Attribute(name: "count", type: .integer64, isOptional: true))
        let version2 = ObjectModel(versionName: "Model 2", entities: [other2], versionIdentifiers: [])
        let bundle = MigrationFixtures.bundle("Mine", [version1, version2])
        var options = StoreMigration.Options(bundle: bundle)
        let foreign = Fixtures.corpus("yonaskolb__XcodeGen/Tests/Fixtures/TestProject/App_iOS/Model.xcmappingmodel")
        try options.loadMappings(from: [foreign])
        #expect(options.mappingModels.isEmpty)
        #expect(options.mappingNotes.count == 1)
        #expect(options.mappingNotes.first?.contains("Model.xcmappingmodel is ignored") == true, "\(options.mappingNotes)")

        // Beside the Moody bundle, CoreDataPlus's mapping model is another bundle's: the plan notes it and runs.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (project, model) = try Self.moodyProject(in: folder)
        try FileManager.default.copyItem(
            at: Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel"),
            to: project.appendingPathComponent("Mappings/V2toV3.xcmappingmodel"))
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 4.moody"), into: folder)
        let report = try StoreMigration.plan(store: store, options: try Self.moodyOptions(model: model), dryRun: false)
        #expect(report.plan.isExecutable, "\(report.plan.problems)")
        #expect(report.plan.notes.contains { $0.contains("V2toV3.xcmappingmodel is ignored") }, "\(report.plan.notes)")
        // The plan's text counts it in one line; --verbose names it.
        let document = PlanDocument(report: report, store: "Moody 4.moody")
        #expect(!document.text(verbose: false).contains("V2toV3.xcmappingmodel is ignored"), "\(document.text(verbose: false))")
        #expect(document.text(verbose: false).contains("  1 mapping model of other bundles ignored (--verbose names them)"))
        #expect(document.text(verbose: true).contains("V2toV3.xcmappingmodel is ignored"))
        #expect(!document.text(verbose: true).contains("other bundles ignored"))
        #expect(report.mappingSearch?.found.count == 5)
        #expect(report.mappingSearch?.used.count == 2)
    }

    /// A store past a mapping's hop (a CI batch hands every store the whole mappings folder) plans and migrates; the
    /// plan lists the unused mappings as notes.
    @Test func unusedMappingsAreNotes() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try NotesMigrationTests.v1Store(in: folder, bundle: bundle)
        let v2 = folder.appendingPathComponent("v2.sqlite")
        _ = try StoreMigration.migrate(
            store: v1, to: .file(v2), options: StoreMigration.Options(bundle: bundle, destinationVersion: "Notes 2"))
        let source = try #require(bundle.version(named: "Notes"))
        let destination = try #require(bundle.version(named: "Notes 2"))
        let file = try MappingFiles.parse(
            MappingFileWriter.render(MappingInference.infer(from: source, to: destination).mapping, as: .yaml),
            path: "mappings/Notes-Notes2.yaml")
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [file]
        let report = try StoreMigration.plan(store: v2, options: options)
        #expect(report.plan.isExecutable)
        #expect(report.plan.hops.map(\.name) == ["Notes 2 → Notes 3"])
        #expect(report.plan.notes.count == 1)
        #expect(report.plan.notes.first?.contains("mappings/Notes-Notes2.yaml maps Notes → Notes 2, which no hop") == true)
        #expect(PlanDocument(report: report, store: "v2.sqlite").text.contains("notes:\n  mappings/Notes-Notes2.yaml"))
        let output = folder.appendingPathComponent("v3.sqlite")
        #expect(try StoreMigration.migrate(store: v2, to: .file(output), options: options).hops == ["Notes 2 → Notes 3"])
        // At the destination already: the mapping is a note too.
        let upToDate = try StoreMigration.plan(store: output, options: options)
        #expect(upToDate.plan.isUpToDate)
        #expect(upToDate.plan.notes.first?.contains("is not used: the store is at Notes 3 already") == true)
    }

    /// Two mapping files for one hop are refused naming both; one file given twice counts once.
    @Test func twoMappingFilesForOneHopAreNamed() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try NotesMigrationTests.v1Store(in: folder, bundle: bundle)
        let source = try #require(bundle.version(named: "Notes"))
        let destination = try #require(bundle.version(named: "Notes 2"))
        let text = MappingFileWriter.render(MappingInference.infer(from: source, to: destination).mapping, as: .yaml)
        let first = folder.appendingPathComponent("a.yaml")
        let second = folder.appendingPathComponent("b.yaml")
        try Data(text.utf8).write(to: first)
        try Data(text.utf8).write(to: second)

        var once = StoreMigration.Options(bundle: bundle)
        try once.loadMappings(from: [first, first])
        try once.loadMappings(from: [URL(fileURLWithPath: folder.path + "/./a.yaml")])
        #expect(once.mappings.count == 1)
        #expect(try StoreMigration.plan(store: store, options: once, dryRun: false).plan.hops.first?.isInferred == false)

        var twice = StoreMigration.Options(bundle: bundle)
        try twice.loadMappings(from: [first, second])
        let error = #expect(throws: DecantError.self) {
            try StoreMigration.plan(store: store, options: twice, dryRun: false)
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("two mappings claim the same hop from Notes:") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("a.yaml (Notes → Notes 2) and") == true)
        #expect(error?.message.contains("b.yaml (Notes → Notes 2)") == true)
    }

    /// An Xcode mapping model is a complete mapping: an entity it maps no objects from loses them, and the plan's
    /// destructive changes say so as they do for inferred hops.
    @Test func aMappingModelHopNamesTheEntitiesItDrops() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, model) = try Self.moodyProject(in: folder)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 4.moody"), into: folder)
        var options = try Self.moodyOptions(model: model)
        options.searchesForMappings = false
        var loaded = MappingFiles.Loaded()
        try MappingFiles.loadAny(
            from: model.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Mappings/Moody 4-Moody 5.xcmappingmodel"),
            bundle: options.bundle, into: &loaded)
        var mapping = try #require(try MappingFiles.resolve(loaded, bundle: options.bundle).first)
        let dropped = try #require(mapping.entityMappings.first { $0.sourceEntity != nil && $0.kind != .remove })
        let droppedEntity = try #require(dropped.sourceEntity)
        mapping.entityMappings.removeAll { $0.name == dropped.name }
        options.mappingModels = [mapping]
        let report = try StoreMigration.plan(store: store, options: options, dryRun: false)
        let hop = try #require(report.plan.hops.first)
        #expect(!hop.isInferred)
        #expect(
            report.plan.destructiveChanges.contains(.entityRemoved(hop: hop.name, entity: droppedEntity)),
            "\(report.plan.destructiveChanges)")
    }
}
