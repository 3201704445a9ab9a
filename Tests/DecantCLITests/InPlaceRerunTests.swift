import Decant
import DecantTestSupport
import Foundation
import Testing

/// `migrate --in-place` that CI can repeat: a second run after a successful one finds the store at the target,
/// exits 0, writes no backup and says so (it exited 73 because the first run's backup was there).
@Suite("migrate --in-place re-runs", .serialized)
struct InPlaceRerunTests {

    @Test(.requiresDecantBinary) func aSecondRunExits0AndWritesNoBackup() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let arguments = ["migrate", store.path, "--model", MigrationCommandTests.notes, "--in-place"]
        let first = try EndToEndTests.run(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        let backup = URL(fileURLWithPath: store.path + ".backup")
        let kept = try Data(contentsOf: backup)
        let migrated = try Data(contentsOf: store)
        let second = try EndToEndTests.run(arguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("already at Notes 3; nothing to do, no backup written"))
        #expect(!second.stdout.contains("original kept at"))
        #expect(try Data(contentsOf: backup) == kept)
        #expect(try Data(contentsOf: store) == migrated)
        let json = try EndToEndTests.run(arguments + ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(#""action" : "unchanged""#))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("backup") }
        #expect(names == ["Notes.sqlite.backup"])
    }
}
