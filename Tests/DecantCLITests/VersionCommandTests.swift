import Decant
import DecantTestSupport
import Foundation
import Testing

/// `seed` with migrate's options, `--version-order`, and the version order `inspect` and `plan` print, through the
/// built binary.
@Suite("decant seed and --version-order", .serialized)
struct VersionCommandTests {

    /// `Typed.xcdatamodeld` in `folder`: versions named `names`, `count` typed String in the first and Integer 64
    /// in the others (each later version adds an attribute of its own, so their hashes differ).
    static func bundle(in folder: URL, names: [String] = ["Typed", "Typed 2"]) throws -> URL {
        try ModelBundleFiles.write(
            "Typed",
            versions: names.enumerated().map { position, version in
                let count = "<attribute name=\"count\" optional=\"YES\" attributeType=\"\(position == 0 ? "String" : "Integer 64")\"/>"
                let extra = (0..<position).map { "<attribute name=\"a\($0)\" optional=\"YES\" attributeType=\"String\"/>" }
                return (version, ModelBundleFiles.item(([count] + extra).joined(separator: "\n")))
            },
            in: folder)
    }

    /// A store of the bundle's version `name` with one item.
    static func store(at url: URL, bundle: URL, version name: String) throws {
        let loaded = try ModelBundle.load(from: bundle)
        let version = try #require(loaded.version(named: name))
        let writer = try SQLiteStoreWriter(creating: url, model: version)
        let layout = try #require(RecordLayout(entity: "Item", in: version))
        var batch = RecordBatch(layout: layout)
        let type = version.entity(named: "Item")?.attributes.first?.type
        batch.append(
            Record(
                entity: "Item", id: .primaryKey(1),
                values: [type == .string ? "7" : .integer(7)] + layout.attributes.dropFirst().map { _ in .null }))
        try writer.write(batch)
        try writer.finish()
    }

    @Test(.requiresDecantBinary) func aFailedSeedLeavesNoStoreAndAMappingMakesItRun() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.bundle(in: folder)
        let seed = folder.appendingPathComponent("Seed.sqlite")
        try Self.store(at: seed, bundle: bundle, version: "Typed")
        let destination = folder.appendingPathComponent("App.sqlite")
        let failed = try EndToEndTests.run(["seed", "--default", seed.path, "--store", destination.path, "--model", bundle.path])
        #expect(failed.status == 1, "\(failed.stdout)\(failed.stderr)")
        #expect(failed.stderr.contains("Item.count"))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let mapping = folder.appendingPathComponent("fix.yaml")
        try Data(
            "source: Typed\ndestination: Typed 2\nentities:\n  Item:\n    attributes:\n      count: 'integer($source.count)'\n"
                .utf8
        ).write(to: mapping)
        let seeded = try EndToEndTests.run([
            "seed", "--default", seed.path, "--store", destination.path, "--model", bundle.path, "--mapping", mapping.path,
        ])
        #expect(seeded.status == 0, "\(seeded.stdout)\(seeded.stderr)")
        #expect(seeded.stdout.contains("seeded from"))
        #expect(seeded.stdout.contains("migrated from Typed"))
        let inspected = try EndToEndTests.run(["inspect", destination.path, "--model", bundle.path])
        #expect(inspected.stdout.contains("matches Typed version Typed 2"))
    }

    @Test(.requiresDecantBinary) func versionOrderIsPrintedAndCanBeGiven() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Xcode's numbering: the version named like the bundle first, then 2 < 10.
        let bundle = try Self.bundle(in: folder, names: ["Typed", "Typed 2", "Typed 10"])
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Typed 10.xcdatamodel</string></dict></plist>
            """.utf8
        ).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let model = try EndToEndTests.run(["inspect", bundle.path])
        #expect(model.stdout.contains("version order: by name (Xcode's numbering): Typed, Typed 2, Typed 10"), "\(model.stdout)")
        let store = folder.appendingPathComponent("two.sqlite")
        try Self.store(at: store, bundle: bundle, version: "Typed 2")
        let plan = try EndToEndTests.run(["plan", store.path, "--model", bundle.path])
        #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("version Typed 2 → Typed 10"))
        #expect(plan.stdout.contains("path: hop by hop"))
        // Given the other way round, Typed 2 is the newest and the current Typed 10 older: refused as newer.
        let order = folder.appendingPathComponent("order.txt")
        try Data("# oldest first\nTyped\nTyped 10\nTyped 2\n".utf8).write(to: order)
        let given = try EndToEndTests.run(["inspect", bundle.path, "--version-order", order.path])
        #expect(given.stdout.contains("version order: as given: Typed, Typed 10, Typed 2"), "\(given.stdout)")
        let reversed = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--version-order", order.path])
        #expect(reversed.status == 64, "\(reversed.stdout)\(reversed.stderr)")
        #expect(reversed.stderr.contains("newer than Typed 10"))
        let down = try EndToEndTests.run([
            "plan", store.path, "--model", bundle.path, "--version-order", "Typed,Typed 10,Typed 2", "--to-version", "Typed 10",
            "--json",
        ])
        #expect(down.status == 0, "\(down.stdout)\(down.stderr)")
        #expect(down.stdout.contains(#""versionOrder" : "given""#))
        #expect(down.stdout.contains(#""path" : "single-step""#))
        #expect(try EndToEndTests.validate(down.stdout, schema: "plan") == "valid")
        let unknown = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--version-order", "Typed,Nope"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("names no version of Typed: Nope"))
    }
}
