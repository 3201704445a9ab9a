// What the benchmarks share: the Notes model and store generator, the error they throw, and the one way they measure
// a child process (wall time and that process's own peak RSS).
public import Decant
public import Foundation

/// A benchmark step that failed.
public struct BenchmarkError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The Notes model as a bundle of one version.
public let notesBundle = ModelBundle(
    name: "Notes", versions: [notesModel], currentVersionName: "Notes", sourceKind: .xcdatamodeld)

/// The Notes model every Notes benchmark uses: `Note{content, date, pinned, wordCount}`.
public let notesModel: ObjectModel = {
    var note = Entity(name: "Note")
    note.className = "Note"
    note.attributes = [
        Attribute(name: "content", type: .string, isOptional: true),
        Attribute(name: "date", type: .date, isOptional: true),
        Attribute(name: "pinned", type: .boolean, isOptional: true),
        Attribute(name: "wordCount", type: .integer32, isOptional: true),
    ]
    return ObjectModel(versionName: "Notes", entities: [note], versionIdentifiers: ["1"])
}()

/// The text of note `key`, ~40 bytes of words picked by the key (the same for every run), and its word count.
public func noteText(_ key: Int) -> (text: String, wordCount: Int) {
    let words = ["milk", "eggs", "bread", "call", "mum", "meeting", "at", "noon", "buy", "stamps", "and", "tea"]
    var text = ""
    var wordCount = 0
    var seed = key &* 2_654_435_761
    while text.utf8.count < 36 {
        text += (text.isEmpty ? "" : " ") + words[seed % words.count]
        seed = seed / words.count + key
        wordCount += 1
    }
    return (text, wordCount)
}

/// Writes a Notes store of `count` objects with ~40-byte texts, through Decant's writer, as a single file.
public func generateNotesStore(count: Int, at url: URL) throws {
    guard let layout = RecordLayout(entity: "Note", in: notesModel) else { throw BenchmarkError("no layout") }
    let writer = try SQLiteStoreWriter(creating: url, model: notesModel, journalMode: .delete)
    var batch = RecordBatch(layout: layout)
    var key = 0
    while key < count {
        batch.removeAll()
        for _ in 0..<min(4096, count - key) {
            key += 1
            let (text, wordCount) = noteText(key)
            batch.beginRecord(primaryKey: Int64(key))
            batch.appendText(text)  // content
            batch.appendReal(700_000_000 + Double(key) * 13.25)  // date
            batch.appendInteger(key % 7 == 0 ? 1 : 0)  // pinned
            batch.appendInteger(Int64(wordCount))  // wordCount
            batch.endRecord()
        }
        try writer.write(batch)
    }
    try writer.finish()
}

/// Runs `executable` with `arguments` (its output thrown away) and returns its wall seconds, from just before
/// `posix_spawn` to `wait4`'s return on the monotonic clock (to the microsecond: `/usr/bin/time` reports hundredths,
/// and Foundation's `Process.waitUntilExit` notices an exit up to 50 ms late), and its peak RSS in MiB (`wait4`'s).
public func measurePrecisely(_ executable: String, _ arguments: [String]) throws -> (seconds: Double, peakMiB: Double) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchmarkError("cannot start \(executable) (\(spawned))") }
    var status: Int32 = 0
    var usage = rusage()
    guard wait4(pid, &status, 0, &usage) == pid else { throw BenchmarkError("cannot wait for \(executable)") }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    // Exited normally with status 0.
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) failed (status \(status))")
    }
    return (seconds, Double(usage.ru_maxrss) / 1024)
}

/// Runs `arguments` under `/usr/bin/time`; returns wall seconds and peak RSS in MiB.
public func measure(_ executable: String, _ arguments: [String]) throws -> (seconds: Double, peakMiB: Double) {
    let report = FileManager.default.temporaryDirectory.appendingPathComponent("time-\(UUID().uuidString).txt")
    defer { try? FileManager.default.removeItem(at: report) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%e %M", "-o", report.path, executable] + arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
    }
    let fields = try String(contentsOf: report, encoding: .utf8).split(whereSeparator: \.isWhitespace)
    guard fields.count >= 2, let seconds = Double(fields[fields.count - 2]), let kib = Double(fields[fields.count - 1])
    else { throw BenchmarkError("cannot read /usr/bin/time's report") }
    return (seconds, kib / 1024)
}

/// Folders and notes in two versions (the Migration and MappingSearch benchmarks'): v1 `Folder{name}` ⇄
/// `Note{content, date, folder}`; v2 renames content → text (renaming identifier) and adds priority (Integer 16,
/// default 0).
public let folderNotesBundle: ModelBundle = {
    func model(_ version: Int) -> ObjectModel {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        var text = Attribute(name: version == 1 ? "content" : "text", type: .string, isOptional: true)
        if version == 2 { text.renamingIdentifier = "content" }
        note.attributes = [text, Attribute(name: "date", type: .date, isOptional: true)]
        if version == 2 {
            var priority = Attribute(name: "priority", type: .integer16)
            priority.defaultValue = "0"
            note.attributes.append(priority)
        }
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        return ObjectModel(versionName: "Notes \(version)", entities: [folder, note])
    }
    return ModelBundle(name: "Notes", versions: [model(1), model(2)], currentVersionName: "Notes 2", sourceKind: .xcdatamodeld)
}()

/// Writes a v1 store: `count` notes with ~40-byte texts in 1,000 folders, as a single file.
public func generateFolderNotesStore(count: Int, at url: URL) throws {
    let v1 = folderNotesBundle.versions[0]
    guard let folderLayout = RecordLayout(entity: "Folder", in: v1), let noteLayout = RecordLayout(entity: "Note", in: v1)
    else { throw BenchmarkError("no layouts") }
    let writer = try SQLiteStoreWriter(creating: url, model: v1, journalMode: .delete)
    var folders = RecordBatch(layout: folderLayout)
    for key in 1...1000 {
        folders.beginRecord(primaryKey: Int64(key))
        folders.appendText("Folder \(key)")
        folders.appendViaInverse()
        folders.endRecord()
    }
    try writer.write(folders)
    var batch = RecordBatch(layout: noteLayout)
    var key = 0
    while key < count {
        batch.removeAll()
        for _ in 0..<min(4096, count - key) {
            key += 1
            batch.beginRecord(primaryKey: Int64(key))
            batch.appendText(noteText(key).text)  // content
            batch.appendReal(700_000_000 + Double(key) * 13.25)  // date
            batch.appendReference(ObjectReference(entity: "Folder", id: .primaryKey(Int64(key % 1000 + 1))))
            batch.endRecord()
        }
        try writer.write(batch)
    }
    try writer.finish()
}
