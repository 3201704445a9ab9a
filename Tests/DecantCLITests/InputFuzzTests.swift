import DecantTestSupport
import Foundation
import Testing

/// Runs the built `decant` binary on generated hostile mapping files (YAML and JSON) and `--where` predicates: values
/// at and past the 64-bit edges, every operator and function, deep nesting, long chains and lists, nested YAML
/// aliases, and byte damage on top. Every run must end cleanly (exit 0, 1, 64 or 65 with an `Error:` line), within a
/// fixed memory bound (`ulimit -v`) and a few seconds; never a signal.
///
/// Deterministic like ``FuzzTests``: `DECANT_FUZZ_SEED` picks the seed, `DECANT_INPUT_FUZZ_COUNT` the number of
/// cases (each case runs one mapping file through `plan` and one predicate through `convert`), `DECANT_FUZZ_CASE`
/// one case. A failing case's files are kept and their folder printed.
@Suite("fuzz: decant on hostile mapping files and predicates", .serialized, .tags(.slow))
struct InputFuzzTests {
    static let binary = FuzzTests.binary
    static let count: Int = TestScale.count("DECANT_INPUT_FUZZ_COUNT", quick: 60, full: 300)
    /// Seconds one run may take: a few for a debug build, with room for a loaded 2-core machine running the
    /// other suites beside it.
    static let timeout: TimeInterval = 15
    /// The address-space bound of each run (KiB): the process with its runtime stays far below it.
    static let memoryLimit = 786_432
    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    @Test(.requiresDecantBinary) func hostileMappingFilesAndPredicatesEndCleanly() throws {
        let root = try Fixtures.temporaryDirectory()
        let store = root.appendingPathComponent("Notes.sqlite")
        let seeded = try Subprocess.run(Self.binary, [
            "convert", Fixtures.samplesRoot.appendingPathComponent("notes-v1").path, store.path, "--model", Self.notes,
            "--model-version", "Notes", "--quiet",
        ])
        try #require(seeded.status == 0, "\(seeded.errors)")
        var failures = 0
        var statuses: [Int32: Int] = [:]
        let indices = FuzzTests.onlyCase.map { [$0] } ?? Array(0..<Self.count)
        for index in indices {
            var random = SplitMix64(state: FuzzTests.seed &+ UInt64(index) &* 0x9E37_79B9)
            let folder = root.appendingPathComponent("case-\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let json = random.chance(40)
            let mapping = folder.appendingPathComponent(json ? "map.json" : "map.yaml")
            var text = HostileInput.mappingFile(json: json, &random)
            if random.chance(35) { text = HostileInput.damage(text, &random) }
            try Data(text.utf8).write(to: mapping)
            var predicate = HostileInput.predicate(&random)
            if random.chance(25) { predicate = HostileInput.damage(predicate, &random) }
            // The kernel refuses one argument longer than 128 KiB.
            if predicate.utf8.count > 120_000 { predicate = String(decoding: predicate.utf8.prefix(120_000), as: UTF8.self) }
            let commands = [
                ["plan", store.path, "--model", Self.notes, "--mapping", mapping.path],
                [
                    "convert", store.path, folder.appendingPathComponent("out.ndjson").path, "--model", Self.notes,
                    "--model-version", "Notes", "--where", predicate,
                ],
            ]
            var failed = false
            for arguments in commands {
                let (status, problem) = try Self.check(arguments)
                statuses[status, default: 0] += 1
                guard let problem else { continue }
                failed = true
                failures += 1
                if failures <= 20 {
                    let shown = arguments.map { $0.count > 300 ? String($0.prefix(300)) + "…" : $0 }
                    Issue.record(
                        """
                        input fuzz case \(index) (seed 0x\(String(FuzzTests.seed, radix: 16))): \(problem)
                          command: decant \(shown.joined(separator: " "))
                          kept in: \(folder.path)
                          rerun:   DECANT_FUZZ_SEED=0x\(String(FuzzTests.seed, radix: 16)) DECANT_FUZZ_CASE=\(index) \
                        swift test --skip-build --filter InputFuzzTests
                        """)
                }
                break
            }
            if !failed { try? FileManager.default.removeItem(at: folder) }
        }
        let summary = statuses.keys.sorted().map { "\($0 < 0 ? "hang/signal" : "exit \($0)"): \(statuses[$0] ?? 0)" }
        let seedText = "0x" + String(FuzzTests.seed, radix: 16)
        print("input fuzz seed \(seedText), \(indices.count) case(s): " + summary.joined(separator: ", "))
        #expect(failures == 0)
        if failures == 0 { try? FileManager.default.removeItem(at: root) }
    }

    /// Runs decant once under the memory bound and the timeout; its status (-1 for a hang or a signal) and what was
    /// wrong, or nil.
    static func check(_ arguments: [String]) throws -> (Int32, String?) {
        let started = Date()
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -v \(memoryLimit) && exec \"$0\" \"$@\"", binary.path] + arguments, timeout: timeout)
        let seconds = Date().timeIntervalSince(started)
        if outcome.timedOut { return (-1, "hang: still running after \(Int(timeout)) s (killed)") }
        if let signal = outcome.signal {
            return (-1, "crash: killed by signal \(signal)\n" + FuzzTests.excerpt(outcome.errors))
        }
        let status = outcome.status
        guard [0, 1, 64, 65].contains(status) else {
            return (status, "unexpected exit status \(status) after \(seconds) s\n" + FuzzTests.excerpt(outcome.errors))
        }
        if status == 64 || status == 65,
            !outcome.errors.split(separator: "\n").contains(where: { $0.hasPrefix("Error: ") })
        {
            return (status, "exit \(status) without an `Error:` line\n" + FuzzTests.excerpt(outcome.errors))
        }
        return (status, nil)
    }
}

/// Generators of hostile text: expressions, mapping files, predicates, and damage.
enum HostileInput {
    /// Numbers at and past the edges of Int64 and Double, as expression literals.
    static let numbers = [
        "0", "1", "-1", "2", "9223372036854775807", "-9223372036854775807", "9223372036854775808", "4611686018427387904",
        "3037000500", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "0.5", "-0.0", "1e400",
    ]
    static let texts = ["'nan'", "'inf'", "'-inf'", "'1e308'", "''", "'9223372036854775808'", "'x'", "'2020-01-01'"]
    static let functions = [
        "lowercase", "uppercase", "trim", "substring", "replace", "split", "join", "length", "string", "integer",
        "double", "round", "floor", "ceil", "abs", "now", "parse", "format", "add", "uuid", "if", "nosuch", "fetchCount",
    ]
    static let operators = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "??"]

    /// A value expression over the Notes v1 note (`content`, `date`), up to `depth` levels deep.
    static func expression(_ depth: Int, _ random: inout SplitMix64) -> String {
        if depth <= 0 || random.chance(25) {
            switch random.below(6) {
            case 0, 1: return random.pick(numbers)
            case 2: return random.pick(texts)
            case 3: return random.pick(["$source.content", "$source.date", "$source", "$source.nosuch"])
            case 4: return random.pick(["nil", "true", "false"])
            default: return "-(" + random.pick(numbers) + " - 1)"
            }
        }
        switch random.below(4) {
        case 0:
            let prefix = random.pick(["-", "!", "-(", "--"])
            return prefix + expression(depth - 1, &random) + (prefix == "-(" ? ")" : "")
        case 1:
            return "(" + expression(depth - 1, &random) + " " + random.pick(operators) + " "
                + expression(depth - 1, &random) + ")"
        default:
            let arguments = (0..<random.below(4)).map { _ in expression(depth - 1, &random) }
            return random.pick(functions) + "(" + arguments.joined(separator: ", ") + ")"
        }
    }

    /// An expression that is large rather than odd: deep parentheses, a long chain, or many nested calls.
    static func largeExpression(_ random: inout SplitMix64) -> String {
        let size = random.pick([150, 250, 1_200, 6_000])
        switch random.below(3) {
        case 0: return String(repeating: "(", count: size) + "1" + String(repeating: ")", count: size)
        case 1: return Array(repeating: random.pick(["1", "9223372036854775807", "$source.content"]), count: size)
            .joined(separator: " \(random.pick(operators)) ")
        default: return String(repeating: "abs(", count: size) + "1" + String(repeating: ")", count: size)
        }
    }

    /// A mapping file from Notes to Notes 3 whose expressions are generated.
    static func mappingFile(json: Bool, _ random: inout SplitMix64) -> String {
        func value(_ random: inout SplitMix64) -> String {
            random.chance(10) ? largeExpression(&random) : expression(random.below(6), &random)
        }
        let filter = random.chance(40) ? value(&random) : nil
        let attributes = ["title", "text", "date"].filter { _ in random.chance(70) }.map { ($0, value(&random)) }
        if json {
            func quoted(_ text: String) -> String {
                "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            var note = ["\"from\": \"Note\""]
            if let filter { note.append("\"where\": \(quoted(filter))") }
            note.append(
                "\"attributes\": {" + attributes.map { "\(quoted($0.0)): \(quoted($0.1))" }.joined(separator: ", ")
                    + "}")
            var text = "{\"source\": \"Notes\", \"destination\": \"Notes 3\", \"entities\": {\"Note\": {"
                + note.joined(separator: ", ") + "}}}"
            if random.chance(10) {
                let depth = random.pick([100, 300, 20_000])
                text = String(repeating: "[", count: depth) + text + String(repeating: "]", count: depth)
            }
            return text
        }
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var text = ""
        if random.chance(15) {
            // Nested aliases: `levels` levels of `width` aliases each.
            let (levels, width) = (random.pick([2, 4, 6, 8]), random.pick([3, 12, 40]))
            text += "l0: &l0 [" + Array(repeating: "xxxxxxxx", count: width).joined(separator: ", ") + "]\n"
            for level in 1..<levels {
                text += "l\(level): &l\(level) ["
                    + Array(repeating: "*l\(level - 1)", count: width).joined(separator: ", ") + "]\n"
            }
        }
        text += "source: Notes\ndestination: Notes 3\nentities:\n  Note:\n    from: Note\n"
        if let filter { text += "    where: \(quoted(filter))\n" }
        text += "    attributes:\n"
        for (name, expression) in attributes { text += "      \(name): \(quoted(expression))\n" }
        if random.chance(10) { text += "    relationships: &r\n      folder: *r\n" }
        return text
    }

    static let keyPaths = ["content", "content", "date", "date", "content", "nosuch"]
    static let predicateValues = [
        "nil", "'milk'", "\"Milk\"", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e308",
        "-1e308", "1e400", "0", "YES", "CAST(\"2020-01-01\", \"NSDate\")", "CAST(1e308, \"NSDate\")",
        "CAST(\"nan\", \"NSNumber\")", "CAST(\"1e308\", \"NSNumber\")",
    ]

    /// A `--where` predicate over the Notes v1 note.
    static func predicate(_ random: inout SplitMix64) -> String {
        func comparison(_ random: inout SplitMix64) -> String {
            let key = random.pick(keyPaths)
            let options = random.pick(["", "", "[c]", "[d]", "[cd]"])
            switch random.below(5) {
            case 0:
                let size = random.pick([0, 3, 50, 5_000])
                let items = (0..<size).map { index in
                    random.chance(70) ? "'u\(index)'" : random.pick(predicateValues)
                }
                return "\(key) IN\(options) {" + items.joined(separator: ", ") + "}"
            case 1:
                return "\(key) BETWEEN {\(random.pick(predicateValues)), \(random.pick(predicateValues))}"
            default:
                let op = random.pick(["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
                    "MATCHES"])
                let value = op == "MATCHES" ? random.pick(["'(a*)*b'", "'['", "'.*'"]) : random.pick(predicateValues)
                return "\(key) \(op)\(options) \(value)"
            }
        }
        switch random.below(8) {
        case 0:
            // Short terms: one argument may not pass 128 KiB.
            let terms = random.pick([900, 1_000, 1_001, 5_000])
            let op = random.pick(["!=", "==[c]", "BEGINSWITH", "<"])
            return (0..<terms).map { "content \(op) 'u\($0)'" }.joined(separator: random.pick([" AND ", " OR "]))
        case 1:
            let depth = random.pick([150, 201, 5_000])
            return String(repeating: "(", count: depth) + comparison(&random) + String(repeating: ")", count: depth)
        case 2:
            return String(repeating: "NOT ", count: random.pick([10, 199, 3_000])) + comparison(&random)
        default:
            var text = comparison(&random)
            for _ in 0..<random.below(6) {
                text = random.pick(["(\(text)) AND ", "(\(text)) OR ", "NOT (\(text)) AND "]) + comparison(&random)
            }
            return text
        }
    }

    /// A few random edits: characters deleted, repeated, or replaced by ones that matter to the grammars.
    static func damage(_ text: String, _ random: inout SplitMix64) -> String {
        var characters = Array(text)
        let specials: [Character] = ["(", ")", "[", "]", "{", "}", "'", "\"", "*", "&", ":", "-", "\n", " ", "9", "e", ","]
        for _ in 0..<(1 + random.below(6)) where !characters.isEmpty {
            let position = random.below(characters.count)
            switch random.below(4) {
            case 0: characters.remove(at: position)
            case 1:
                let end = min(characters.count, position + 1 + random.below(40))
                characters.insert(contentsOf: Array(characters[position..<end]), at: position)
            default: characters[position] = random.pick(specials)
            }
        }
        return String(characters)
    }
}
