import ArgumentParser
import Decant
import DecantFormats
import Foundation

extension DecantCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Describe a model or a store.",
            discussion: """
                For a model (.xcdatamodeld, .xcdatamodel, .momd, .mom): its versions, the current version, and per \
                version the identifiers, the model checksum and every entity's version hash (base64) with its \
                attribute and relationship counts.
                """
        )

        @Argument(help: "The model or store to describe.")
        var path: String

        @OptionGroup var options: GlobalOptions

        func run() throws {
            try reportingErrors(verbose: options.verbose) {
                let bundle = try ModelBundle.load(from: URL(fileURLWithPath: path))
                let report = ModelReport(bundle: bundle, path: path)
                if options.json {
                    printOut(String(decoding: try report.jsonData(), as: UTF8.self))
                } else {
                    printOut(report.text)
                }
            }
        }
    }
}
