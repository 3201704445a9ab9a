// `--where 'content IN[c] {…}'` on a Notes store (a case-insensitive IN is not pushed into SQL: it runs in the record
// stream), for lists of 1,000 to 8,000 strings: the time should grow no faster than the list (each object is looked
// up in a set, not compared with every item; before, 5,000 items on 8,000 objects took 27 s). Prints each size's
// wall time, peak RSS and the ratio to the previous size's time (2.0 or less per doubling is linear).
//
//   swift run -c release --package-path Benchmarks PredicateBenchmark [objects]   (default: 8000)
import BenchmarkSupport
import Decant
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--where", arguments.count == 4 {
    // The measured child: one conversion with the predicate read from a file.
    var options = FormatOptions(bundle: notesBundle)
    options.entity = "Note"
    let text = try String(contentsOf: URL(fileURLWithPath: arguments[3]), encoding: .utf8)
    let selection = RecordSelection(entities: ["Note"], predicate: try ObjectPredicate(parsing: text))
    let report = try StoreConversion.convert(
        from: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]), outputFormat: "ndjson",
        options: options, selection: selection)
    exit(report.written.values.reduce(0, +) > 0 ? 0 : 1)
}

let objects = arguments.compactMap(Int.init).first ?? 8000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-predicate-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let store = folder.appendingPathComponent("Notes.sqlite")
try generateNotesStore(count: objects, at: store)

print("IN[c] over \(objects) objects (record stream)")
print("items   seconds   peak MiB   ratio to previous")
var previous: Double?
for items in [1000, 2000, 4000, 8000] {
    // Every note's text in upper case (half of them match, whatever the size), then texts no note has.
    let texts = (1...items).map { $0 % 2 == 0 ? noteText($0).text.uppercased() : "no note says \($0)" }
    let predicate = "content IN[c] {" + texts.map { "'\($0)'" }.joined(separator: ", ") + "}"
    let predicateFile = folder.appendingPathComponent("where-\(items).txt")
    try Data(predicate.utf8).write(to: predicateFile)
    let output = folder.appendingPathComponent("out-\(items).ndjson")
    let run = try measure(CommandLine.arguments[0], ["--where", store.path, output.path, predicateFile.path])
    let ratio = previous.map { String(format: "%.2f", run.seconds / max($0, 0.001)) } ?? "-"
    print(String(format: "%5d   %7.2f   %8.1f   ", items, run.seconds, run.peakMiB) + ratio)
    previous = run.seconds
}
