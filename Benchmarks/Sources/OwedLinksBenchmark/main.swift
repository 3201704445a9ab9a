// A policy written as a mapping file, at scale: v1 `Measurement{value, geoLocations}` (a to-many with no inverse) and
// `GeoLocation{lat}`; v2 `Track{value, locations}` ⇄ `GeoLocation{lat, track}`, `track` required. The mapping file
// makes a Track per Measurement and lists its locations on it from the to-many side, while each GeoLocation is made by
// its own entry: every GeoLocation is owed its Track (Core Data sets the inverse of each relationship a mapping
// sets). The owners owed live in the job's reference map, which spills past 131,072 entries, so peak memory must not
// grow with the number of sources. Prints, per size, the time and the peak RSS of the process that migrated, and the
// ratios between the largest and the smallest size: peak RSS (flat: ≤ 1.15) and time per source (≤ 1.1 × linear).
//
//   swift run -c release --package-path Benchmarks OwedLinksBenchmark [measurements…]   (default: 250000 1000000)
import BenchmarkSupport
import Decant
import Foundation

let bundle: ModelBundle = {
    var measurement = Entity(name: "Measurement")
    measurement.attributes = [Attribute(name: "value", type: .double, isOptional: true)]
    measurement.relationships = [Relationship(name: "geoLocations", destination: "GeoLocation", toMany: true)]
    var location1 = Entity(name: "GeoLocation")
    location1.attributes = [Attribute(name: "lat", type: .double, isOptional: true)]
    var track = Entity(name: "Track")
    track.attributes = [Attribute(name: "value", type: .double, isOptional: true)]
    track.relationships = [Relationship(name: "locations", destination: "GeoLocation", inverse: "track", toMany: true)]
    var location2 = Entity(name: "GeoLocation")
    location2.attributes = [Attribute(name: "lat", type: .double, isOptional: true)]
    var owner = Relationship(name: "track", destination: "Track", inverse: "locations")
    owner.isOptional = false
    location2.relationships = [owner]
    return ModelBundle(
        name: "Tracks",
        versions: [
            ObjectModel(versionName: "Tracks 1", entities: [location1, measurement]),
            ObjectModel(versionName: "Tracks 2", entities: [location2, track]),
        ], currentVersionName: "Tracks 2", sourceKind: .xcdatamodeld)
}()

let mapping = """
    source: Tracks 1
    destination: Tracks 2
    entities:
      Track:
        from: Measurement
        relationships:
          locations: $source.geoLocations
    """

/// Writes a v1 store of `count` Measurements, each listing two GeoLocations of its own.
func generate(count: Int, at url: URL) throws {
    let v1 = bundle.versions[0]
    guard let locationLayout = RecordLayout(entity: "GeoLocation", in: v1),
        let measurementLayout = RecordLayout(entity: "Measurement", in: v1)
    else { throw BenchmarkError("no layouts") }
    let writer = try SQLiteStoreWriter(creating: url, model: v1, journalMode: .delete)
    var key = 0
    var locations = RecordBatch(layout: locationLayout)
    var measurements = RecordBatch(layout: measurementLayout)
    while key < count {
        locations.removeAll()
        measurements.removeAll()
        for _ in 0..<min(4096, count - key) {
            key += 1
            for side in 0..<2 {
                locations.beginRecord(primaryKey: Int64(2 * key - 1 + side))
                locations.appendReal(38.7 + Double(key % 1000) / 1000 + Double(side))
                locations.endRecord()
            }
            measurements.beginRecord(primaryKey: Int64(key))
            measurements.appendReal(Double(key) * 0.25)
            measurements.appendReferenceList([
                ObjectReference(entity: "GeoLocation", id: .primaryKey(Int64(2 * key - 1))),
                ObjectReference(entity: "GeoLocation", id: .primaryKey(Int64(2 * key))),
            ])
            measurements.endRecord()
        }
        try writer.write(locations)
        try writer.write(measurements)
    }
    try writer.finish()
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--migrate", arguments.count >= 4 {
    var options = StoreMigration.Options(bundle: bundle)
    // For comparison only: every set and map in memory.
    if arguments.count == 5, arguments[4] == "--in-memory" { options.environment.keySets = .inMemory }
    options.formatOptions.sqlite.journalMode = .delete
    try options.loadMappings(from: [URL(fileURLWithPath: arguments[3])])
    let report = try StoreMigration.migrate(
        store: URL(fileURLWithPath: arguments[1]), to: .file(URL(fileURLWithPath: arguments[2])), options: options)
    let measurements = try SQLiteStore(contentsOf: URL(fileURLWithPath: arguments[1])).objectCounts()["Measurement"] ?? 0
    guard report.action == .migrated, report.rejected == 0, report.written["Track"] == measurements,
        report.written["GeoLocation"] == 2 * measurements
    else {
        FileHandle.standardError.write(Data("unexpected report: \(report)\n".utf8))
        exit(1)
    }
    exit(0)
}

if arguments.first == "--generate", arguments.count == 3, let count = Int(arguments[1]) {
    try generate(count: count, at: URL(fileURLWithPath: arguments[2]))
    try Data(mapping.utf8).write(to: URL(fileURLWithPath: arguments[2] + ".yaml"))
    exit(0)
}

let sizes = arguments.compactMap(Int.init).isEmpty ? [250_000, 1_000_000] : arguments.compactMap(Int.init)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decant-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let file = folder.appendingPathComponent("Tracks1-Tracks2.yaml")
try Data(mapping.utf8).write(to: file)
print("measurements  sources    time      per source   peak RSS   (best of 3 runs; the owners spill past 131,072)")
var results: [(size: Int, seconds: Double, peakMiB: Double)] = []
for size in sizes {
    let source = folder.appendingPathComponent("tracks-\(size).sqlite")
    try generate(count: size, at: source)
    var best = (seconds: Double.infinity, peakMiB: 0.0)
    for _ in 0..<3 {
        let output = folder.appendingPathComponent("out-\(size).sqlite")
        let run = try measure(CommandLine.arguments[0], ["--migrate", source.path, output.path, file.path])
        try? FileManager.default.removeItem(at: output)
        best = (min(best.seconds, run.seconds), max(best.peakMiB, run.peakMiB))
    }
    results.append((size, best.seconds, best.peakMiB))
    print(
        String(
            format: "%12d  %8d  %7.2f s  %7.2f µs  %7.1f MiB", size, 3 * size, best.seconds,
            best.seconds / Double(3 * size) * 1e6, best.peakMiB))
    try? FileManager.default.removeItem(at: source)
}
if let first = results.first, let last = results.last, last.size > first.size {
    let memory = last.peakMiB / first.peakMiB
    let time = (last.seconds / Double(last.size)) / (first.seconds / Double(first.size))
    print(String(format: "peak RSS %dk → %dk: %.2f× (target ≤ 1.15, flat)", first.size / 1000, last.size / 1000, memory))
    print(String(format: "time per source %dk → %dk: %.2f× (target ≤ 1.1, linear)", first.size / 1000, last.size / 1000, time))
}
