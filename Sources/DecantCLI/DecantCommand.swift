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
        let options = arguments.prefix(while: { $0 != "--" })
        // `--version` is Decant's version alone: with anything else it is a mistake (the old spelling of
        // --model-version), not a green step that printed a version and wrote nothing.
        if options.contains("--version"), arguments != ["--version"] {
            exitWithUsage(
                "--version prints Decant's version and takes nothing else; a model's version is --model-version "
                    + "(inspect, convert, validate, seed) or --to-version/--from-version (plan, migrate, infer-mapping)",
                json: options.contains("--json"))
        }
        removingStagedOutputsOnInterrupt()
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            // A command's validation runs before ArgumentParser's check for unknown options, and a value of an
            // unknown option is taken for an argument: name the option itself, with its nearest spelling.
            if let unknown = unknownOption(in: Array(options)) {
                exitWithUsage(unknown, json: options.contains("--json"))
            }
            if options.contains("--json") {
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

    /// The signal sources kept for the life of the process.
    nonisolated(unsafe) static var interruptSources: [any DispatchSourceSignal] = []

    /// On SIGINT (Ctrl-C) or SIGTERM (a CI job cancelled), removes what the run staged beside its outputs, which a
    /// signal would otherwise leave (`.NAME.decant-…`, hundreds of megabytes for a large store), then exits 130 or
    /// 143 as a shell reports a process those signals end. The outputs and inputs are as they were.
    static func removingStagedOutputsOnInterrupt() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                DestinationLease.removeStagedOutputs()
                Foundation.exit(128 + signalNumber)
            }
            source.resume()
            interruptSources.append(source)
        }
    }

    /// Reports a usage error (`Error: usage: …` on standard error, with `json` the error document) and exits 64.
    static func exitWithUsage(_ message: String, json: Bool) -> Never {
        let error = DecantError(.usage, message)
        FileHandle.standardError.write(Data("Error: \(error.description)\n".utf8))
        if json, let document = try? ErrorDocument(error).jsonDocument() {
            printOut(String(decoding: document, as: UTF8.self))
        }
        Foundation.exit(DecantError.Code.usage.exitCode)
    }

    /// The first `--option` of `options` that the command they name does not have, as a message naming its nearest
    /// spelling among the command's options; nil when every one is known (or no command is named).
    static func unknownOption(in options: [String]) -> String? {
        guard let name = options.first,
            let subcommand = configuration.subcommands.first(where: { $0._commandName == name })
        else { return nil }
        let help = helpMessage(for: subcommand, columns: 1_000)
        var known: Set<String> = ["--help", "--version"]
        var rest = Substring(help)
        while let range = rest.range(of: #"--[A-Za-z0-9][A-Za-z0-9-]*"#, options: .regularExpression) {
            known.insert(String(rest[range]))
            rest = rest[range.upperBound...]
        }
        for option in options.dropFirst() where option.hasPrefix("--") && option.count > 2 {
            let spelled = String(option.prefix { $0 != "=" })
            guard !known.contains(spelled) else { continue }
            let hint = Spelling.nearest(to: spelled, among: known.sorted(), tolerance: max(3, spelled.count / 2))
            return "\(name) has no option \(spelled)" + (hint.map { " (did you mean \($0)?)" } ?? "")
                + "; see 'decant \(name) --help'"
        }
        return nil
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
