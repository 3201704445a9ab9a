public import Foundation

/// Runs another program for a test: the built `decant` binary, or Python 3 as an independent oracle.
public enum Subprocess {
    /// What a finished process left.
    public struct Outcome: Sendable {
        /// The exit status, or the signal number when ``signal`` is set.
        public var status: Int32
        /// Everything written to standard output.
        public var stdout: Data
        /// Everything written to standard error.
        public var stderr: Data
        /// The signal that ended the process, if one did (a crash, or the kill after a timeout).
        public var signal: Int32? = nil
        /// Whether the process was killed for outrunning the timeout of ``Subprocess/run(_:_:input:timeout:)``.
        public var timedOut = false

        /// Standard output as text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error as text.
        public var errors: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input, and waits for it.
    ///
    /// With a `timeout`, a process still running after that many seconds is sent SIGTERM, then SIGKILL a second
    /// later, and the outcome says ``Outcome/timedOut``.
    public static func run(
        _ executable: URL, _ arguments: [String], input: Data? = nil, timeout: TimeInterval? = nil
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = input.map { _ in Pipe() }
        if let inputPipe { process.standardInput = inputPipe }
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if let inputPipe, let input {
            // Write from another thread so a large input cannot dead-lock against a full output pipe.
            let handle = inputPipe.fileHandleForWriting
            DispatchQueue.global().async {
                handle.write(input)
                try? handle.close()
            }
        }
        // Read both pipes at once, so a child that fills one while we wait on the other cannot stall.
        let collected = PipeContents()
        let readers = DispatchGroup()
        for (pipe, isError) in [(output, false), (errors, true)] {
            DispatchQueue.global().async(group: readers) {
                collected.set(pipe.fileHandleForReading.readDataToEndOfFile(), isError: isError)
            }
        }
        var timedOut = false
        if let timeout, finished.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            process.terminate()
            if finished.wait(timeout: .now() + 1) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                finished.wait()
            }
        } else if timeout == nil {
            finished.wait()
        }
        readers.wait()
        process.waitUntilExit()
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Outcome(
            status: process.terminationStatus, stdout: collected.stdout, stderr: collected.stderr, signal: signal,
            timedOut: timedOut)
    }

    /// The two pipes' contents, filled from two reader threads.
    private final class PipeContents: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        func set(_ data: Data, isError: Bool) {
            lock.withLock {
                if isError { err = data } else { out = data }
            }
        }

        var stdout: Data { lock.withLock { out } }
        var stderr: Data { lock.withLock { err } }
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
