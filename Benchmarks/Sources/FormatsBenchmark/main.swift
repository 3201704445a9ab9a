// Decant's plain formats against their anchors, in one run:
//   CSV → Core Data SQLite store      vs  sqlite3 '.import --csv' of the same file (no type conversion)
//   SQLite store → NDJSON             vs  sqlite3 -json 'SELECT …' writing the same rows to a file
//   NDJSON → SQLite store             vs  sqlite-utils insert --nl (in a venv this benchmark creates)
// on clean rows Decant writes, and on realistic CSV written by Python's csv module (needs python3 and sqlite3):
//   a single Note.csv (ids, quoted texts with commas and quotes, multi-byte UTF-8, dates with and without a fraction)
//   a folder: Folder.csv and Tag.csv keyed by name, Note.csv keyed by id with a to-one by key, Note.tags.csv
//   and the store built from that folder → NDJSON and → CSV   vs  sqlite3 -json / -csv of its ZNOTE rows
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
/// `model` is `notes` (the clean rows' model), `plain` (the realistic Note.csv's) or `keyed` (the realistic folder's).
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

/// The model of the realistic single `Note.csv`: the clean rows' `Note` and an Integer 64 `id`, no constraint.
let plainModel: ObjectModel = {
    var note = notesModel.entities[0]
    note.attributes.append(Attribute(name: "id", type: .integer64, isOptional: true))
    return ObjectModel(versionName: "Plain", entities: [note], versionIdentifiers: ["1"])
}()

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

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--convert", arguments.count == 5 {
    let model = ["plain": plainModel, "keyed": keyedModel][arguments[4]] ?? notesModel
    var options = FormatOptions(
        bundle: ModelBundle(
            name: model.versionName ?? "Notes", versions: [model], currentVersionName: model.versionName,
            sourceKind: .xcdatamodeld))
    options.sqlite.journalMode = .delete
    if arguments[4] != "keyed" { options.entity = "Note" }
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
    func bestDecant(_ input: URL, _ output: URL, _ format: String, model: String = "notes") throws -> (Double, Double) {
        var result = (Double.infinity, 0.0)
        for _ in 0..<3 {
            try? FileManager.default.removeItem(at: output)
            let run = try decant(input, output, to: format, model: model)
            result = (min(result.0, run.seconds), max(result.1, run.peakMiB))
        }
        return result
    }
    func line(_ task: String, _ anchor: Double, _ ours: (Double, Double), ratio: Double) {
        let label = task.padding(toLength: 22, withPad: " ", startingAt: 0)
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
    // Realistic input from Python's csv module: the single Note.csv a new user has, then a folder with keys, a
    // to-one by key and a to-many join file; the store built from the folder goes back to NDJSON and CSV.
    let plainInput = path("plain")
    try writeRealisticCSV(count: size, shape: "plain", in: plainInput)
    let plainCSV = plainInput.appendingPathComponent("Note.csv")
    let plainAnchor = try best {
        try? FileManager.default.removeItem(at: path("anchor.db"))
        return try timed("/usr/bin/sqlite3", [path("anchor.db").path, ".import --csv \(plainCSV.path) notes"])
    }
    let plainDecant = try bestDecant(plainCSV, path("from-plain.sqlite"), "sqlite", model: "plain")
    line("real Note.csv → store", plainAnchor, plainDecant, ratio: plainDecant.0 / plainAnchor)
    peaks["real Note.csv", default: []].append(plainDecant.1)

    let keyedInput = path("keyed")
    try writeRealisticCSV(count: size, shape: "keyed", in: keyedInput)
    let keyedAnchor = try best {
        try? FileManager.default.removeItem(at: path("anchor.db"))
        let imports = ["Folder", "Note", "Tag", "Note.tags"].map {
            ".import --csv \(keyedInput.appendingPathComponent("\($0).csv").path) \($0.replacingOccurrences(of: ".", with: "_"))"
        }
        return try timed("/usr/bin/sqlite3", [path("anchor.db").path] + imports)
    }
    let keyedStore = path("from-keyed.sqlite")
    let keyedDecant = try bestDecant(keyedInput, keyedStore, "sqlite", model: "keyed")
    line("keyed CSV → store", keyedAnchor, keyedDecant, ratio: keyedDecant.0 / keyedAnchor)
    peaks["keyed CSV", default: []].append(keyedDecant.1)
    let query = "SELECT Z_PK, Z_ENT, Z_OPT, ZCONTENT, ZDATE, ZID, ZPINNED, ZWORDCOUNT, ZFOLDER FROM ZNOTE"
    let keyedJSONAnchor = try best {
        try timed("/usr/bin/sqlite3", ["-json", keyedStore.path, query], output: path("anchor.json"))
    }
    let keyedToJSON = try bestDecant(keyedStore, path("keyed.ndjson"), "ndjson", model: "keyed")
    line("keyed store → NDJSON", keyedJSONAnchor, keyedToJSON, ratio: keyedToJSON.0 / keyedJSONAnchor)
    peaks["keyed store", default: []].append(keyedToJSON.1)
    let keyedCSVAnchor = try best {
        try timed("/usr/bin/sqlite3", ["-csv", keyedStore.path, query], output: path("anchor.csv"))
    }
    let keyedToCSV = try bestDecant(keyedStore, path("keyed-csv"), "csv", model: "keyed")
    line("keyed store → CSV", keyedCSVAnchor, keyedToCSV, ratio: keyedToCSV.0 / keyedCSVAnchor)
    for name in ["plain", "keyed", "from-plain.sqlite", "from-keyed.sqlite", "keyed.ndjson", "keyed-csv", "anchor.csv"] {
        try? FileManager.default.removeItem(at: path(name))
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
