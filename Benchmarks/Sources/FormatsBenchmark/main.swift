// Decant's plain formats against their anchors, in one run: the run that decides issue 23's "done".
//
//   clean     CSV → store (vs sqlite3 '.import --csv'), store → NDJSON (vs sqlite3 -json), NDJSON → store (vs
//             sqlite-utils insert --nl), on clean rows Decant writes (the old rows, kept for comparison)
//   plain     a single realistic Note.csv → store (vs sqlite3 .import --csv): written by Python's csv module, with
//             ids, quoted texts with commas and quotes, multi-byte UTF-8, ISO 8601 dates with and without a fraction
//   keyed     a realistic folder → store (vs sqlite3 .import --csv of its four files): Folder.csv and Tag.csv keyed
//             by their unique name, Note.csv keyed by its unique id with a to-one by key, the join file Note.tags.csv
//   export    the store built from that folder → NDJSON and → CSV (vs sqlite3 -json / -csv of its ZNOTE rows)
//   ndjson    realistic NDJSON → store (vs sqlite-utils insert --nl of the same file): written by Python's json
//             module as another tool exports it, one note per line with its id, escapes (\", \n, \u00e9: a third
//             of the lines with ensure_ascii), nulls, booleans, dates with and without a fraction and with offsets,
//             the folder as a nested object named by its key or as the key alone, tags as keys or nested objects
//   validate  decant validate of the keyed store (no anchor)
//   migrate   an inferred migrate of the keyed store to a v2 adding an attribute with a default (no anchor)
//
// Every row prints the anchor, Decant (best of three; the largest peak RSS of the three), the ratio, the target and
// whether it is met; at the end a summary per conversion: peak RSS at each size and their spread, the time's growth
// from the smallest to the largest size, and every target not met. Needs python3 and sqlite3.
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/FormatsBenchmark [objects…] [--only NAME[,NAME…]]    (default: 1000000 4000000, all)
//   FormatsBenchmark --convert IN OUT FORMAT MODEL[:ENTITY]   (one Decant conversion, MODEL = notes|plain|keyed)
//   FormatsBenchmark --validate STORE / --migrate IN OUT      (validate / migrate the keyed store, as the rows do)
//   FormatsBenchmark --realistic N DIR csv-plain|csv-keyed|ndjson   (only write the realistic input)
//   FORMATS_BENCH_SQLITE_UTILS_OBJECTS=… the rows given to sqlite-utils, scaled to the size (default: 200000)
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
/// `model` is `notes` (the clean rows' model), `plain` (the realistic Note.csv's) or `keyed` (the realistic folder's),
/// with `:Entity` for input of one entity of a model of several (plain NDJSON).
@discardableResult
func decant(
    _ input: URL, _ output: URL, to format: String, model: String = "notes"
) throws -> (seconds: Double, peakMiB: Double) {
    try measure(CommandLine.arguments[0], ["--convert", input.path, output.path, format, model])
}

/// The model of the realistic files: `Note{id (unique), content, date, pinned, wordCount, folder, tags}`,
/// `Folder{name (unique), notes}`, `Tag{name (unique), notes}`, `Note.tags ⇄ Tag.notes`.
let keyedModel: ObjectModel = {
    var folder = Entity(name: "Folder")
    folder.className = "Folder"
    folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
    folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
    folder.uniquenessConstraints = [["name"]]
    var tag = Entity(name: "Tag")
    tag.className = "Tag"
    tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
    tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
    tag.uniquenessConstraints = [["name"]]
    var note = Entity(name: "Note")
    note.className = "Note"
    note.attributes = notesModel.entities[0].attributes + [Attribute(name: "id", type: .integer64, isOptional: true)]
    note.relationships = [
        Relationship(name: "folder", destination: "Folder", inverse: "notes"),
        Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true),
    ]
    note.uniquenessConstraints = [["id"]]
    return ObjectModel(versionName: "Keyed", entities: [folder, note, tag], versionIdentifiers: ["1"])
}()

/// The keyed model's second version for the migrate row: `Note.archived` (Boolean, default NO) added, so that an
/// inferred mapping is lightweight (every other property kept, the new one filled with its default).
let keyedModelV2: ObjectModel = {
    var model = keyedModel
    model.versionName = "Keyed 2"
    model.versionIdentifiers = ["2"]
    guard let index = model.entities.firstIndex(where: { $0.name == "Note" }) else { return model }
    var archived = Attribute(name: "archived", type: .boolean)
    archived.defaultValue = "NO"
    model.entities[index].attributes.append(archived)
    return model
}()

/// The model of the realistic single `Note.csv`: the clean rows' `Note` and an Integer 64 `id`, no constraint.
let plainModel: ObjectModel = {
    var note = notesModel.entities[0]
    note.attributes.append(Attribute(name: "id", type: .integer64, isOptional: true))
    return ObjectModel(versionName: "Plain", entities: [note], versionIdentifiers: ["1"])
}()

/// A bundle of `versions`, the last current.
func bundle(_ versions: [ObjectModel]) -> ModelBundle {
    ModelBundle(
        name: versions[0].versionName ?? "Notes", versions: versions, currentVersionName: versions.last?.versionName,
        sourceKind: .xcdatamodeld)
}

/// Writes realistic CSV input with Python's csv module (`python3 -c`): `Note.csv` (`id,date,content,wordCount,pinned`
/// plus `folder` for the keyed shape: texts with commas, quotes and multi-byte UTF-8, an empty one in fifty, ISO 8601
/// dates with and without a fraction, booleans), and for the keyed shape `Folder.csv` (one folder per thousand
/// notes, named by its unique name), `Tag.csv` and the join file `Note.tags.csv` (0-2 tags per note, by key).
func writeRealisticCSV(count: Int, shape: String, in folder: URL) throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try timed("/usr/bin/env", ["python3", "-c", realisticCSVScript, String(count), folder.path, shape])
}

let realisticCSVScript = #"""
    import csv, random, sys, datetime, os
    n = int(sys.argv[1]); out = sys.argv[2]; shape = sys.argv[3]
    rnd = random.Random(23)
    words = ["milk", "eggs", "línea", "日本", "café", 'note, "quoted"', "naïve", "tea", "Grüße", "call mum", "ok,", "Ünïcödé"]
    base = datetime.datetime(2024, 5, 19, 18, 14, 6, tzinfo=datetime.timezone.utc)
    folders = max(1, n // 1000)
    def fname(i): return f"Folder {i} «{words[i % len(words)]}»"
    tags = ["red", "blue", "grün", "日本語", "a,b", 'say "hi"']
    with open(os.path.join(out, "Note.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "date", "content", "wordCount", "pinned"] + (["folder"] if shape == "keyed" else []))
        for i in range(1, n + 1):
            k = rnd.randint(2, 8)
            content = " ".join(rnd.choice(words) for _ in range(k))
            if i % 50 == 0: content = ""
            d = base + datetime.timedelta(seconds=i * 13.25)
            date = d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{d.microsecond // 10000:02d}Z" if d.microsecond else "Z")
            row = [i, date, content, k, "true" if i % 7 == 0 else "false"]
            if shape == "keyed": row.append("" if i % 20 == 0 else fname(i % folders))
            w.writerow(row)
    if shape == "keyed":
        with open(os.path.join(out, "Folder.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f); w.writerow(["name"])
            for i in range(folders): w.writerow([fname(i)])
        with open(os.path.join(out, "Tag.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f); w.writerow(["name"])
            for t in tags: w.writerow([t])
        with open(os.path.join(out, "Note.tags.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f); w.writerow(["owner", "member"])
            for i in range(1, n + 1):
                for t in range(i % 3): w.writerow([i, tags[(i + t) % len(tags)]])
    """#

/// Writes realistic NDJSON of the keyed model's notes with Python's json module, as another tool would export them:
/// one note per line (`--entity Note`), keys in the exporter's order (sorted in one line of four), a third of the
/// lines with `ensure_ascii` (multi-byte text as `\u00e9` escapes), texts with quotes, commas, newlines, tabs and
/// backslashes, a null content in one note of fifty and a null folder in one of twenty, ISO 8601 dates in three
/// spellings (`Z` without a fraction, `Z` with two digits, Python's `isoformat()` with six digits and an offset, in
/// UTC or +02:00), booleans; relationships by key: `"folder": {"name": …}` (a nested object of the destination,
/// named by its unique key: the first time a folder appears and one time in ten) or `"folder": "…"` (its key), and
/// `"tags": […]` holding 0-2 tags, each a nested `{"name": …}` the first time and one time in ten, else its key.
func writeRealisticNDJSON(count: Int, to file: URL) throws {
    try timed("/usr/bin/env", ["python3", "-c", realisticNDJSONScript, String(count), file.path])
}

let realisticNDJSONScript = #"""
    import json, random, sys, datetime
    n = int(sys.argv[1]); out = sys.argv[2]
    rnd = random.Random(23)
    words = ["milk", "eggs", "línea", "日本", "café", 'note, "quoted"', "naïve", "tea", "Grüße", "call mum", "ok,",
             "Ünïcödé", "two\nlines", "tab\there", "back\\slash", "🙂"]
    base = datetime.datetime(2024, 5, 19, 18, 14, 6, tzinfo=datetime.timezone.utc)
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    folders = max(1, n // 1000)
    def fname(i): return f"Folder {i} «{words[i % 12]}»"
    tags = ["red", "blue", "grün", "日本語", "a,b", 'say "hi"']
    seen = set()
    def ref(key, name):
        if key in seen and rnd.random() >= 0.1: return name
        seen.add(key); return {"name": name}
    with open(out, "w", encoding="utf-8") as f:
        for i in range(1, n + 1):
            k = rnd.randint(2, 8)
            content = " ".join(rnd.choice(words) for _ in range(k))
            d = base + datetime.timedelta(seconds=i * 13.25)
            if i % 3 == 0: date = d.astimezone(plus2 if i % 2 else datetime.timezone.utc).isoformat()
            else: date = d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{d.microsecond // 10000:02d}Z" if d.microsecond else "Z")
            note = {"id": i, "date": date, "content": None if i % 50 == 0 else content, "wordCount": k,
                    "pinned": i % 7 == 0}
            note["folder"] = None if i % 20 == 0 else ref(("f", i % folders), fname(i % folders))
            note["tags"] = [ref(("t", t), tags[(i + t) % len(tags)]) for t in range(i % 3)]
            f.write(json.dumps(note, ensure_ascii=(i % 3 == 1), sort_keys=(i % 4 == 0)))
            f.write("\n")
    """#

let arguments = Array(CommandLine.arguments.dropFirst())

// One Decant job in this process, for the parent to measure (or for profiling by hand).
if arguments.first == "--convert", arguments.count == 5 {
    let parts = arguments[4].split(separator: ":").map(String.init)
    let model = ["plain": plainModel, "keyed": keyedModel][parts[0]] ?? notesModel
    var options = FormatOptions(bundle: bundle([model]))
    options.sqlite.journalMode = .delete
    if parts.count > 1 {
        options.entity = parts[1]
    } else if parts[0] != "keyed" {
        options.entity = "Note"
    }
    let report = try StoreConversion.convert(
        from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]), outputFormat: arguments[3],
        options: options)
    exit(report.read == report.written ? 0 : 1)
}
if arguments.first == "--validate", arguments.count == 2 {
    // As `decant validate STORE --model Keyed`: the first failing object stops it; exit 1 if any fails.
    let report = try StoreValidation.validate(
        store: URL(fileURLWithPath: arguments[1]), options: StoreValidation.Options(bundle: bundle([keyedModel])))
    exit(report.isValid && report.objects["Note"] != nil ? 0 : 1)
}
if arguments.first == "--migrate", arguments.count == 3 {
    // As `decant migrate IN --model Keyed.xcdatamodeld --output OUT`: the mapping is inferred, run inside SQLite
    // when it can be (the default).
    var options = StoreMigration.Options(bundle: bundle([keyedModel, keyedModelV2]))
    options.formatOptions.sqlite.journalMode = .delete
    let report = try StoreMigration.migrate(
        store: URL(fileURLWithPath: arguments[1]), to: .file(URL(fileURLWithPath: arguments[2])), options: options)
    guard report.action == .migrated, report.ledgers.allSatisfy(\.isReconciled), !report.foundProblems else { exit(1) }
    exit(0)
}
if arguments.first == "--realistic", arguments.count == 4, let count = Int(arguments[1]) {
    let output = URL(fileURLWithPath: arguments[2])
    switch arguments[3] {
    case "csv-plain": try writeRealisticCSV(count: count, shape: "plain", in: output)
    case "csv-keyed": try writeRealisticCSV(count: count, shape: "keyed", in: output)
    case "ndjson": try writeRealisticNDJSON(count: count, to: output)
    default: throw BenchmarkError("--realistic N DIR csv-plain|csv-keyed|ndjson")
    }
    exit(0)
}

/// Stops with the usage and exit status 64.
func usage(_ problem: String) -> Never {
    FileHandle.standardError.write(
        Data("\(problem)\nusage: FormatsBenchmark [objects…] [--only NAME[,NAME…]] (NAME: \(groups.joined(separator: ",")))\n".utf8))
    exit(64)
}

// The whole run, or the groups `--only` names.
let groups = ["clean", "plain", "keyed", "export", "ndjson", "validate", "migrate"]
var only = Set(groups)
var sizes: [Int] = []
var index = 0
while index < arguments.count {
    if arguments[index] == "--only", index + 1 < arguments.count {
        only = Set(arguments[index + 1].split(separator: ",").map(String.init))
        guard only.isSubset(of: groups) else {
            usage("--only takes \(groups.joined(separator: ",")), not \(arguments[index + 1])")
        }
        index += 2
    } else if let size = Int(arguments[index]), size > 0 {
        sizes.append(size)
        index += 1
    } else {
        usage("unexpected argument \(arguments[index])")
    }
}
if sizes.isEmpty { sizes = [1_000_000, 4_000_000] }
let utilsLimit = Int(ProcessInfo.processInfo.environment["FORMATS_BENCH_SQLITE_UTILS_OBJECTS"] ?? "") ?? 200_000

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-formats-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
func path(_ name: String) -> URL { folder.appendingPathComponent(name) }
func remove(_ names: String...) { for name in names { try? FileManager.default.removeItem(at: path(name)) } }

// sqlite-utils, the NDJSON anchor, in its own venv.
var sqliteUtils = ""
if !only.isDisjoint(with: ["clean", "ndjson"]) {
    let venv = path("venv")
    try timed("/usr/bin/env", ["python3", "-m", "venv", venv.path])
    try timed(venv.appendingPathComponent("bin/pip").path, ["install", "--quiet", "sqlite-utils"])
    sqliteUtils = venv.appendingPathComponent("bin/sqlite-utils").path
}

/// What a row must reach.
enum Target {
    /// Decant's time at most this many times the anchor's.
    case atMost(Double)
    /// Decant at least this many times faster than the anchor.
    case faster(Double)
    /// Memory only (no anchor).
    case memoryOnly

    var text: String {
        switch self {
        case .atMost(let ratio): String(format: "≤ %.1f×, ", ratio) + memoryText
        case .faster(let ratio): String(format: "≥ %.0f× faster, ", ratio) + memoryText
        case .memoryOnly: memoryText
        }
    }
    var memoryText: String { String(format: "≤ %.0f MiB", memoryLimit) }
}
let memoryLimit = 64.0
let memorySpread = 0.10
/// The time from the smallest to the largest size may grow at most this much more than the size.
let growthSlack = 1.1

struct Row {
    var size: Int
    var conversion: String
    var anchor: Double?
    var seconds: Double
    var peakMiB: Double
    var target: Target

    /// Decant ÷ anchor, or anchor ÷ Decant for a "faster" target.
    var ratio: Double? {
        guard let anchor else { return nil }
        if case .faster = target { return anchor / seconds }
        return seconds / anchor
    }
    /// What is not met, empty when everything is.
    var misses: [String] {
        var misses: [String] = []
        switch (target, ratio) {
        case (.atMost(let limit), let ratio?) where ratio > limit: misses.append(String(format: "time %.2f×", ratio))
        case (.faster(let limit), let ratio?) where ratio < limit:
            misses.append(String(format: "time %.1f× faster", ratio))
        case (.atMost, nil), (.faster, nil): misses.append("no anchor")
        default: break
        }
        if peakMiB > memoryLimit { misses.append(String(format: "memory %.1f MiB", peakMiB)) }
        return misses
    }
}
var rows: [Row] = []
var notes: [String] = []

print("objects    conversion                  anchor      Decant    ratio     peak RSS   target                    ")
@MainActor
func report(_ row: Row) {
    rows.append(row)
    let verdict = row.misses.isEmpty ? "met" : "NOT met (\(row.misses.joined(separator: ", ")))"
    let ratio: String
    switch (row.target, row.ratio) {
    case (.faster, let value?): ratio = String(format: "%6.1f× f", value)
    case (_, let value?): ratio = String(format: "%6.2f×  ", value)
    case (_, nil): ratio = "     —  "
    }
    print(
        String(format: "%9d  ", row.size) + row.conversion.padding(toLength: 24, withPad: " ", startingAt: 0)
            + (row.anchor.map { String(format: "%8.2f s", $0) } ?? "         —")
            + String(format: "  %7.2f s  ", row.seconds) + ratio
            + String(format: "  %7.1f MiB  ", row.peakMiB) + row.target.text.padding(toLength: 26, withPad: " ", startingAt: 0)
            + verdict)
    fflush(nil)  // every stream: a row shows at once when the output goes to a file
}

/// The shortest of three runs of `body`.
func best(_ body: () throws -> Double) rethrows -> Double {
    var result = Double.infinity
    for _ in 0..<3 { result = min(result, try body()) }
    return result
}
/// Best of three runs of a Decant child process (removing `output` before each): the shortest time, the largest peak.
func bestOf3(removing output: URL?, _ body: () throws -> (seconds: Double, peakMiB: Double)) throws -> (Double, Double) {
    var result = (Double.infinity, 0.0)
    for _ in 0..<3 {
        if let output { try? FileManager.default.removeItem(at: output) }
        let run = try body()
        result = (min(result.0, run.seconds), max(result.1, run.peakMiB))
    }
    return result
}
func bestDecant(_ input: URL, _ output: URL, _ format: String, model: String = "notes") throws -> (Double, Double) {
    try bestOf3(removing: output) { try decant(input, output, to: format, model: model) }
}
/// sqlite3 importing `files` (path, table) with `.import --csv`: the best of three.
func sqliteImport(_ files: [(URL, String)]) throws -> Double {
    try best {
        remove("anchor.db")
        return try timed("/usr/bin/sqlite3", [path("anchor.db").path] + files.map { ".import --csv \($0.0.path) \($0.1)" })
    }
}
/// sqlite-utils inserting the first `utilsLimit` lines of `ndjson` (best of three), scaled to `lines`.
@MainActor
func sqliteUtilsInsert(_ ndjson: URL, lines: Int, skippingHeader: Bool) throws -> (seconds: Double, rows: Int) {
    let limit = min(lines, utilsLimit)
    let prefix = path("prefix.ndjson")
    try timed(
        "/usr/bin/env",
        ["sh", "-c", "tail -n +\(skippingHeader ? 2 : 1) '\(ndjson.path)' | head -n \(limit) > '\(prefix.path)'"])
    defer { remove("prefix.ndjson", "utils.db") }
    let seconds = try best {
        remove("utils.db")
        return try timed(sqliteUtils, ["insert", path("utils.db").path, "notes", prefix.path, "--nl"])
    }
    return (seconds * Double(lines) / Double(limit), limit)
}

for size in sizes {
    if only.contains("clean") {
        let store = path("notes.sqlite")
        try generateNotesStore(count: size, at: store)
        // The shared inputs, written by Decant: Note.csv and notes.ndjson of the same rows.
        let csv = path("Note.csv")
        let ndjson = path("notes.ndjson")
        try decant(store, csv, to: "csv")
        try decant(store, ndjson, to: "ndjson")

        let csvAnchor = try sqliteImport([(csv, "notes")])
        let csvDecant = try bestDecant(csv, path("out.sqlite"), "sqlite")
        report(Row(size: size, conversion: "clean CSV → store", anchor: csvAnchor, seconds: csvDecant.0,
            peakMiB: csvDecant.1, target: .atMost(1.5)))

        let jsonAnchor = try best {
            try timed(
                "/usr/bin/sqlite3",
                ["-json", store.path, "SELECT Z_PK, Z_ENT, Z_OPT, ZCONTENT, ZDATE, ZPINNED, ZWORDCOUNT FROM ZNOTE"],
                output: path("anchor.json"))
        }
        let toJSON = try bestDecant(store, path("out.ndjson"), "ndjson")
        report(Row(size: size, conversion: "clean store → NDJSON", anchor: jsonAnchor, seconds: toJSON.0,
            peakMiB: toJSON.1, target: .atMost(1.5)))

        // sqlite-utils takes plain objects: the same rows without Decant's header line.
        let fromJSON = try bestDecant(ndjson, path("out.sqlite"), "sqlite")
        let utils = try sqliteUtilsInsert(ndjson, lines: size, skippingHeader: true)
        report(Row(size: size, conversion: "clean NDJSON → store", anchor: utils.seconds, seconds: fromJSON.0,
            peakMiB: fromJSON.1, target: .faster(30)))
        notes.append("clean NDJSON → store at \(size): sqlite-utils ran the first \(utils.rows) rows, scaled to \(size)")
        remove("notes.sqlite", "Note.csv", "notes.ndjson", "out.sqlite", "out.ndjson", "anchor.db", "anchor.json")
    }

    if only.contains("plain") {
        let input = path("plain")
        try writeRealisticCSV(count: size, shape: "plain", in: input)
        let csv = input.appendingPathComponent("Note.csv")
        let anchor = try sqliteImport([(csv, "notes")])
        let ours = try bestDecant(csv, path("out.sqlite"), "sqlite", model: "plain")
        report(Row(size: size, conversion: "real Note.csv → store", anchor: anchor, seconds: ours.0,
            peakMiB: ours.1, target: .atMost(1.5)))
        remove("plain", "out.sqlite", "anchor.db")
    }

    // The keyed folder and the store built from it, which export, validate and migrate read.
    let keyedStore = path("keyed.sqlite")
    if !only.isDisjoint(with: ["keyed", "export", "validate", "migrate"]) {
        let input = path("keyed")
        try writeRealisticCSV(count: size, shape: "keyed", in: input)
        if only.contains("keyed") {
            let anchor = try sqliteImport(
                ["Folder", "Note", "Tag", "Note.tags"].map {
                    (input.appendingPathComponent("\($0).csv"), $0.replacingOccurrences(of: ".", with: "_"))
                })
            let ours = try bestDecant(input, keyedStore, "sqlite", model: "keyed")
            report(Row(size: size, conversion: "keyed CSV → store", anchor: anchor, seconds: ours.0,
                peakMiB: ours.1, target: .atMost(1.5)))
        } else {
            try decant(input, keyedStore, to: "sqlite", model: "keyed")
        }
        remove("keyed", "anchor.db")
    }

    if only.contains("export") {
        let query = "SELECT Z_PK, Z_ENT, Z_OPT, ZCONTENT, ZDATE, ZID, ZPINNED, ZWORDCOUNT, ZFOLDER FROM ZNOTE"
        let jsonAnchor = try best {
            try timed("/usr/bin/sqlite3", ["-json", keyedStore.path, query], output: path("anchor.json"))
        }
        let toJSON = try bestDecant(keyedStore, path("keyed.ndjson"), "ndjson", model: "keyed")
        report(Row(size: size, conversion: "keyed store → NDJSON", anchor: jsonAnchor, seconds: toJSON.0,
            peakMiB: toJSON.1, target: .atMost(1.5)))
        let csvAnchor = try best {
            try timed("/usr/bin/sqlite3", ["-csv", keyedStore.path, query], output: path("anchor.csv"))
        }
        let toCSV = try bestDecant(keyedStore, path("keyed-csv"), "csv", model: "keyed")
        report(Row(size: size, conversion: "keyed store → CSV", anchor: csvAnchor, seconds: toCSV.0,
            peakMiB: toCSV.1, target: .atMost(1.5)))
        remove("keyed.ndjson", "keyed-csv", "anchor.json", "anchor.csv")
    }

    if only.contains("validate") {
        let ours = try bestOf3(removing: nil) { try measure(CommandLine.arguments[0], ["--validate", keyedStore.path]) }
        report(Row(size: size, conversion: "validate keyed store", anchor: nil, seconds: ours.0, peakMiB: ours.1,
            target: .memoryOnly))
    }

    if only.contains("migrate") {
        let output = path("migrated.sqlite")
        let ours = try bestOf3(removing: output) {
            try measure(CommandLine.arguments[0], ["--migrate", keyedStore.path, output.path])
        }
        report(Row(size: size, conversion: "migrate keyed (inferred)", anchor: nil, seconds: ours.0,
            peakMiB: ours.1, target: .memoryOnly))
        remove("migrated.sqlite")
    }
    remove("keyed.sqlite")

    if only.contains("ndjson") {
        let ndjson = path("real.ndjson")
        try writeRealisticNDJSON(count: size, to: ndjson)
        let ours = try bestDecant(ndjson, path("out.sqlite"), "sqlite", model: "keyed:Note")
        let utils = try sqliteUtilsInsert(ndjson, lines: size, skippingHeader: false)
        report(Row(size: size, conversion: "real NDJSON → store", anchor: utils.seconds, seconds: ours.0,
            peakMiB: ours.1, target: .faster(30)))
        notes.append("real NDJSON → store at \(size): sqlite-utils ran the first \(utils.rows) lines, scaled to \(size)")
        remove("real.ndjson", "out.sqlite")
    }
}

// The summary: per conversion, memory at each size and its spread, the time's growth, and every target not met.
print("")
for note in notes { print("(\(note))") }
print("")
print("per conversion: peak RSS at each size, spread (≤ \(Int(memorySpread * 100))%), time growth")
var missed: [String] = rows.filter { !$0.misses.isEmpty }.map {
    "\($0.conversion) at \($0.size): \($0.misses.joined(separator: ", "))"
}
var conversions: [String] = []
for row in rows where !conversions.contains(row.conversion) { conversions.append(row.conversion) }
for conversion in conversions {
    let runs = rows.filter { $0.conversion == conversion }.sorted { $0.size < $1.size }
    guard let first = runs.first, let last = runs.last else { continue }
    let peaks = runs.map(\.peakMiB)
    let spread = (peaks.max() ?? 0) / max(peaks.min() ?? 1, 1) - 1
    var line = conversion.padding(toLength: 26, withPad: " ", startingAt: 0)
        + peaks.map { String(format: "%.1f", $0) }.joined(separator: " / ") + " MiB"
    if runs.count > 1 {
        line += String(format: ", spread %.1f%%", spread * 100)
        if spread > memorySpread { missed.append(String(format: "\(conversion): memory spread %.1f%%", spread * 100)) }
        let growth = last.seconds / first.seconds
        let limit = growthSlack * Double(last.size) / Double(first.size)
        line += String(format: ", time \(last.size) ÷ \(first.size) = %.2f (≤ %.2f)", growth, limit)
        if growth > limit { missed.append(String(format: "\(conversion): time \(last.size) ÷ \(first.size) %.2f", growth)) }
    }
    print(line)
}
print("")
if sizes.count < 2 { print("(one size only: the spread and the time's growth need 1M and 4M, the issue's one run)") }
if missed.isEmpty {
    print("every target met")
} else {
    print("targets NOT met:")
    for miss in missed { print("  \(miss)") }
}
