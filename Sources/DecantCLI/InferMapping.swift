import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct InferMapping: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "infer-mapping",
            abstract: "Write the mapping Decant infers between two versions, as an editable mapping file.",
            discussion: """
                Every entity and property is listed with its value expression, so the file, given back to plan or \
                migrate with --mapping, reproduces the inferred migration; edit it where inference is not what you \
                want. YAML by default, JSON when --output ends in .json or with --format json. Changes inference \
                refuses are listed on standard error (and as comments in YAML) and the command exits 1. With --json, \
                standard output holds one JSON document (the hop, the file and the refusals), so the mapping file \
                goes to --output.
                """
        )

        @Option(name: .long, help: "The model bundle (.xcdatamodeld or .momd).")
        var model: String

        @Option(name: .customLong("from-version"), help: "The source version's name.")
        var sourceVersion: String

        @Option(name: .customLong("to-version"), help: "The destination version's name.")
        var destinationVersion: String

        @Option(name: .long, help: "Write the file here instead of standard output.")
        var output: String?

        @Option(name: .long, help: "yaml or json.")
        var format: String?

        @Flag(name: .shortAndLong, help: "Show the causes of errors.")
        var verbose: Int

        @Flag(help: "Print one JSON document on standard output instead of text (the mapping file goes to --output).")
        var json = false

        func validate() throws {
            if json && output == nil {
                throw ValidationError("--json prints its document on standard output: give the mapping file with --output FILE")
            }
        }

        func run() throws {
            try reportingErrors(verbose: verbose, json: json) {
                let bundle = try ModelBundle.load(modelOrStore: URL(fileURLWithPath: model))
                let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
                guard let source = bundle.version(named: sourceVersion) else {
                    throw DecantError(.usage, "\(bundle.name) has no version \(sourceVersion) (it has \(names))")
                }
                guard let destination = bundle.version(named: destinationVersion) else {
                    throw DecantError(.usage, "\(bundle.name) has no version \(destinationVersion) (it has \(names))")
                }
                let syntax: MappingFileWriter.Syntax
                if let format {
                    guard let named = MappingFileWriter.Syntax(rawValue: format.lowercased()) else {
                        throw DecantError(.usage, "unknown mapping file format \(format) (yaml, json)")
                    }
                    syntax = named
                } else {
                    syntax = MappingFileWriter.Syntax(path: output ?? "")
                }
                let result = MappingInference.infer(from: source, to: destination)
                var text = MappingFileWriter.render(result.mapping, as: syntax)
                if syntax == .yaml && !result.problems.isEmpty {
                    text = result.problems.map { "# CANNOT INFER: \($0)" }.joined(separator: "\n") + "\n" + text
                }
                if let output {
                    // Staged beside the file and renamed into place: 73 when it cannot be created, 74 when writing
                    // it fails.
                    try DestinationLease(destination: URL(fileURLWithPath: output), displayPath: output)
                        .write(Data(text.utf8), what: "mapping file")
                } else {
                    FileHandle.standardOutput.write(Data(text.utf8))
                }
                for problem in result.problems {
                    FileHandle.standardError.write(Data("cannot infer: \(problem)\n".utf8))
                }
                if json, let output {
                    let document = InferredMappingDocument(
                        source: sourceVersion, destination: destinationVersion, output: output,
                        format: syntax.rawValue, result: result)
                    printOut(String(decoding: try document.jsonDocument(), as: UTF8.self))
                }
                if !result.problems.isEmpty { throw ExitCode(1) }
            }
        }
    }
}
