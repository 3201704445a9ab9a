public import Foundation
public import Testing

/// Graphviz's `dot`, found on `PATH` (not at a fixed place). `make test` installs it (`make deps`) and says so with
/// `DECANT_DEPS_INSTALLED=1`; there, and under CI, a missing `dot` fails the tests that render with it instead of
/// switching them off.
public enum Graphviz {
    /// `dot` on `PATH`, or nil.
    public static let dot: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").lazy
            .map { URL(fileURLWithPath: String($0), isDirectory: true).appendingPathComponent("dot") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether the run promised Graphviz: under `make test` (`DECANT_DEPS_INSTALLED=1`) or CI.
    public static var isPromised: Bool {
        TestScale.isCI || ProcessInfo.processInfo.environment["DECANT_DEPS_INSTALLED"] == "1"
    }

    /// Whether a test that renders with `dot` runs: it is there, or it was promised (and the test then fails on
    /// `try #require(Graphviz.dot)`).
    public static var shouldRun: Bool { dot != nil || isPromised }

    /// What a skipped test says, so that a plain `swift test` without Graphviz shows the skip and why, rather than
    /// passing quietly without rendering anything.
    public static let skipReason: Comment =
        "Graphviz's `dot` is not on PATH: install graphviz, or run make test (make deps installs it; then a missing dot fails)"
}
