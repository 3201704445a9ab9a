import ArgumentParser
import Logging

/// Flags every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Show the causes of errors. Repeat for more detail.")
    var verbose: Int

    @Flag(help: "Print one JSON document on standard output instead of text.")
    var json = false

    @Flag(name: .shortAndLong, help: "No progress display on standard error.")
    var quiet = false

    /// A logger writing to standard error: warnings by default, then info, debug and trace with each `-v`.
    func makeLogger(label: String) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = [.warning, .info, .debug, .trace][min(verbose, 3)]
        return logger
    }
}
