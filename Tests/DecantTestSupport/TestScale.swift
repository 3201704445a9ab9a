import Foundation

/// How much of the slow suites (crash safety, fuzz, the policy sample's build) a run does. `make test` runs them
/// small enough to keep the suite well inside CI's limit; `make test-all` sets `DECANT_FULL_TESTS=1` and runs them in
/// full. A suite's own variable (`DECANT_CRASH_MOMENTS`, `DECANT_FUZZ_COUNT`) wins over both.
public enum TestScale {
    static let environment = ProcessInfo.processInfo.environment

    /// Whether the slow suites run in full (`DECANT_FULL_TESTS=1`).
    public static var isFull: Bool { environment["DECANT_FULL_TESTS"] == "1" }

    /// Whether the tests run under CI (`CI=true`, as CI services set it): what `make test` promised to install must
    /// then be there.
    public static var isCI: Bool { ["true", "1"].contains(environment["CI"]?.lowercased() ?? "") }

    /// `variable`'s value when set (decimal or `0x` hex), else `full` or `quick` by ``isFull``.
    public static func count(_ variable: String, quick: Int, full: Int) -> Int {
        if let text = environment[variable], let value = parse(text) { return value }
        return isFull ? full : quick
    }

    static func parse(_ text: String) -> Int? {
        text.hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
    }
}

