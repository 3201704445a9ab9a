import ArgumentParser
import Decant
import Foundation

/// Runs a command body, turning a thrown ``DecantError`` into an `Error:` line on standard error and the
/// sysexits code its kind maps to.
func reportingErrors(verbose: Int, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as DecantError {
        var text = "Error: \(error.description)\n"
        if verbose > 0, let cause = error.underlyingError { text += "  caused by: \(cause)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        throw ExitCode(error.code.exitCode)
    }
}

/// Writes text and a newline to standard output.
func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes each warning to standard error, one line each.
func printWarnings(_ warnings: [Diagnostic]) {
    for warning in warnings { FileHandle.standardError.write(Data("\(warning)\n".utf8)) }
}
