// Decant's SQLite→SQLite convert of a large Notes store (inside SQLite: one INSERT … SELECT per table from the
// attached input) against the pure-SQL copy of the same rows (ATTACH, then INSERT … SELECT … WHERE 1, which defeats
// SQLite's transfer optimization) into a store with the same schema, in one run. Each side runs in a child process
// of this program (so both include starting a process; wall time from spawn to exit on the monotonic clock), best of three; prints the ratio, whether the 1.05× target
// is met, and the peak RSS of the process that ran Decant's copy.
//
//   swift run -c release --package-path Benchmarks StoreCopyBenchmark [objects…]   (default: 1000000 4000000)
import CSQLite
import BenchmarkSupport
import Decant
import Foundation

/// The anchor, run in the child (`--sql-copy SOURCE DESTINATION`): the same rows copied by SQLite alone into
/// `destination`, an empty store with the same schema made beforehand, with the settings Decant builds its private
/// output with (no journal, exclusive lock, 8 MiB cache).
func sqlCopy(from source: URL, to destination: URL) throws {
    var db: OpaquePointer?
    guard sqlite3_open(destination.path, &db) == SQLITE_OK else { throw BenchmarkError("cannot open \(destination.path)") }
    defer { sqlite3_close(db) }
    func run(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(db)))
        }
    }
    try run("PRAGMA synchronous = OFF")
    try run("PRAGMA journal_mode = OFF")
    try run("PRAGMA locking_mode = EXCLUSIVE")
    try run("PRAGMA cache_size = -8192")
    try run("ATTACH DATABASE '\(source.path)' AS src")
    try run("BEGIN")
    try run(
        "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZPINNED, ZWORDCOUNT, ZDATE, ZCONTENT) "
            + "SELECT Z_PK, Z_ENT, Z_OPT, ZPINNED, ZWORDCOUNT, ZDATE, ZCONTENT FROM src.ZNOTE WHERE 1")
    try run("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZNOTE) WHERE Z_NAME = 'Note'")
    try run("COMMIT")
}

/// Runs the anchor in a child process, into a fresh empty store made here (untimed): its wall time.
func anchorCopy(from source: URL, to destination: URL) throws -> Double {
    try? FileManager.default.removeItem(at: destination)
    try SQLiteStoreWriter(creating: destination, model: notesModel, journalMode: .delete).finish()
    return try measurePrecisely(CommandLine.arguments[0], ["--sql-copy", source.path, destination.path]).seconds
}

/// Runs Decant's convert in a child process (this program with `--convert`): its wall time and peak RSS in MiB.
func decantCopy(from source: URL, to destination: URL) throws -> (seconds: Double, peakMiB: Double) {
    try measurePrecisely(CommandLine.arguments[0], ["--convert", source.path, destination.path])
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--convert", arguments.count == 3 {
    var options = FormatOptions()
    options.sqlite.journalMode = .delete
    let report = try StoreConversion.convert(
        from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]), options: options)
    guard report.read == report.written else { exit(1) }
    exit(0)
}

if arguments.first == "--sql-copy", arguments.count == 3 {
    try sqlCopy(from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
    exit(0)
}

if arguments.first == "--generate", arguments.count == 3, let count = Int(arguments[1]) {
    try generateNotesStore(count: count, at: URL(fileURLWithPath: arguments[2]))
    exit(0)
}
if arguments.first == "--profile", arguments.count == 2 {
    let store = try SQLiteStore(contentsOf: URL(fileURLWithPath: arguments[1]))
    let model = try store.resolveModel(bundle: nil)
    var start = Date()
    let reader = try SQLiteStoreReader(store: store, model: model)
    guard let layout = RecordLayout(entity: "Note", in: model) else { exit(1) }
    var batch = RecordBatch(layout: layout)
    var batches: [RecordBatch] = []
    var n = 0
    while try reader.nextBatch(into: &batch) { n += batch.count; batches.append(batch) }
    print("read", n, Date().timeIntervalSince(start))
    start = Date()
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    let writer = try SQLiteStoreWriter(creating: out, model: model, journalMode: .delete)
    for b in batches { try writer.write(b) }
    try writer.finish()
    print("write", Date().timeIntervalSince(start))
    try? FileManager.default.removeItem(at: out)
    exit(0)
}
let sizes = arguments.compactMap(Int.init).isEmpty ? [1_000_000, 4_000_000] : arguments.compactMap(Int.init)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
print("objects     SQL copy   Decant copy   ratio   target   Decant peak RSS   (best of 3 runs each, each a process)")
var peaks: [Double] = []
var unmet: [String] = []
let repetitions = 3
let target = 1.05
for size in sizes {
    let source = folder.appendingPathComponent("notes-\(size).sqlite")
    try generateNotesStore(count: size, at: source)
    sync()
    // Best of a few runs each, alternating, so a disk flush or a busy core does not decide the ratio.
    var anchor = Double.infinity
    var decant = (seconds: Double.infinity, peakMiB: 0.0)
    for _ in 0..<repetitions {
        let sqlOutput = folder.appendingPathComponent("sql-\(size).sqlite")
        anchor = min(anchor, try anchorCopy(from: source, to: sqlOutput))
        try? FileManager.default.removeItem(at: sqlOutput)
        // RUSAGE_CHILDREN reports the largest child so far; sizes run smallest first.
        let output = folder.appendingPathComponent("decant-\(size).sqlite")
        let run = try decantCopy(from: source, to: output)
        try? FileManager.default.removeItem(at: output)
        decant = (min(decant.seconds, run.seconds), max(decant.peakMiB, run.peakMiB))
    }
    peaks.append(decant.peakMiB)
    let ratio = decant.seconds / anchor
    let verdict = ratio <= target ? "met" : "NOT met"
    if ratio > target { unmet.append("\(size) objects: \(String(format: "%.3f", ratio))×") }
    print(
        String(format: "%9d   %7.3f s   %9.3f s   %5.3f   ", size, anchor, decant.seconds, ratio)
            + verdict.padding(toLength: 7, withPad: " ", startingAt: 0)
            + String(format: "  %8.1f MiB", decant.peakMiB))
    try? FileManager.default.removeItem(at: source)
}
let spread = (peaks.max() ?? 0) / max(peaks.min() ?? 1, 1) - 1
print(String(format: "peak RSS spread across sizes: %.1f%%", spread * 100))
print("targets: ratio <= \(target); peak RSS <= 64 MiB and the same (±10%) for every size")
print(unmet.isEmpty ? "ratio target met at every size" : "ratio target NOT met: " + unmet.joined(separator: ", "))
