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

    /// Parses and runs the command as ArgumentParser's `main()` does, and with `--json` prints a usage error (exit
    /// 64: an unknown option, a missing argument, a `validate()` refusal) as the JSON error document
    /// (`schemas/error.schema.json`) too, as every error the commands themselves report: a script that passes
    /// `--json` always gets JSON on standard output. Help and `--version` are not errors and print as they do.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            if arguments.prefix(while: { $0 != "--" }).contains("--json") {
                printUsageErrorDocument(error)
            }
            exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    /// Prints `error` as the JSON error document when it is a usage error (exit 64); nothing otherwise.
    static func printUsageErrorDocument(_ error: any Error) {
        guard exitCode(for: error).rawValue == DecantError.Code.usage.exitCode else { return }
        let usage = DecantError(.usage, message(for: error))
        if let document = try? ErrorDocument(usage).jsonDocument() {
            printOut(String(decoding: document, as: UTF8.self))
        }
    }

    /// `decant` alone names no command: a usage error, so the help goes to standard error and the exit code is 64
    /// (`decant --help` and `decant help` still print it on standard output and exit 0).
    func run() throws {
        FileHandle.standardError.write(Data(Self.helpMessage().utf8))
        throw ExitCode(64)
    }
}
