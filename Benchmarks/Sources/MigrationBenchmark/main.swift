// Decant's inferred v1 → v2 migration of a large SQLite store, against hand-written SQL doing the same change into a
// fresh store with the same schema (ATTACH, then INSERT … SELECT with the renamed and defaulted columns, the index
// built after the rows), in one run, each side a child process of this program.
// Decant runs it as it does by default, inside SQLite (InStoreMigration: the same INSERT … SELECT, plus the checks of
// the destination model's rules), and, for comparison, through the record stream (the path every other migration
// takes). Prints each ratio to the SQL, whether the in-SQLite one meets 1.05×, and each migration's peak RSS.
//
// v1: Folder{name} ⇄ Note{content, date, folder}. v2 renames content → text (renaming identifier) and adds
// priority (Integer 16, default 0); the to-one Note.folder is kept.
//
//   swift run -c release --package-path Benchmarks MigrationBenchmark [objects…]   (default: 1000000)
import CSQLite
import BenchmarkSupport
import Decant
import Foundation

let bundle = folderNotesBundle

/// The anchor, run in the child (`--sql-migrate SOURCE DESTINATION`): the same change written by hand in SQL, into
/// `destination`, a fresh v2 store with the same schema made beforehand. With the settings Decant's writer builds its
/// private output with (no journal, exclusive lock, 8 MiB cache), and the index on `ZNOTE.ZFOLDER` built once the rows
/// are in (dropped before, made again after, as Decant's writer builds it), so both sides do the same work the
/// fastest way SQL offers and write the same tables and indexes.
func sqlMigration(from source: URL, to destination: URL) throws {
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
    try run("DROP INDEX ZNOTE_ZFOLDER_INDEX")
    try run("INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM src.ZFOLDER WHERE 1")
    try run(
        "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZPRIORITY, ZFOLDER, ZDATE, ZTEXT) "
            + "SELECT Z_PK, Z_ENT, Z_OPT, 0, ZFOLDER, ZDATE, ZCONTENT FROM src.ZNOTE WHERE 1")
    try run("CREATE INDEX ZNOTE_ZFOLDER_INDEX ON ZNOTE (ZFOLDER)")
    try run("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZNOTE) WHERE Z_NAME = 'Note'")
    try run("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZFOLDER) WHERE Z_NAME = 'Folder'")
    try run("COMMIT")
}

/// Runs the anchor in a child process, into a fresh empty v2 store made here (untimed): its wall time.
func anchorMigration(from source: URL, to destination: URL) throws -> Double {
    try? FileManager.default.removeItem(at: destination)
    try SQLiteStoreWriter(creating: destination, model: bundle.versions[1], journalMode: .delete).finish()
    return try measurePrecisely(CommandLine.arguments[0], ["--sql-migrate", source.path, destination.path]).seconds
}

/// Runs Decant's migration in a child process (this program with `--migrate`, or `--stream` for the record stream):
/// its wall time and peak RSS in MiB.
func decantMigration(from source: URL, to destination: URL, stream: Bool) throws -> (seconds: Double, peakMiB: Double) {
    try measurePrecisely(
        CommandLine.arguments[0], [stream ? "--stream" : "--migrate", source.path, destination.path])
}

let arguments = Array(CommandLine.arguments.dropFirst())
if ["--migrate", "--stream"].contains(arguments.first), arguments.count == 3 {
    var options = StoreMigration.Options(bundle: bundle)
    options.formatOptions.sqlite.journalMode = .delete
    options.environment.runsInStoreWhenPossible = arguments.first == "--migrate"
    let report = try StoreMigration.migrate(
        store: URL(fileURLWithPath: arguments[1]), to: .file(URL(fileURLWithPath: arguments[2])), options: options)
    guard report.action == .migrated, report.ledgers.allSatisfy(\.isReconciled),
        report.engine == (options.environment.runsInStoreWhenPossible ? .inStore(format: "sqlite") : .stream)
    else { exit(1) }
    exit(0)
}

if arguments.first == "--sql-migrate", arguments.count == 3 {
    try sqlMigration(from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
    exit(0)
}

if arguments.first == "--generate", arguments.count == 3, let count = Int(arguments[1]) {
    try generateFolderNotesStore(count: count, at: URL(fileURLWithPath: arguments[2]))
    exit(0)
}

let sizes = arguments.compactMap(Int.init).isEmpty ? [1_000_000] : arguments.compactMap(Int.init)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
print("objects     SQL        Decant (inside SQLite)              Decant (record stream)    (best of 3, each a process)")
print("                       time    ratio  target   peak RSS       time    ratio  peak RSS")
let repetitions = 3
let target = 1.05
var unmet: [String] = []
for size in sizes {
    let source = folder.appendingPathComponent("notes-\(size).sqlite")
    try generateFolderNotesStore(count: size, at: source)
    sync()
    var anchor = Double.infinity
    var inStore = (seconds: Double.infinity, peakMiB: 0.0)
    var streamed = (seconds: Double.infinity, peakMiB: 0.0)
    for _ in 0..<repetitions {
        let sqlOutput = folder.appendingPathComponent("sql-\(size).sqlite")
        anchor = min(anchor, try anchorMigration(from: source, to: sqlOutput))
        try? FileManager.default.removeItem(at: sqlOutput)
        let output = folder.appendingPathComponent("decant-\(size).sqlite")
        for stream in [false, true] {
            let run = try decantMigration(from: source, to: output, stream: stream)
            try? FileManager.default.removeItem(at: output)
            if stream {
                streamed = (min(streamed.seconds, run.seconds), max(streamed.peakMiB, run.peakMiB))
            } else {
                inStore = (min(inStore.seconds, run.seconds), max(inStore.peakMiB, run.peakMiB))
            }
        }
    }
    let ratio = inStore.seconds / anchor
    if ratio > target { unmet.append("\(size) objects: \(String(format: "%.3f", ratio))×") }
    print(
        String(format: "%9d   %6.3f s   %6.3f s  %5.3f  ", size, anchor, inStore.seconds, ratio)
            + (ratio <= target ? "met    " : "NOT met")
            + String(
                format: "  %6.1f MiB    %6.2f s  %5.2f  %6.1f MiB", inStore.peakMiB, streamed.seconds,
                streamed.seconds / anchor, streamed.peakMiB))
    try? FileManager.default.removeItem(at: source)
}
print("target: inside SQLite, ratio <= \(target); peak RSS <= 64 MiB plus the identity map")
print(unmet.isEmpty ? "ratio target met at every size" : "ratio target NOT met: " + unmet.joined(separator: ", "))
