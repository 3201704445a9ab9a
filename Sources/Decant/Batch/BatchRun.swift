import DecantCore
public import Foundation

/// One job applied to many inputs (fixture stores from every released version): a slice of the list for this
/// machine (`--shard I/N`), several at once (`--jobs N`), one result per input, and a JUnit report CI systems show.
///
/// ```swift
/// let batch = try BatchRun(inputs: stores, shard: BatchRun.Shard(parsing: "2/4"))
/// let results = batch.run(jobs: 2) { store in try migrate(store) }
/// try BatchRun.junit(results, suite: "decant migrate").write(to: report)
/// ```
public struct BatchRun: Sendable {
    /// `I/N`: the I-th of N equal slices (1-based), by position in the sorted list of inputs.
    public struct Shard: Sendable, Hashable, CustomStringConvertible {
        /// Which slice, from 1.
        public var index: Int
        /// How many slices.
        public var count: Int

        /// Parses `I/N`.
        /// - Throws: `.usage` unless 1 ≤ I ≤ N.
        public init(parsing text: String) throws {
            let parts = text.split(separator: "/").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, (1...count).contains(index)
            else {
                throw DecantError(.usage, "--shard takes I/N with 1 ≤ I ≤ N (for example 2/4), not \(text)")
            }
            self.index = index
            self.count = count
        }

        public var description: String { "\(index)/\(count)" }
    }

    /// What happened to one input.
    public struct Result: Sendable, Hashable {
        /// The input, as given.
        public var input: String
        /// Whether the job succeeded.
        public var passed: Bool
        /// One line: what the job did, or the error.
        public var message: String
        /// The exit code the error maps to (0 when passed).
        public var exitCode: Int32
        /// Wall time in seconds.
        public var seconds: Double
        /// What the job noticed and let pass (a model cache it did not need, rows with a stray `Z_ENT`, …): a batch
        /// says what a single run says.
        public var warnings: [Diagnostic] = []
    }

    /// What a job that succeeded reports: its line, and what it noticed and let pass.
    public struct Completion: Sendable, Hashable {
        public var message: String
        public var warnings: [Diagnostic]

        public init(_ message: String, warnings: [Diagnostic] = []) {
            self.message = message
            self.warnings = warnings
        }
    }

    /// The inputs this run takes, in order.
    public let inputs: [URL]

    /// The slice `shard` of `inputs` (all when nil), sorted by path so every machine agrees on the slices.
    public init(inputs: [URL], shard: Shard? = nil) {
        let sorted = inputs.sorted { $0.path < $1.path }
        guard let shard else {
            self.inputs = sorted
            return
        }
        self.inputs = sorted.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
    }

    /// Runs `job` on every input, at most `jobs` at a time; results in input order. A job's error is its result.
    public func run(jobs: Int = 1, _ job: @escaping @Sendable (URL) throws -> String) -> [Result] {
        run(jobs: jobs, reporting: { Completion(try job($0)) })
    }

    /// Runs `job` on every input as ``run(jobs:_:)`` does, keeping each job's warnings with its result.
    public func run(jobs: Int = 1, reporting job: @escaping @Sendable (URL) throws -> Completion) -> [Result] {
        let results = ResultSlots(count: inputs.count)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = max(1, jobs)
        for (index, input) in inputs.enumerated() {
            queue.addOperation {
                let start = Date()
                var result = Result(input: input.displayPath, passed: true, message: "", exitCode: 0, seconds: 0)
                do {
                    let completion = try job(input)
                    result.message = completion.message
                    result.warnings = completion.warnings
                } catch let error as DecantError {
                    result.passed = false
                    // The line already starts with the input: its path is not repeated.
                    let text = error.description
                    let prefix = result.input + ": "
                    result.message = text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
                    result.exitCode = error.code.exitCode
                } catch {
                    result.passed = false
                    result.message = "\(error)"
                    result.exitCode = 1
                }
                result.seconds = Date().timeIntervalSince(start)
                results.set(index, result)
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        return results.all
    }

    /// The exit code of a whole batch: 0 when every input passed; the first input or I/O failure's code (64, 65,
    /// 66, 73, 74, …) when there is one, whatever else passed or found problems; else 1 when some input ran but
    /// found problems. A CI step can so tell "fix the stores" (1) from "fix the run" (any other code).
    public static func exitCode(of results: [Result]) -> Int32 {
        let failed = results.filter { !$0.passed }
        return failed.first { $0.exitCode != 1 }?.exitCode ?? (failed.isEmpty ? 0 : 1)
    }

    /// A JUnit XML report: one test suite, one test case per input, a failure element for each that failed.
    public static func junit(_ results: [Result], suite: String) -> Data {
        func escape(_ text: String) -> String {
            var escaped = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": escaped += "&amp;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "\"": escaped += "&quot;"
                case "'": escaped += "&apos;"
                case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
                default:
                    // XML 1.0 has no way to write other control characters: they become U+FFFD.
                    escaped.unicodeScalars.append(scalar.value < 0x20 ? "\u{FFFD}" : scalar)
                }
            }
            return escaped
        }
        let failures = results.filter { !$0.passed }.count
        let total = results.reduce(0) { $0 + $1.seconds }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"\(escape(suite))\" tests=\"\(results.count)\" failures=\"\(failures)\" "
            + "time=\"\(String(format: "%.3f", total))\">\n"
        xml += "  <testsuite name=\"\(escape(suite))\" tests=\"\(results.count)\" failures=\"\(failures)\" "
            + "errors=\"0\" time=\"\(String(format: "%.3f", total))\">\n"
        for result in results {
            xml += "    <testcase classname=\"\(escape(suite))\" name=\"\(escape(result.input))\" "
                + "time=\"\(String(format: "%.3f", result.seconds))\""
            if result.passed {
                xml += ">\n      <system-out>\(escape(result.message))</system-out>\n    </testcase>\n"
            } else {
                xml += ">\n      <failure message=\"\(escape(result.message))\" type=\"exit \(result.exitCode)\">"
                    + "\(escape(result.message))</failure>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return Data(xml.utf8)
    }
}

/// Results written by several jobs at once, each to its own slot.
private final class ResultSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [BatchRun.Result?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: BatchRun.Result) { lock.withLock { slots[index] = result } }

    var all: [BatchRun.Result] { lock.withLock { slots.compactMap { $0 } } }
}
