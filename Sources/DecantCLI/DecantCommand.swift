import ArgumentParser
import Decant
import Foundation

@main
struct DecantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decant",
        abstract: "Read, convert and migrate Core Data models and stores on Linux.",
        discussion: """
            Exit codes: 0 ok, 1 ran but found problems, 64 usage, 65 bad input data, 66 input missing, 70 internal \
            error, 73 cannot create output, 74 I/O error.
            """,
        version: decantVersion,
        subcommands: [
            Inspect.self, Convert.self, Plan.self, Migrate.self, Validate.self, InferMapping.self, Seed.self, Lock.self,
        ]
    )

    /// `decant` alone names no command: a usage error, so the help goes to standard error and the exit code is 64
    /// (`decant --help` and `decant help` still print it on standard output and exit 0).
    func run() throws {
        FileHandle.standardError.write(Data(Self.helpMessage().utf8))
        throw ExitCode(64)
    }
}
