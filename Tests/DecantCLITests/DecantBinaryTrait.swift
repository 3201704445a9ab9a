import DecantTestSupport
import Foundation
import Testing

/// The built `decant` binary is a precondition of the CLI tests, not an option: a test (or suite) with this trait
/// fails when `.build/debug/decant` is missing, or older than a file under `Sources/` (a plain `swift test` after an
/// edit does not relink it), instead of switching itself off or testing old code. `make test` builds it
/// (`swift build --product decant`) before running the tests.
struct RequiresDecantBinary: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's scope runs its tests, each of which checks for itself.
        if testCase != nil || !test.isSuite {
            let problem = EndToEndTests.binaryProblem
            try #require(problem == nil, "\(problem ?? "")")
        }
        try await function()
    }
}

extension Trait where Self == RequiresDecantBinary {
    /// Fails the test when the `decant` binary has not been built since the sources last changed (see
    /// ``RequiresDecantBinary``).
    static var requiresDecantBinary: Self { RequiresDecantBinary() }
}

extension Tag {
    /// A suite that takes minutes (crash safety, fuzz, the policy sample's build): smaller in `make test` (the
    /// policy sample not at all), in full in `make test-all` (see `TestScale`).
    @Tag static var slow: Self
}
