// Issue 38.3: an inferred migration whose model sits in a large tree holding other projects' mapping models. The
// mapping search reads each found mapping model's hashes first and reads whole only the ones that fit a hop, so 45
// mapping models that fit none should cost next to nothing. In one run: Decant's inferred v1 → v2 migration of a
// store of notes (the MigrationBenchmark's model: one attribute renamed, one added with a default) with the model in
// a project tree holding 45 such mapping models, against the anchor, the same migration with no other mapping model
// in the tree. Each run is a child process (wall time and peak RSS from /usr/bin/time), best of three each; prints
// the ratio (target <= 1.1) and, for scale, what reading the 45 whole (as the search did before) takes in process.
//
// The 45 are real mapping models copied at run time from the shared corpus (never into the repository): the six
// largest (Apptentive's five, 448–488 KB, and LoopKit's 668 KB `xcmapping.xml`), cycled, one per project folder.
//
//   swift run -c release --package-path Benchmarks MappingSearchBenchmark [objects]   (default: 1000000)
//   MappingSearchBenchmark --corpus DIR      (where the corpora are; default: ../shared beside the package)
//   MappingSearchBenchmark --generate N STORE, then --migrate STORE OUT MODEL: one side alone, for profiling
import BenchmarkSupport
import Decant
import Foundation

let bundle = folderNotesBundle

/// A project folder (a `Package.swift` marks it) holding the model's folder `App/Model/` (the bundle's place: the
/// search starts there) and, under `Other/ProjectNN/`, a copy of each of `mappingModels`. Returns the model's URL.
func makeProject(at root: URL, mappingModels: [URL]) throws -> URL {
    let manager = FileManager.default
    let model = root.appendingPathComponent("App/Model/Notes.xcdatamodeld", isDirectory: true)
    try manager.createDirectory(at: model, withIntermediateDirectories: true)
    try Data("// swift-tools-version:6.0\n".utf8).write(to: root.appendingPathComponent("Package.swift"))
    for (index, source) in mappingModels.enumerated() {
        let project = root.appendingPathComponent(String(format: "Other/Project%02d", index + 1), isDirectory: true)
        try manager.createDirectory(at: project, withIntermediateDirectories: true)
        try manager.copyItem(at: source, to: project.appendingPathComponent(source.lastPathComponent))
    }
    return model
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--migrate", arguments.count == 4 {
    // The measured child: the migration as `decant migrate --model MODEL` runs it (the search on).
    var options = StoreMigration.Options(bundle: bundle)
    options.formatOptions.sqlite.journalMode = .delete
    options.modelURL = URL(fileURLWithPath: arguments[3])
    let report = try StoreMigration.migrate(
        store: URL(fileURLWithPath: arguments[1]), to: .file(URL(fileURLWithPath: arguments[2])), options: options)
    guard report.action == .migrated, report.ledgers.allSatisfy(\.isReconciled) else { exit(1) }
    exit(0)
}

if arguments.first == "--generate", arguments.count == 3, let count = Int(arguments[1]) {
    // Only write a v1 store of `count` notes (for profiling one side with --migrate).
    try generateFolderNotesStore(count: count, at: URL(fileURLWithPath: arguments[2]))
    exit(0)
}

var shared = URL(fileURLWithPath: #filePath)
for _ in 0..<5 { shared.deleteLastPathComponent() }  // main.swift, MappingSearchBenchmark, Sources, Benchmarks, package
shared.appendPathComponent("shared", isDirectory: true)
if let index = arguments.firstIndex(of: "--corpus"), index + 1 < arguments.count {
    shared = URL(fileURLWithPath: arguments[index + 1], isDirectory: true)
}
let apptentive = "corpus-apps/apptentive__apptentive-ios/Apptentive/Apptentive/Model"
let pool = ["v1 to v2", "v2 to v3", "v3 to v4", "v4 to v5", "v5 to v6"].map {
    shared.appendingPathComponent("\(apptentive)/ATDataModel \($0).xcmappingmodel")
} + [shared.appendingPathComponent("corpus-apps/LoopKit__LoopKit/LoopKit/Persistence/Modelv1v4.xcmappingmodel")]
for url in pool where !FileManager.default.fileExists(atPath: url.appendingPathComponent("xcmapping.xml").path) {
    throw BenchmarkError("no mapping model at \(url.path) (give the corpora's folder with --corpus DIR)")
}
let others = (0..<45).map { pool[$0 % pool.count] }
let xmlBytes = try others.reduce(0) { total, url in
    let attributes = try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("xcmapping.xml").path)
    return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
}

let objects = arguments.compactMap(Int.init).first ?? 1_000_000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-mapping-search-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let bare = try makeProject(at: folder.appendingPathComponent("Bare", isDirectory: true), mappingModels: [])
let crowded = try makeProject(at: folder.appendingPathComponent("Crowded", isDirectory: true), mappingModels: others)
let source = folder.appendingPathComponent("notes.sqlite")
try generateFolderNotesStore(count: objects, at: source)
sync()

// For scale: what the search did before, every found mapping model read whole (in this process, once).
let start = Date()
for index in others.indices {
    let url = folder.appendingPathComponent(String(format: "Crowded/Other/Project%02d", index + 1))
        .appendingPathComponent(others[index].lastPathComponent)
    _ = try XcodeMappingModel.load(contentsOf: url, bundle: bundle)
}
let wholeReads = Date().timeIntervalSince(start)

var anchor = (seconds: Double.infinity, peakMiB: 0.0)
var searched = (seconds: Double.infinity, peakMiB: 0.0)
let output = folder.appendingPathComponent("out.sqlite")
for _ in 0..<3 {
    // The two sides take turns, so that a slow second of the machine does not fall on one side only.
    for (model, isAnchor) in [(bare, true), (crowded, false)] {
        let run = try measure(CommandLine.arguments[0], ["--migrate", source.path, output.path, model.path])
        try? FileManager.default.removeItem(at: output)
        if isAnchor {
            anchor = (min(anchor.seconds, run.seconds), max(anchor.peakMiB, run.peakMiB))
        } else {
            searched = (min(searched.seconds, run.seconds), max(searched.peakMiB, run.peakMiB))
        }
    }
}
let ratio = searched.seconds / anchor.seconds
print("inferred migration of \(objects) notes, model in a project tree (best of 3 runs each)")
print(String(format: "  no other mapping model in the tree (anchor):   %6.2f s  %6.1f MiB", anchor.seconds, anchor.peakMiB))
print(
    String(
        format: "  45 other mapping models in the tree (%.1f MB): %6.2f s  %6.1f MiB", Double(xmlBytes) / 1_000_000,
        searched.seconds, searched.peakMiB))
print(String(format: "  ratio %.2f (target <= 1.10): ", ratio) + (ratio <= 1.1 ? "met" : "NOT met"))
print(String(format: "  for scale: reading the 45 whole, as the search did before, took %.2f s in process", wholeReads))
