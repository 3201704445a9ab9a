import Decant
import DecantTestSupport
import Foundation
import Testing

/// Output problems are found before any work, with exit 73, naming the output as typed (never the hidden staging
/// name): a missing folder, a folder given as the file, a file where the folder should be. Through the binary, for
/// migrate, seed and convert (the check is the library's, `DestinationLease.checkCanCreate`).
@Suite("output checks before any work", .serialized)
struct OutputCheckTests {

    @Test(.requiresDecantBinary) func outputProblemsExit73BeforeAnyWork() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = MigrationCommandTests.notes
        let aFolder = folder.appendingPathComponent("Out")
        try FileManager.default.createDirectory(at: aFolder, withIntermediateDirectories: false)
        let aFile = folder.appendingPathComponent("plain.txt")
        try Data("x".utf8).write(to: aFile)
        let missing = folder.appendingPathComponent("missing/dir/x.sqlite").path
        let underAFile = aFile.appendingPathComponent("x.sqlite").path
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        let cases: [(arguments: [String], shown: String, says: String)] = [
            (["migrate", store.path, "--model", notes, "--output", missing], missing, "folder does not exist"),
            (
                ["migrate", store.path, "--model", notes, "--output", aFolder.path, "--rejects", rejects.path],
                aFolder.path, "the output is a folder"
            ),
            (["migrate", store.path, "--model", notes, "--output", underAFile], underAFile, "is not a folder"),
            // (`seed` makes a missing destination folder, as an app's first run does: CIStepTests.)
            (["seed", "--default", store.path, "--store", aFolder.path], aFolder.path, "the output is a folder"),
            (["convert", store.path, missing], missing, "folder does not exist"),
            (["convert", store.path, aFolder.path], aFolder.path, "the output is a folder"),
        ]
        for (arguments, shown, says) in cases {
            let run = try EndToEndTests.run(arguments)
            #expect(run.status == 73, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(shown), "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(says), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains(".decant-"), "\(arguments): \(run.stderr)")
        }
        // Nothing was made: no rejects file (the migration never ran), the folder given as the file is empty.
        #expect(!FileManager.default.fileExists(atPath: rejects.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: aFolder.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing").path))
    }
}
