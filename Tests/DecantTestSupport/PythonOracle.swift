public import Foundation

/// Runs another program for a test: the built `decant` binary, or Python 3 as an independent oracle.
public enum Subprocess {
    /// What a finished process left.
    public struct Outcome: Sendable {
        /// The exit status.
        public var status: Int32
        /// Everything written to standard output.
        public var stdout: Data
        /// Everything written to standard error.
        public var stderr: Data

        /// Standard output as text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error as text.
        public var errors: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input, and waits for it.
    public static func run(_ executable: URL, _ arguments: [String], input: Data? = nil) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = input.map { _ in Pipe() }
        if let inputPipe { process.standardInput = inputPipe }
        try process.run()
        if let inputPipe, let input {
            // Write from another thread so a large input cannot dead-lock against a full output pipe.
            let handle = inputPipe.fileHandleForWriting
            DispatchQueue.global().async {
                handle.write(input)
                try? handle.close()
            }
        }
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}

/// Runs Python 3 (standard library only, plus the jsonschema test oracle) as an independent oracle: `plistlib`,
/// `zlib`, `sqlite3`, `hashlib`.
public enum PythonOracle {
    /// Python exited with an error.
    public struct Failure: Error, CustomStringConvertible {
        /// Python's standard error.
        public var description: String
    }

    /// Runs `script` with `input` written to a temporary file whose path is `sys.argv[1]`; returns stdout.
    public static func run(_ script: String, input: Data = Data(), arguments: [String] = []) throws -> Data {
        let inputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("decant-python-\(UUID().uuidString)")
        try input.write(to: inputURL)
        defer { try? FileManager.default.removeItem(at: inputURL) }
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, inputURL.path] + arguments)
        guard outcome.status == 0 else { throw Failure(description: "python3 failed: " + outcome.errors) }
        return outcome.stdout
    }

    /// Runs `script` and returns its stdout as text without the trailing newline.
    public static func text(_ script: String, input: Data = Data(), arguments: [String] = []) throws -> String {
        let output = try run(script, input: input, arguments: arguments)
        var text = String(decoding: output, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
