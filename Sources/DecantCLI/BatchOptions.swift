import ArgumentParser
import Decant
import Foundation

/// The options that make `migrate` and `validate` run over many stores: fixture stores from every released version,
/// on one machine or sharded over a CI matrix.
struct BatchOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "The folder for what each store's run writes, under the store's name (migrate: the migrated store; validate: NAME.rejects.ndjson).")
    var outputDir: String?

    @Option(name: .long, help: "How many stores to process at once.")
    var jobs: Int = 1

    @Option(name: .long, help: "Write a JUnit XML report here (one test case per store).")
    var junit: String?

    @Option(name: .long, help: "Take only the I-th of N slices of the sorted store list (for a CI matrix), as I/N.")
    var shard: String?

    /// Checks every output of the batch before any store is touched (exit 73 naming the path as typed): the
    /// `--output-dir` folder, made when missing, must take files; the `--junit` report's folder must exist and take
    /// files. A missing `reports/` folder failed only after every store had run.
    /// - Returns: the output folder, when one is given.
    func prepareOutputs() throws -> URL? {
        if let junit { try DestinationLease.checkCanCreate(URL(fileURLWithPath: junit), displayPath: junit) }
        guard let outputDir else { return nil }
        let folder = URL(fileURLWithPath: outputDir, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw DecantError(
                .cannotCreateOutput, "cannot create the folder", at: Location(path: outputDir), underlyingError: error)
        }
        try DestinationLease.checkCanCreate(folder.appendingPathComponent("probe"), displayPath: outputDir)
        return folder
    }

    /// Whether the run is a batch: several stores, or any batch option.
    func isBatch(stores: [String]) -> Bool {
        stores.count > 1 || outputDir != nil || junit != nil || shard != nil || jobs != 1
    }

    /// Runs `job` over the stores (this shard of them), prints a line per store, writes the JUnit report, and exits
    /// with the batch's code (``BatchRun/exitCode(of:)``: an input or I/O failure's code over 1 for problems found).
    func run(
        stores: [String], suite: String, json: Bool, _ job: @escaping @Sendable (URL) throws -> BatchRun.Completion
    ) throws {
        guard jobs >= 1 else { throw ValidationError("--jobs takes a number from 1") }
        let batch = BatchRun(
            inputs: stores.map { URL(fileURLWithPath: $0) }, shard: try shard.map { try BatchRun.Shard(parsing: $0) })
        let results = batch.run(jobs: jobs, reporting: job)
        if let junit {
            do {
                try BatchRun.junit(results, suite: suite).write(to: URL(fileURLWithPath: junit))
            } catch {
                throw DecantError(
                    .cannotCreateOutput, "cannot write the JUnit report", at: Location(path: junit), underlyingError: error)
            }
        }
        if json {
            let document = results.map {
                StoreLine(
                    store: $0.input, passed: $0.passed, message: $0.message, exitCode: $0.exitCode, warnings: $0.warnings)
            }
            printOut(String(decoding: try document.jsonDocument(), as: UTF8.self))
        } else {
            for result in results {
                printOut("\(result.passed ? "PASS" : "FAIL")  \(result.input): \(result.message)")
                printWarnings(result.warnings)
            }
            let failed = results.filter { !$0.passed }.count
            printOut("\(results.count - failed) of \(results.count) stores passed" + (shard.map { " (shard \($0))" } ?? ""))
        }
        let code = BatchRun.exitCode(of: results)
        if code != 0 { throw ExitCode(code) }
    }
}

/// One store of a batch in `--json` (`schemas/batch.schema.json`): whether it passed, its line, its exit code and the
/// run's warnings.
private struct StoreLine: Encodable {
    var store: String
    var passed: Bool
    var message: String
    var exitCode: Int32
    var warnings: [Diagnostic]
}
