// Decant's plain formats against their anchors, in one run:
//   CSV → Core Data SQLite store      vs  sqlite3 '.import --csv' of the same file (no type conversion)
//   SQLite store → NDJSON             vs  sqlite3 -json 'SELECT …' writing the same rows to a file
//   NDJSON → SQLite store             vs  sqlite-utils insert --nl (in a venv this benchmark creates)
// and the peak RSS of Decant's runs for each input format at two sizes (flat memory: within 10%).
//
//   swift run -c release --package-path Benchmarks FormatsBenchmark [objects…]   (default: 1000000 4000000)
//   FORMATS_BENCH_SQLITE_UTILS_OBJECTS=… limits the rows given to sqlite-utils (default: the first size).
import BenchmarkSupport
import Decant
import Foundation

/// Runs a program and returns its wall time; its output goes to `output` when given, else nowhere.
@discardableResult
func timed(
    _ executable: String, _ arguments: [String], input: URL? = nil, output: URL? = nil
) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let output {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
    } else {
        process.standardOutput = FileHandle.nullDevice
    }
    if let input { process.standardInput = try FileHandle(forReadingFrom: input) }
    let start = Date()
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
    }
    return Date().timeIntervalSince(start)
}

/// Decant's convert in a child process (this program with `--convert`): wall time and peak RSS.
@discardableResult
func decant(_ input: URL, _ output: URL, to format: String) throws -> (seconds: Double, peakMiB: Double) {
    try measure(CommandLine.arguments[0], ["--convert", input.path, output.path, format])
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--convert", arguments.count == 4 {
    var options = FormatOptions(bundle: notesBundle)
    options.sqlite.journalMode = .delete
    options.entity = "Note"
    let report = try StoreConversion.convert(
        from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]), outputFormat: arguments[3],
        options: options)
    exit(report.read == report.written ? 0 : 1)
}

let sizes = arguments.compactMap(Int.init).isEmpty ? [1_000_000, 4_000_000] : arguments.compactMap(Int.init)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-formats-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
func path(_ name: String) -> URL { folder.appendingPathComponent(name) }

// sqlite-utils, the NDJSON anchor, in its own venv.
let venv = path("venv")
try timed("/usr/bin/env", ["python3", "-m", "venv", venv.path])
try timed(venv.appendingPathComponent("bin/pip").path, ["install", "--quiet", "sqlite-utils"])
let sqliteUtils = venv.appendingPathComponent("bin/sqlite-utils").path

var peaks: [String: [Double]] = [:]
print("objects  task                     anchor      Decant     ratio   Decant peak RSS")
for size in sizes {
    let store = path("notes-\(size).sqlite")
    try generateNotesStore(count: size, at: store)
    // The shared inputs, written by Decant: Note.csv and notes.ndjson of the same rows.
    let csv = path("Note.csv")
    let ndjson = path("notes.ndjson")
    try decant(store, csv, to: "csv")
    try decant(store, ndjson, to: "ndjson")

    func best(_ body: () throws -> Double) rethrows -> Double {
        var result = Double.infinity
        for _ in 0..<3 { result = min(result, try body()) }
        return result
    }
    func bestDecant(_ input: URL, _ output: URL, _ format: String) throws -> (Double, Double) {
        var result = (Double.infinity, 0.0)
        for _ in 0..<3 {
            try? FileManager.default.removeItem(at: output)
            let run = try decant(input, output, to: format)
            result = (min(result.0, run.seconds), max(result.1, run.peakMiB))
        }
        return result
    }
    func line(_ task: String, _ anchor: Double, _ ours: (Double, Double), ratio: Double) {
        let label = task.padding(toLength: 18, withPad: " ", startingAt: 0)
        print(String(format: "%8d  ", size) + label + String(format: "%7.2f s  %7.2f s  %6.2f   %8.1f MiB", anchor, ours.0, ratio, ours.1))
    }

    // CSV → store.
    let csvAnchor = try best {
        try? FileManager.default.removeItem(at: path("anchor.db"))
        return try timed("/usr/bin/sqlite3", [path("anchor.db").path, ".import --csv \(csv.path) notes"])
    }
    let csvDecant = try bestDecant(csv, path("from-csv.sqlite"), "sqlite")
    line("CSV → store", csvAnchor, csvDecant, ratio: csvDecant.0 / csvAnchor)
    peaks["csv", default: []].append(csvDecant.1)

    // Store → NDJSON.
    let jsonAnchor = try best {
        try timed(
            "/usr/bin/sqlite3",
            ["-json", store.path, "SELECT Z_PK, Z_ENT, Z_OPT, ZCONTENT, ZDATE, ZPINNED, ZWORDCOUNT FROM ZNOTE"],
            output: path("anchor.json"))
    }
    let toJSON = try bestDecant(store, path("out.ndjson"), "ndjson")
    line("store → NDJSON", jsonAnchor, toJSON, ratio: toJSON.0 / jsonAnchor)
    peaks["sqlite", default: []].append(toJSON.1)

    // NDJSON → store.
    let fromJSON = try bestDecant(ndjson, path("from-ndjson.sqlite"), "sqlite")
    peaks["ndjson", default: []].append(fromJSON.1)
    if size == sizes[0] {
        // sqlite-utils takes plain objects: the same rows without Decant's header line.
        let plain = path("plain.ndjson")
        let limit = Int(ProcessInfo.processInfo.environment["FORMATS_BENCH_SQLITE_UTILS_OBJECTS"] ?? "") ?? size
        try timed("/usr/bin/env", ["sh", "-c", "tail -n +2 '\(ndjson.path)' | head -n \(limit) > '\(plain.path)'"])
        try? FileManager.default.removeItem(at: path("utils.db"))
        let utils = try timed(sqliteUtils, ["insert", path("utils.db").path, "notes", plain.path, "--nl"])
        let scaled = utils * Double(size) / Double(limit)
        line("NDJSON → store", scaled, fromJSON, ratio: scaled / fromJSON.0)
        print("         (ratio here is sqlite-utils ÷ Decant; sqlite-utils ran \(limit) rows, scaled to \(size))")
    } else {
        line("NDJSON → store", .nan, fromJSON, ratio: .nan)
    }
    for name in ["notes-\(size).sqlite", "Note.csv", "notes.ndjson", "from-csv.sqlite", "out.ndjson", "from-ndjson.sqlite",
        "anchor.db", "anchor.json", "plain.ndjson", "utils.db"] {
        try? FileManager.default.removeItem(at: path(name))
    }
}
for (format, values) in peaks.sorted(by: { $0.key < $1.key }) {
    let spread = (values.max() ?? 0) / max(values.min() ?? 1, 1) - 1
    print(String(format: "peak RSS reading %@: %@ MiB, spread %.1f%%", format,
        values.map { String(format: "%.1f", $0) }.joined(separator: " / "), spread * 100))
}
print("targets: CSV → store ≤ 1.5× sqlite3 .import; store → NDJSON ≤ 1.5× sqlite3 -json; NDJSON → store ≥ 30× faster than sqlite-utils; peak RSS ≤ 64 MiB, within 10% across sizes")
