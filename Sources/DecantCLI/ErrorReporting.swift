import ArgumentParser
import Decant
import Foundation

/// Runs a command body, turning a thrown ``DecantError`` into an `Error:` line on standard error and the
/// sysexits code its kind maps to. With `json` (the command's `--json`), standard output gets the error as one
/// JSON document too (``ErrorDocument``, `schemas/error.schema.json`), so a script reading it always gets JSON.
///
/// Any other error (not ArgumentParser's own: an exit code, a clean exit, a usage error) is a defect of Decant's, a
/// failure it did not put into words: it is reported as an internal error (exit 70, "please report"), not as
/// ArgumentParser's exit 1, which means the run found problems.
func reportingErrors(verbose: Int, json: Bool = false, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch let error as DecantError {
        try report(error, verbose: verbose, json: json)
    } catch {
        let unexpected = DecantError(
            .internalError, "unexpected error (please report it): \(error.localizedDescription)",
            underlyingError: error)
        try report(unexpected, verbose: verbose, json: json)
    }
}

/// Writes `error` to standard error (and as the JSON error document to standard output with `json`) and throws its
/// exit code.
private func report(_ error: DecantError, verbose: Int, json: Bool) throws -> Never {
    var text = "Error: \(error.description)\n"
    if verbose > 0, let cause = error.underlyingError { text += "  caused by: \(cause)\n" }
    FileHandle.standardError.write(Data(text.utf8))
    if json, let document = try? ErrorDocument(error).jsonDocument() {
        printOut(String(decoding: document, as: UTF8.self))
    }
    throw ExitCode(error.code.exitCode)
}

/// "1 object" or "N objects", for a run's summary line.
func objects(_ count: Int) -> String { count == 1 ? "1 object" : "\(count) objects" }

/// How a summary line names the model a run used: its version, or, when the run read the model a store keeps (the
/// version the library names `Z_MODELCACHE`), that model as such.
func modelName(_ version: String) -> String {
    version == "Z_MODELCACHE" ? "the store's own model in Z_MODELCACHE" : version
}

/// Writes text and a newline to standard output.
func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes each warning to standard error, one line each.
func printWarnings(_ warnings: [Diagnostic]) {
    for warning in warnings { FileHandle.standardError.write(Data("\(warning)\n".utf8)) }
}

/// Writes what a run that rejected objects (or kept dangling references) found to standard error: per entity, and
/// where they are listed.
func reportRejected(
    _ rejected: Int, perEntity: [String: Int], dangling: Int, version: String, listedIn file: String?
) {
    var lines: [String] = []
    if rejected > 0 {
        lines.append(
            "Error: \(objects(rejected)) rejected by the rules of \(version): "
                + perEntity.keys.sorted().map { "\($0) \(perEntity[$0] ?? 0)" }.joined(separator: ", "))
    }
    if dangling > 0 {
        lines.append("Error: \(objects(dangling)) written with a reference to an object that does not exist")
    }
    if let file { lines.append("  listed in \(file)") }
    FileHandle.standardError.write(Data(lines.map { $0 + "\n" }.joined().utf8))
}
