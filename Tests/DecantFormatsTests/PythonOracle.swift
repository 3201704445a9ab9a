import Foundation
import Testing

/// Runs Python 3 (standard library only) as an independent oracle: `plistlib`, `zlib`, `sqlite3`.
enum PythonOracle {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `script` with `input` written to a temporary file whose path is `sys.argv[1]`; returns stdout.
    static func run(_ script: String, input: Data = Data(), arguments: [String] = []) throws -> Data {
        let inputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("decant-python-\(UUID().uuidString)")
        try input.write(to: inputURL)
        defer { try? FileManager.default.removeItem(at: inputURL) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, inputURL.path] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python3 failed: " + String(decoding: stderr, as: UTF8.self))
        }
        return stdout
    }

    /// Runs `script` and returns its stdout as text without the trailing newline.
    static func text(_ script: String, input: Data = Data(), arguments: [String] = []) throws -> String {
        let output = try run(script, input: input, arguments: arguments)
        var text = String(decoding: output, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
