import Decant
import DecantTestSupport
import Foundation
import Testing

/// Which versions are older (Xcode's numbering, a given order, or none), which version a store is at when two have
/// its hashes, and when a migration takes Core Data's single step instead of hopping.
@Suite("Version order and path")
struct VersionOrderTests {
    // MARK: Bundles on disk

    /// Writes `Name.xcdatamodeld` with one version per name, each holding `Item{title}` plus `extra` attributes for
    /// the version at that position (so each version has its own hashes), the last current.
    static func writeBundle(_ name: String, versions: [String], in folder: URL, current: String? = nil) throws -> URL {
        try ModelBundleFiles.write(
            name,
            versions: versions.enumerated().map { position, version in
                let title = "<attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>"
                let extra = (0..<position).map { "<attribute name=\"a\($0)\" optional=\"YES\" attributeType=\"String\"/>" }
                return (version, ModelBundleFiles.item(([title] + extra).joined(separator: "\n")))
            },
            current: current, in: folder)
    }

    /// A store of `version` with three items.
    static func store(at url: URL, version: ObjectModel) throws {
        try MigrationFixtures.writeStore(
            at: url, model: version,
            records: (1...3).map { MigrationFixtures.record("Item", Int64($0), in: version, ["title": .string("item \($0)")]) })
    }

    @Test func xcodesNumberingPutsTheVersionNamedLikeTheBundleFirst() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let numbers = (2...13).map(String.init)
        let url = try Self.writeBundle("Model", versions: ["Model"] + numbers, in: folder)
        let bundle = try ModelBundle.load(from: url)
        #expect(bundle.order == .byName)
        #expect(bundle.versions.map(\.versionName) == ["Model"] + numbers)
        #expect(bundle.currentVersion?.versionName == "13")
        // `Model 2` < `Model 10`, the unnumbered first; dotted numbers compare part by part.
        #expect(
            VersionOrder.byName(["Notes 10", "Notes 2", "Notes"], bundleName: "Other").names == ["Notes", "Notes 2", "Notes 10"])
        #expect(VersionOrder.byName(["1.10.0", "1.9.0", "1.2.0"], bundleName: "App").names == ["1.2.0", "1.9.0", "1.10.0"])
        #expect(VersionOrder.byName(["1.10.0", "1.9.0"], bundleName: "App").order == .byName)
        // The version named like the bundle, then one other: in order, whatever its name.
        #expect(VersionOrder.byName(["New", "Migration"], bundleName: "Migration") == (["Migration", "New"], .byName))
        #expect(VersionOrder.byName(["Old", "New"], bundleName: "Migration").order == .unknown)
        // A bundle renamed over the years has no order by name.
        let renamed = VersionOrder.byName(
            ["ArtsyPartner 5", "ArtsyPartner 6", "ArtsyFolio v2.6.0", "ArtsyFolio v2.7.0"], bundleName: "ArtsyFolio")
        #expect(renamed.order == .unknown)
    }

    @Test func aStoreOfTheFirstVersionMigratesHopByHopToTheLastNumbered() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeBundle("Model", versions: ["Model", "2", "3", "10"], in: folder)
        let bundle = try ModelBundle.load(from: url)
        let first = try #require(bundle.version(named: "Model"))
        let store = folder.appendingPathComponent("v1.sqlite")
        try Self.store(at: store, version: first)
        let output = folder.appendingPathComponent("v10.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        #expect(report.sourceVersion == "Model")
        #expect(report.destinationVersion == "10")
        #expect(report.hops == ["Model → 2", "2 → 3", "3 → 10"])
        #expect(try MigrationFixtures.hashes(output) == bundle.version(named: "10")?.entityVersionHashes)
        let plan = try StoreMigration.plan(store: store, options: .init(bundle: bundle), dryRun: false)
        #expect(plan.plan.path == .hopByHop)
        #expect(PlanDocument(report: plan, store: "v1.sqlite").text.contains("version order: by name"))
    }

    @Test func aStoreNewerThanTheCurrentVersionIsRefusedUnlessToNamesTheOlderOne() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeBundle("Model", versions: ["Model", "Model 2", "Model 3"], in: folder, current: "Model 2")
        let bundle = try ModelBundle.load(from: url)
        let newest = try #require(bundle.version(named: "Model 3"))
        let store = folder.appendingPathComponent("v3.sqlite")
        try Self.store(at: store, version: newest)
        let output = folder.appendingPathComponent("out.sqlite")
        let error = #expect(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("newer than Model 2") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("--to-version Model 2") == true)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // Asked for with --to-version: Core Data's single step down, dropping what Model 2 lacks.
        let down = try StoreMigration.migrate(
            store: store, to: .file(output), options: .init(bundle: bundle, destinationVersion: "Model 2"))
        #expect(down.hops == ["Model 3 → Model 2"])
        #expect(try MigrationFixtures.hashes(output) == bundle.version(named: "Model 2")?.entityVersionHashes)
        let plan = try MigrationPlan(bundle: bundle, source: newest, to: "Model 2")
        #expect(plan.destructiveChanges.map(\.description) == ["Model 3 → Model 2: Item.a1 values are dropped"])
    }

    @Test func versionsWithNoOrderMigrateInOneStepToTheCurrentVersion() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = ["ArtsyPartner 5", "ArtsyFolio v2.6.0", "ArtsyFolio v2.7.0"]
        let url = try Self.writeBundle("ArtsyFolio", versions: names, in: folder, current: "ArtsyFolio v2.7.0")
        let bundle = try ModelBundle.load(from: url)
        #expect(bundle.order == .unknown)
        #expect(bundle.currentVersion?.versionName == "ArtsyFolio v2.7.0")
        let old = try #require(bundle.version(named: "ArtsyPartner 5"))
        let store = folder.appendingPathComponent("old.sqlite")
        try Self.store(at: store, version: old)
        let output = folder.appendingPathComponent("new.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        #expect(report.hops == ["ArtsyPartner 5 → ArtsyFolio v2.7.0"])
        #expect(try MigrationFixtures.read(output, bundle: bundle)["Item"]?.count == 3)
        let plan = try MigrationPlan(bundle: bundle, source: old)
        guard case .singleStep(let reason) = plan.path else {
            Issue.record("expected a single step, got \(plan.path)")
            return
        }
        #expect(reason.contains("order of ArtsyFolio's versions is unknown"))
        // A given order restores hops.
        let ordered = try bundle.ordered(as: names)
        #expect(try MigrationPlan(bundle: ordered, source: old).hops.map(\.name) == [
            "ArtsyPartner 5 → ArtsyFolio v2.6.0", "ArtsyFolio v2.6.0 → ArtsyFolio v2.7.0",
        ])
        let wrong = #expect(throws: DecantError.self) { try bundle.ordered(as: ["ArtsyPartner 5", "Nope"]) }
        #expect(wrong?.code == .usage)
        #expect(wrong?.message.contains("names no version of ArtsyFolio: Nope") == true)
    }

    // MARK: One version choice

    /// V1 and V2 differ only in their version identifiers (the same entity hashes); V3 adds an attribute.
    static func twins() -> ModelBundle {
        func item(_ extra: Bool) -> Entity {
            var item = Entity(name: "Item")
            item.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
            if extra { item.attributes.append(Attribute(name: "note", type: .string, isOptional: true)) }
            return item
        }
        return MigrationFixtures.bundle(
            "Twins",
            [
                ObjectModel(versionName: "V1", entities: [item(false)], versionIdentifiers: ["1"]),
                ObjectModel(versionName: "V2", entities: [item(false)], versionIdentifiers: ["2"]),
                ObjectModel(versionName: "V3", entities: [item(true)], versionIdentifiers: ["3"]),
            ])
    }

    @Test func theStoresVersionIdentifiersChooseBetweenVersionsWithEqualHashes() throws {
        let bundle = Self.twins()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("v1.sqlite")
        try Self.store(at: store, version: bundle.versions[0])
        // inspect, validate, plan and migrate all take V1, the version the identifiers name.
        let inspected = try StoreReport(store: store, path: "v1.sqlite", bundle: bundle)
        #expect(inspected.model?.matchedVersion == "V1")
        #expect(inspected.model?.choice?.contains("V1, V2 have the store's entity hashes; V1 is taken") == true)
        let validated = try StoreValidation.validate(store: store, options: .init(bundle: bundle))
        #expect(validated.modelVersion == "V1")
        let planned = try StoreMigration.plan(store: store, options: .init(bundle: bundle), dryRun: false)
        #expect(planned.plan.sourceVersion == "V1")
        #expect(planned.plan.hops.map(\.name) == ["V1 → V2", "V2 → V3"])
        #expect(PlanDocument(report: planned, store: "v1.sqlite").text.contains("V1 is taken"))
        let output = folder.appendingPathComponent("v3.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        #expect(report.sourceVersion == "V1")
        #expect(report.sourceChoice?.contains("V1 is taken") == true)
        // To V2, which has the same hashes: nothing to migrate, and the plan says why.
        let twin = try MigrationPlan(bundle: bundle, source: bundle.versions[0], to: "V2")
        #expect(twin.isUpToDate)
        #expect(twin.sourceChoice?.hasSuffix("the destination V2 has the same hashes: nothing to migrate") == true)
        // Identifiers that name neither: the later version, everywhere.
        var unnamed = bundle.versions[0]
        unnamed.versionIdentifiers = ["other"]
        let other = folder.appendingPathComponent("other.sqlite")
        try Self.store(at: other, version: unnamed)
        #expect(try StoreReport(store: other, path: "other", bundle: bundle).model?.matchedVersion == "V2")
        #expect(try StoreValidation.validate(store: other, options: .init(bundle: bundle)).modelVersion == "V2")
        #expect(try StoreMigration.plan(store: other, options: .init(bundle: bundle)).plan.sourceVersion == "V2")
    }

    // MARK: Core Data's single step

    /// V1 `Artwork{title}`, `Location{name}`; V2 adds `Artwork.place` → `Artist` (new); V3 points `place` at
    /// `Location` and drops `Artist`. The hop V2 → V3 cannot be inferred (no Artist becomes a Location), the single
    /// step V1 → V3 can (the relationship is new there).
    static func retargeted() -> ModelBundle {
        func model(_ name: String, place: String?) -> ObjectModel {
            var artwork = Entity(name: "Artwork")
            artwork.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
            var location = Entity(name: "Location")
            location.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            var entities = [artwork, location]
            if let place {
                entities[0].relationships = [Relationship(name: "place", destination: place, inverse: "artworks")]
                let artworks = Relationship(name: "artworks", destination: "Artwork", inverse: "place", toMany: true)
                if place == "Location" {
                    entities[1].relationships = [artworks]
                } else {
                    var artist = Entity(name: place)
                    artist.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
                    artist.relationships = [artworks]
                    entities.append(artist)
                }
            }
            return ObjectModel(versionName: name, entities: entities)
        }
        return MigrationFixtures.bundle(
            "Folio", [model("V1", place: nil), model("V2", place: "Artist"), model("V3", place: "Location")])
    }

    @Test func aHopThatCannotBeInferredGivesWayToCoreDatasSingleStep() throws {
        let bundle = Self.retargeted()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("v1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Artwork", 1, in: v1, ["title": "Dawn"]),
                MigrationFixtures.record("Location", 1, in: v1, ["name": "Paris"]),
            ])
        // Hop by hop, V2 → V3 stops.
        let hop = MappingInference.infer(from: bundle.versions[1], to: bundle.versions[2])
        #expect(hop.problems.contains { $0.message.contains("which no Artist object becomes") })
        let plan = try MigrationPlan(bundle: bundle, source: v1)
        #expect(plan.isExecutable)
        #expect(plan.hops.map(\.name) == ["V1 → V3"])
        guard case .singleStep(let reason) = plan.path else {
            Issue.record("expected a single step, got \(plan.path)")
            return
        }
        #expect(reason.contains("hop V2 → V3 cannot be inferred because Artwork.place: pointed at Artist"))
        let output = folder.appendingPathComponent("v3.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        #expect(report.hops == ["V1 → V3"])
        #expect(report.singleStepReason?.hasPrefix("hop V2 → V3 cannot be inferred") == true)
        let read = try MigrationFixtures.read(output, bundle: bundle)
        #expect(read["Artwork"]?.count == 1)
        #expect(read["Location"]?.count == 1)
        let text = PlanDocument(
            report: try StoreMigration.plan(store: store, options: .init(bundle: bundle)), store: "v1.sqlite"
        ).text
        #expect(text.contains("path: single step (as Core Data's automatic migration): hop V2 → V3 cannot be inferred"))
    }

    /// In Core Data's single step, as hop by hop, a mapping no hop uses is a note, not an error; two mappings that
    /// claim one hop stop the plan before any path is chosen.
    @Test func theSingleStepNotesUnusedMappingsAndRefusesTwoForOneHop() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = ["ArtsyPartner 5", "ArtsyFolio v2.6.0", "ArtsyFolio v2.7.0"]
        let url = try Self.writeBundle("ArtsyFolio", versions: names, in: folder, current: "ArtsyFolio v2.7.0")
        let unordered = try ModelBundle.load(from: url)
        let old = try #require(unordered.version(named: "ArtsyPartner 5"))
        let later = ExplicitMapping(source: "ArtsyFolio v2.6.0", destination: "ArtsyFolio v2.7.0", path: "later.yaml")
        let plan = try MigrationPlan(bundle: unordered, source: old, mappings: [later])
        #expect(plan.hops.map(\.name) == ["ArtsyPartner 5 → ArtsyFolio v2.7.0"])
        #expect(plan.notes == [
            "later.yaml maps ArtsyFolio v2.6.0 → ArtsyFolio v2.7.0, which no hop of this migration uses "
                + "(hops: ArtsyPartner 5 → ArtsyFolio v2.7.0); not used"
        ])
        let twice = [
            ExplicitMapping(source: "ArtsyPartner 5", destination: "ArtsyFolio v2.7.0", path: "a.yaml"),
            ExplicitMapping(source: "ArtsyPartner 5", destination: "ArtsyFolio v2.6.0", path: "b.yaml"),
        ]
        let clash = #expect(throws: DecantError.self) { try MigrationPlan(bundle: unordered, source: old, mappings: twice) }
        #expect(clash?.code == .usage)
        #expect(clash?.message.contains("two mappings claim the same hop from ArtsyPartner 5: a.yaml") == true)

        // A hop that cannot be inferred gives way to the single step; the mapping for other versions is a note there.
        let bundle = Self.retargeted()
        let other = ExplicitMapping(source: "Other", destination: "Other 2", path: "other.yaml")
        let step = try MigrationPlan(bundle: bundle, source: bundle.versions[0], mappings: [other])
        #expect(step.hops.map(\.name) == ["V1 → V3"])
        #expect(step.isExecutable)
        #expect(step.notes == ["other.yaml maps Other → Other 2, which no hop of this migration uses (hops: V1 → V3); not used"])
    }

    @Test func aRelationshipPointedAtAnotherEntityStartsEmptyInTheSingleStep() throws {
        let full = Self.retargeted()
        let bundle = MigrationFixtures.bundle("Folio", [full.versions[1], full.versions[2]])
        let v2 = bundle.versions[0]
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("v2.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v2,
            records: [
                MigrationFixtures.record("Artwork", 1, in: v2, ["title": "Dawn"], relationships: ["place": .toOne(.pk("Artist", 1))]),
                MigrationFixtures.record("Location", 1, in: v2, ["name": "Paris"]),
                MigrationFixtures.record("Artist", 1, in: v2, ["name": "Monet"], relationships: ["artworks": .viaInverse]),
            ])
        let plan = try MigrationPlan(bundle: bundle, source: v2)
        #expect(plan.isExecutable)
        #expect(plan.destructiveChanges.contains(
            .relationshipEmptied(
                hop: "V2 → V3", entity: "Artwork", relationship: "place",
                reason: "pointed at Artist, now at Location, which no Artist object becomes")))
        #expect(plan.destructiveChanges.contains(.entityRemoved(hop: "V2 → V3", entity: "Artist")))
        let output = folder.appendingPathComponent("v3.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(output), options: .init(bundle: bundle))
        let v3 = bundle.versions[1]
        let artworks = try #require(try MigrationFixtures.read(output, bundle: bundle)["Artwork"])
        #expect(artworks.map { MigrationFixtures.value($0, "title", model: v3) } == [.string("Dawn")])
        #expect(artworks.map { MigrationFixtures.relationship($0, "place", model: v3) } == [.toOne(nil)])
    }
}
