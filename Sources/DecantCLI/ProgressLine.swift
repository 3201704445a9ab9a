import Foundation

/// The one-line progress display on standard error: entity, objects done, rate. Shown only when standard error is
/// a terminal and neither `--quiet` nor `--json` is given; without colour or bold when `NO_COLOR` is set.
final class ProgressLine {
    private let enabled: Bool
    private let styled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(quiet: Bool, json: Bool) {
        enabled = !quiet && !json && isatty(STDERR_FILENO) == 1
        styled = ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// Redraws the line at most ten times a second.
    func update(entity: String, written: Int) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        let seconds = max(now.timeIntervalSince(start), 0.001)
        let rate = Int(Double(written) / seconds)
        let name = styled ? "\u{1B}[1m\(entity)\u{1B}[0m" : entity
        write("\r\u{1B}[2K\(name)  \(written.formatted()) objects  \(rate.formatted())/s")
        drawn = true
    }

    /// Clears the line before the command prints its result.
    func finish() {
        guard enabled, drawn else { return }
        drawn = false
        write("\r\u{1B}[2K")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
