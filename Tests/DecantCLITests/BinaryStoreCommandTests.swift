import DecantTestSupport
import Foundation
import Testing

/// `decant` on binary stores: Apple's, inspected without a model; converted without one, refused with advice; a
/// damaged copy refused with its place; Decant's own, converted and inspected against its model.
@Suite("decant on binary stores")
struct BinaryStoreCommandTests {
    @Test(.requiresDecantBinary, arguments: Fixtures.binaryStores)
    func inspectWithoutAModel(_ store: URL) throws {
        let text = try EndToEndTests.run(["inspect", store.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("Core Data binary store"))
        #expect(text.stdout.contains("a binary store carries no model"))
        let json = try EndToEndTests.run(["inspect", store.path, "--json"])
        #expect(json.status == 0)
        #expect(json.stdout.contains("\"format\" : \"binary\"") || json.stdout.contains("\"format\":\"binary\""))
        #expect(try EndToEndTests.validate(json.stdout) == "valid")
    }

    @Test(.requiresDecantBinary) func convertingWithoutAModelOrFromADamagedCopyExits65() throws {
        let store = try #require(Fixtures.binaryStores.first)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.sqlite")
        let noModel = try EndToEndTests.run(["convert", store.path, output.path])
        #expect(noModel.status == 65)
        #expect(noModel.stderr.contains("give its model with --model"))
        let damaged = folder.appendingPathComponent("damaged.dat")
        try Data(contentsOf: store).prefix(5000).write(to: damaged)
        let short = try EndToEndTests.run(["inspect", damaged.path])
        #expect(short.status == 65)
        #expect(short.stderr.contains(damaged.path))
        #expect(short.stderr.contains("outside the file"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["damaged.dat"])
    }

    @Test(.requiresDecantBinary) func decantsOwnStoreInspectsAgainstItsModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = Fixtures.samplesRoot.appendingPathComponent("Lessons.xcdatamodeld")
        let empty = folder.appendingPathComponent("Empty.binarystore")
        try Data().write(to: empty)
        let store = folder.appendingPathComponent("Lessons.binarystore")
        let converted = try EndToEndTests.run(
            ["convert", empty.path, store.path, "--model", notes.path, "--to", "binary"])
        #expect(converted.status == 0, "\(converted.stderr)")
        let report = try EndToEndTests.run(["inspect", store.path, "--model", notes.path])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("Core Data binary store"))
        #expect(report.stdout.contains("model:             matches"))
    }
}
