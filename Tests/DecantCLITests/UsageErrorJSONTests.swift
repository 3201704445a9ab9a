import DecantTestSupport
import Foundation
import Testing

/// A usage error (an unknown option, a missing argument, a `validate()` refusal) with `--json` prints the JSON error
/// document on standard output as every other error does (issue 21), exit 64.
@Suite("usage errors with --json", .requiresDecantBinary)
struct UsageErrorJSONTests {
    /// The JSON error document a run printed on standard output.
    static func errorDocument(_ stdout: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(stdout)")
    }

    @Test(arguments: [
        ["migrate", "S.sqlite", "--json"],  // validate(): no --model
        ["convert", "a.json", "b.sqlite", "--bogus", "--json"],  // an unknown option
        ["plan", "--json"],  // a missing argument
        ["convert", "a.json", "b.sqlite", "--journal", "sideways", "--json"],  // a value no case spells
    ])
    func aUsageErrorWithJSONIsTheErrorDocument(arguments: [String]) throws {
        let run = try EndToEndTests.run(arguments)
        #expect(run.status == 64, "\(run.stderr)")
        let document = try Self.errorDocument(run.stdout)
        #expect(document["status"] as? Int == 64)
        #expect(document["code"] as? String == "usage")
        let message = try #require(document["message"] as? String)
        #expect(!message.isEmpty)
        #expect(Set(document.keys) == ["status", "code", "file", "place", "message", "cause"])
        // Standard error keeps ArgumentParser's message and usage, as without --json.
        #expect(run.stderr.contains("Error:"), "\(run.stderr)")
    }

    @Test func withoutJSONAUsageErrorPrintsNothingOnStandardOutput() throws {
        let run = try EndToEndTests.run(["migrate", "S.sqlite"])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty, "\(run.stdout)")
    }

    @Test func helpWithJSONIsStillHelp() throws {
        let run = try EndToEndTests.run(["convert", "--help", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("USAGE"), "\(run.stdout)")
        #expect(!run.stdout.hasPrefix("{"))
    }
}
