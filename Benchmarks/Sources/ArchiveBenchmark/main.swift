// Decant's reading of a large legacy keyed archive (200k custom objects), against Python's NSKeyedUnArchiver 1.5.2
// on the same file, in one run. Prints the time ratio and the peak-memory ratio, per archive and output.
//
//   swift build -c release --package-path Benchmarks      (builds NotesApp beside ArchiveBenchmark, which runs it)
//   Benchmarks/.build/release/ArchiveBenchmark [objects]      (default: 200000)
//   ArchiveBenchmark --generate objects notes.archive      (only write Decant's archive, for profiling)
//   NotesApp objects notes.archive                         (only write Foundation's archive, for profiling)
//   ArchiveBenchmark --convert notes.archive notes.ndjson  (only Decant's side; or notes.sqlite for a store)
//
// Two archives of `objects` LegacyNote objects {content, date: NSDate, wordCount, pinned} in an NSArray:
// - Foundation's: written by Foundation's own NSKeyedArchiver (swift-corelibs-foundation) from NSObject subclasses
//   with NSCoding, by the NotesApp target of this package as `samples/LegacyNotes/NotesApp.swift` writes its notes:
//   texts with quotes, commas and (one note in two) multi-byte characters, a nil content in one note of fifty, and
//   each object's keys in the order of its own hash table (a different order from object to object).
// - Decant's: written by Decant's KeyedArchiveWriter in the layout Foundation writes (strings inline, one NSDate
//   object per note, one class dictionary per class), with ASCII texts and every key in one order.
// Decant converts each archive to NDJSON (`decant convert notes.archive notes.ndjson`, one JSON object per note)
// and to a SQLite store; Python unarchives it with `unserializeNSKeyedArchiver` and writes each note as one JSON
// line, or inserts the notes into a SQLite table (Python's sqlite3 module, one transaction): the same jobs.
// Python runs in its own venv, created on first use at Benchmarks/.build/archive-venv
// (`pip install NSKeyedUnArchiver==1.5.2`). Each side runs in a child process measured with `/usr/bin/time`
// (wall time, maximum resident set size).
import BenchmarkSupport
import Decant
import Foundation

/// Writes an archive of `count` notes with ~40-byte texts.
func generate(count: Int, at url: URL) throws {
    var writer = KeyedArchiveWriter()
    var notes: [PropertyListValue] = []
    notes.reserveCapacity(count)
    for key in 1...count {
        let (text, wordCount) = noteText(key)
        let content = writer.addValue(.string(text + " #\(key)"))
        let date = writer.addObject(
            className: "NSDate", classes: ["NSDate", "NSObject"],
            fields: ["NS.time": .real(700_000_000 + Double(key) * 13.25)])
        let note = writer.addObject(
            className: "NotesApp.LegacyNote",
            fields: [
                "content": content.uid, "date": date.uid, "pinned": .bool(key % 7 == 0),
                "wordCount": .integer(Int64(wordCount)),
            ])
        notes.append(note.uid)
    }
    let root = writer.addArray(notes)
    try writer.encodedData(root: root).write(to: url)
}

/// The venv with NSKeyedUnArchiver 1.5.2, created on first use.
func pythonWithUnarchiver() throws -> String {
    let venv = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/archive-venv")
    let python = venv.appendingPathComponent("bin/python").path
    func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("\(executable) \(arguments) failed") }
    }
    if !FileManager.default.isExecutableFile(atPath: python) {
        try run("/usr/bin/env", ["python3", "-m", "venv", venv.path])
    }
    try run(python, ["-m", "pip", "install", "--quiet", "NSKeyedUnArchiver==1.5.2"])
    return python
}

/// Python's side: unarchive, then write one JSON line per note, or (to a `.sqlite` path) insert the notes into a
/// table of a new SQLite database.
let pythonScript = """
    import json, sqlite3, sys
    from NSKeyedUnArchiver import unserializeNSKeyedArchiver
    notes = unserializeNSKeyedArchiver(open(sys.argv[1], 'rb').read())
    if sys.argv[2].endswith('.sqlite'):
        db = sqlite3.connect(sys.argv[2])
        db.execute('CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCONTENT VARCHAR, '
                   'ZDATE TIMESTAMP, ZPINNED INTEGER, ZWORDCOUNT INTEGER)')
        epoch = 978307200  # 2001-01-01, Core Data's reference date
        db.executemany('INSERT INTO ZNOTE VALUES (?, 1, 1, ?, ?, ?, ?)',
                       ((key, note.get('content'), note['date'].timestamp() - epoch, int(note.get('pinned', False)),
                         note.get('wordCount')) for key, note in enumerate(notes, 1)))
        db.commit()
        assert db.execute('SELECT count(*) FROM ZNOTE').fetchone()[0] == len(notes)
    else:
        with open(sys.argv[2], 'w') as out:
            for note in notes:
                out.write(json.dumps({k: (v.isoformat() if hasattr(v, 'isoformat') else v) for k, v in note.items()}))
                out.write('\\n')
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--convert", arguments.count == 3 {
    let bundle = ModelBundle(
        name: "Notes", versions: [notesModel], currentVersionName: "Notes", sourceKind: .xcdatamodeld)
    var options = FormatOptions(bundle: bundle)
    options.archive.classEntities = ["LegacyNote": "Note"]
    options.sqlite.journalMode = .delete
    let report = try StoreConversion.convert(
        from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]), options: options)
    guard report.written["Note"] != nil, report.read == report.written else { exit(1) }
    exit(0)
}

if arguments.first == "--generate", arguments.count == 3, let count = Int(arguments[1]) {
    // For profiling one side alone: write the archive and stop.
    try generate(count: count, at: URL(fileURLWithPath: arguments[2]))
    exit(0)
}

let count = arguments.compactMap(Int.init).first ?? 200_000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-archive-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
// Foundation's archive, written by the NotesApp executable built beside this one.
let foundationArchive = folder.appendingPathComponent("foundation-notes.archive")
let notesApp = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("NotesApp").path
guard FileManager.default.isExecutableFile(atPath: notesApp) else {
    throw BenchmarkError("no \(notesApp): build it first (swift build -c release --package-path Benchmarks)")
}
_ = try measure(notesApp, [String(count), foundationArchive.path])
let decantArchive = folder.appendingPathComponent("decant-notes.archive")
try generate(count: count, at: decantArchive)
let archives = [("Foundation's NSKeyedArchiver", foundationArchive), ("Decant's KeyedArchiveWriter", decantArchive)]
for (writer, archive) in archives {
    let size = (try FileManager.default.attributesOfItem(atPath: archive.path)[.size] as? Int) ?? 0
    print("archive by \(writer): \(count) LegacyNote objects, \(size / 1024) KiB")
}

let python = try pythonWithUnarchiver()
let script = folder.appendingPathComponent("unarchive.py")
try pythonScript.write(to: script, atomically: true, encoding: .utf8)

/// The number of lines of a text file.
func lineCount(_ url: URL) throws -> Int {
    try Data(contentsOf: url).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
}

print("")
print("archive by                    output    Python      Decant    speed-up   Python RSS  Decant RSS  memory ratio  verdict")
let targetSpeedUp = 20.0
let targetMemoryRatio = 0.1
var missed: [String] = []
// Best of three runs each (the shortest time; the largest peak RSS of the three), the two sides taking turns: this
// machine's speed drifts over seconds, and Decant's three runs in a row would all fall in one slow second.
for (writer, archive) in archives {
    for output in ["ndjson", "sqlite"] {
        var theirs = (seconds: Double.infinity, peakMiB: 0.0)
        var ours = (seconds: Double.infinity, peakMiB: 0.0)
        let pythonOutput = folder.appendingPathComponent("notes-python.\(output)")
        let decantOutput = folder.appendingPathComponent("notes-decant.\(output)")
        for _ in 0..<3 {
            try? FileManager.default.removeItem(at: pythonOutput)
            let unarchived = try measure(python, [script.path, archive.path, pythonOutput.path])
            theirs = (min(theirs.seconds, unarchived.seconds), max(theirs.peakMiB, unarchived.peakMiB))
            try? FileManager.default.removeItem(at: decantOutput)
            let converted = try measure(CommandLine.arguments[0], ["--convert", archive.path, decantOutput.path])
            ours = (min(ours.seconds, converted.seconds), max(ours.peakMiB, converted.peakMiB))
        }
        if output == "ndjson" {
            let lines = try lineCount(pythonOutput)
            guard lines == count else { throw BenchmarkError("Python wrote \(lines) lines, not \(count)") }
            // Decant's first line is the document header.
            let decantLines = try lineCount(decantOutput)
            guard decantLines == count + 1 else {
                throw BenchmarkError("Decant wrote \(decantLines) lines, not \(count + 1)")
            }
        }
        // (Python's script checks its table's row count; Decant's side exits 1 unless it wrote every note it read.)
        let speedUp = theirs.seconds / max(ours.seconds, 0.01)
        let memoryRatio = ours.peakMiB / max(theirs.peakMiB, 0.01)
        let label = "\(writer) → \(output == "ndjson" ? "NDJSON" : "store")"
        var misses: [String] = []
        if speedUp < targetSpeedUp { misses.append(String(format: "%.1f× faster", speedUp)) }
        if memoryRatio > targetMemoryRatio { misses.append(String(format: "memory ratio %.3f", memoryRatio)) }
        if !misses.isEmpty { missed.append("\(label): \(misses.joined(separator: ", "))") }
        print(
            writer.padding(toLength: 28, withPad: " ", startingAt: 0) + "  "
                + (output == "ndjson" ? "→ NDJSON" : "→ store ")
                + String(
                    format: "  %7.2f s   %7.2f s   %6.1f×   %7.1f MiB  %7.1f MiB   %.3f", theirs.seconds, ours.seconds,
                    speedUp, theirs.peakMiB, ours.peakMiB, memoryRatio)
                + "         " + (misses.isEmpty ? "met" : "NOT met (\(misses.joined(separator: ", ")))"))
    }
}
print("(best of 3 runs each, the two sides taking turns; targets: ≥ 20× faster, ≤ 0.1 of the peak memory)")
if missed.isEmpty {
    print("every target met")
} else {
    print("targets NOT met:")
    for miss in missed { print("  \(miss)") }
}
