// `decant plan`'s pre-flight (the dry run's count of objects that would be rejected) on large SQLite stores, in one
// run: the plan as it runs by default (an inferred hop: its rules counted with SQL inside the store), the same plan
// reading every object through the record stream (how the pre-flight counted before), and the plan without a dry run
// (`--no-dry-run`), against the anchor: `sqlite3` counting the same rules' violations with one hand-written query.
// Each is a child process (wall time and peak RSS), best of three. Prints each ratio to the anchor and checks the
// two pre-flights count the same.
//
// The store is the Migration benchmark's v1 (`Folder{name}` ⇄ `Note{content, date, folder}`, 1,000 folders); the
// destination adds rules to its v2: text (renamed from content) required and at most 40 characters, date within
// 700,000,000 … 720,000,000 s after 2001, folder required, priority (added, default 0) within 0 … 10.
//
//   swift run -c release --package-path Benchmarks PlanBenchmark [objects…]   (default: 1000000 2000000)
import BenchmarkSupport
import Decant
import Foundation

let bundle: ModelBundle = {
    var v2 = folderNotesBundle.versions[1]
    for index in v2.entities.indices where v2.entities[index].name == "Note" {
        var note = v2.entities[index]
        for position in note.attributes.indices {
            switch note.attributes[position].name {
            case "text":
                note.attributes[position].isOptional = false
                note.attributes[position].maxValue = "40"
            case "date":
                note.attributes[position].minDate = 700_000_000
                note.attributes[position].maxDate = 720_000_000
            case "priority":
                note.attributes[position].minValue = "0"
                note.attributes[position].maxValue = "10"
            default:
                break
            }
        }
        for position in note.relationships.indices where note.relationships[position].name == "folder" {
            note.relationships[position].isOptional = false
        }
        v2.entities[index] = note
    }
    return ModelBundle(
        name: "Notes", versions: [folderNotesBundle.versions[0], v2], currentVersionName: "Notes 2",
        sourceKind: .xcdatamodeld)
}()

/// The plan's report: the pre-flight counted with SQL (`sql`), by reading every object (`read`), or none (`none`).
func plan(_ store: URL, _ mode: String) throws -> StoreMigration.PlanReport {
    var options = StoreMigration.Options(bundle: bundle)
    options.environment.countsInStoreWhenPossible = mode == "sql"
    return try StoreMigration.plan(store: store, options: options, dryRun: mode != "none")
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--plan", arguments.count == 3 {
    // The measured child: one plan, its document built as `decant plan --json` builds it.
    let report = try plan(URL(fileURLWithPath: arguments[1]), arguments[2])
    _ = try PlanDocument(report: report, store: arguments[1]).jsonDocument()
    exit(report.plan.isExecutable ? 0 : 1)
}

/// The anchor: `sqlite3` counting the notes that break a rule, and the folders, in one process.
func anchorArguments(_ store: URL) -> [String] {
    [
        "-readonly", store.path,
        "SELECT COUNT(*), SUM(ZCONTENT IS NULL), SUM(length(ZCONTENT) > 40), SUM(ZDATE < 700000000), "
            + "SUM(ZDATE > 720000000), SUM(ZFOLDER IS NULL) FROM ZNOTE; SELECT COUNT(*) FROM ZFOLDER;",
    ]
}

let sizes = arguments.compactMap(Int.init).isEmpty ? [1_000_000, 2_000_000] : arguments.compactMap(Int.init)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-plan-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let repetitions = 3
var peaks: [Double] = []
var notMet: [String] = []
print("objects    sqlite3     plan --no-dry-run    plan, pre-flight in SQL        plan, pre-flight reading objects")
print("           anchor      time   ratio         time   ratio   peak RSS       time   ratio   peak RSS")
for size in sizes {
    let store = folder.appendingPathComponent("notes-\(size).sqlite")
    try generateFolderNotesStore(count: size, at: store)
    // Untimed: the two pre-flights count the same.
    let counted = try plan(store, "sql")
    let read = try plan(store, "read")
    guard counted.preflight == read.preflight, counted.objects == read.objects, counted.engine == read.engine else {
        throw BenchmarkError("the pre-flights differ: \(counted.preflight ?? [:]) against \(read.preflight ?? [:])")
    }
    sync()
    var anchor = Double.infinity
    var runs: [String: (seconds: Double, peakMiB: Double)] = [:]
    for _ in 0..<repetitions {
        anchor = min(anchor, try measure("/usr/bin/sqlite3", anchorArguments(store)).seconds)
        for mode in ["none", "sql", "read"] {
            let run = try measure(CommandLine.arguments[0], ["--plan", store.path, mode])
            let best = runs[mode] ?? (Double.infinity, 0)
            runs[mode] = (min(best.seconds, run.seconds), max(best.peakMiB, run.peakMiB))
        }
    }
    let none = runs["none"] ?? (0, 0)
    let sql = runs["sql"] ?? (0, 0)
    let reading = runs["read"] ?? (0, 0)
    print(
        String(
            format: "%9d  %6.2f s   %6.2f s  %5.2f      %6.2f s  %5.2f  %6.1f MiB     %6.2f s  %5.2f  %6.1f MiB",
            size, anchor, none.seconds, none.seconds / anchor, sql.seconds, sql.seconds / anchor, sql.peakMiB,
            reading.seconds, reading.seconds / anchor, reading.peakMiB))
    print("           pre-flight: \(counted.preflight ?? [:]) of \(counted.objects)")
    // The anchor counts the rules only; the plan also checks every value's type, where a text's length lies, that
    // every reference names an object, and starts a process that reads the model: at most 4 times the anchor.
    if sql.seconds / anchor > 4.0 {
        notMet.append("\(size): pre-flight in SQL \(sql.seconds / anchor)× the anchor (≤ 4.0)")
    }
    if sql.seconds > 2.0 * Double(size) / 2_000_000 {
        notMet.append("\(size): pre-flight in SQL \(sql.seconds) s (≤ 1 s a million objects)")
    }
    if sql.peakMiB > 64 { notMet.append("\(size): peak RSS \(sql.peakMiB) MiB (≤ 64)") }
    peaks.append(sql.peakMiB)
    try? FileManager.default.removeItem(at: store)
}
if let low = peaks.min(), let high = peaks.max(), high > low * 1.1 {
    notMet.append("peak RSS from \(low) to \(high) MiB (flat: within 10%)")
}
print(
    "targets: pre-flight in SQL ≤ 4.0× the sqlite3 anchor and ≤ 1 s a million objects; peak RSS ≤ 64 MiB and flat "
        + "(within 10%)")
print(notMet.isEmpty ? "every target met" : "not met: " + notMet.joined(separator: "; "))
