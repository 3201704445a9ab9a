// Decant's reading of a large legacy keyed archive (200k custom objects), against Python's NSKeyedUnArchiver 1.5.2
// on the same file, in one run. Prints the time ratio and the peak-memory ratio.
//
//   swift run -c release --package-path Benchmarks ArchiveBenchmark [objects]      (default: 200000)
//   ArchiveBenchmark --generate objects notes.archive      (only write the archive, for profiling)
//   ArchiveBenchmark --convert notes.archive notes.ndjson  (only Decant's side)
//
// The archive holds `objects` LegacyNote objects {content: NSString, date: NSDate, wordCount, pinned} in an NSArray,
// written by Decant's KeyedArchiveWriter in the layout Foundation's NSKeyedArchiver writes (strings inline, one
// NSDate object per note, one class dictionary per class). Decant converts the archive to NDJSON
// (`decant convert notes.archive notes.ndjson`, one JSON object per note); Python unarchives it with
// `unserializeNSKeyedArchiver` and writes each note as one JSON line: the same job.
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

/// Python's side: unarchive, then write one JSON line per note.
let pythonScript = """
    import json, sys
    from NSKeyedUnArchiver import unserializeNSKeyedArchiver
    notes = unserializeNSKeyedArchiver(open(sys.argv[1], 'rb').read())
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
let archive = folder.appendingPathComponent("notes.archive")
try generate(count: count, at: archive)
let size = (try FileManager.default.attributesOfItem(atPath: archive.path)[.size] as? Int) ?? 0
print("archive: \(count) LegacyNote objects, \(size / 1024) KiB")

let python = try pythonWithUnarchiver()
let script = folder.appendingPathComponent("unarchive.py")
try pythonScript.write(to: script, atomically: true, encoding: .utf8)
// Best of three runs each (the shortest time; the largest peak RSS of the three), the two sides taking turns: this
// machine's speed drifts over seconds, and Decant's three runs in a row would all fall in one slow second.
var theirs = (seconds: Double.infinity, peakMiB: 0.0)
var ours = (seconds: Double.infinity, peakMiB: 0.0)
let output = folder.appendingPathComponent("notes-decant.ndjson")
for _ in 0..<3 {
    let unarchived = try measure(
        python, [script.path, archive.path, folder.appendingPathComponent("notes.ndjson").path])
    theirs = (min(theirs.seconds, unarchived.seconds), max(theirs.peakMiB, unarchived.peakMiB))
    try? FileManager.default.removeItem(at: output)
    let converted = try measure(CommandLine.arguments[0], ["--convert", archive.path, output.path])
    ours = (min(ours.seconds, converted.seconds), max(ours.peakMiB, converted.peakMiB))
}
let lines = (try? String(contentsOf: folder.appendingPathComponent("notes.ndjson"), encoding: .utf8))?
    .split(separator: "\n").count ?? 0
guard lines == count else { throw BenchmarkError("Python wrote \(lines) lines, not \(count)") }
let decantLines = (try? String(contentsOf: output, encoding: .utf8))?.split(separator: "\n").count ?? 0
// Decant's first line is the document header.
guard decantLines == count + 1 else { throw BenchmarkError("Decant wrote \(decantLines) lines, not \(count + 1)") }

print("                          time        peak RSS   (best of 3 runs each, taking turns)")
print(String(format: "Python NSKeyedUnArchiver  %7.2f s   %8.1f MiB", theirs.seconds, theirs.peakMiB))
print(String(format: "Decant (→ NDJSON)         %7.2f s   %8.1f MiB", ours.seconds, ours.peakMiB))
print(
    String(
        format: "Decant is %.1f× faster, with %.3f of the peak memory (targets: ≥ 20×, ≤ 0.1)",
        theirs.seconds / max(ours.seconds, 0.01), ours.peakMiB / max(theirs.peakMiB, 0.01)))
