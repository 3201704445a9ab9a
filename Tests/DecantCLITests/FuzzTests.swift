import DecantTestSupport
import Foundation
import Testing

/// Runs the built `decant` binary on damaged copies of the corpus's real files and checks that every run ends
/// cleanly: exit 0, or 64/65/66/74 with an `Error:` line naming a path; never a signal, a hang or another status.
///
/// Deterministic: case `i` of seed `s` always makes the same damage. Environment variables widen a local run:
/// `DECANT_FUZZ_SEED` (decimal or `0x` hex), `DECANT_FUZZ_COUNT` (cases; 80 in `make test`, 320 in `make test-all`),
/// and `DECANT_FUZZ_CASE` (run that one case only, to reproduce a failure). A failing case's files are kept and
/// their folder is printed; the corpus itself is only ever read.
@Suite("fuzz: decant on damaged inputs", .serialized, .tags(.slow))
struct FuzzTests {
    static let binary = EndToEndTests.binary

    static let environment = ProcessInfo.processInfo.environment
    static let seed: UInt64 = environment["DECANT_FUZZ_SEED"].flatMap(parseNumber) ?? 0xDEC0DE
    /// 80 cases in `make test`, 320 with `DECANT_FULL_TESTS=1` (`make test-all`).
    static let count: Int = TestScale.count("DECANT_FUZZ_COUNT", quick: 80, full: 320)
    static let onlyCase: Int? = environment["DECANT_FUZZ_CASE"].flatMap(parseNumber).map(Int.init)
    /// Seconds one run of `decant` may take before it counts as a hang: a debug build's slowest case takes a few
    /// seconds alone, and CI may run it on a loaded 2-core machine beside the other tests, so only a run that has
    /// clearly stopped making progress counts.
    static let timeout: TimeInterval = 120
    /// Exit statuses that mean "finished as designed": success, usage, bad data, missing input, I/O error.
    static let acceptedStatuses: Set<Int32> = [0, 64, 65, 66, 74]

    static func parseNumber(_ text: String) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    @Test(.requiresDecantBinary) func damagedCorpusFilesFailCleanly() throws {
        let corpus = FuzzCorpus()
        try #require(!corpus.modelSources.isEmpty && !corpus.stores.isEmpty, "the corpus is missing")
        let root = try Fixtures.temporaryDirectory().appendingPathComponent("fuzz-\(String(Self.seed, radix: 16))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var failures = 0
        var statuses: [Int32: Int] = [:]
        let indices = Self.onlyCase.map { [$0] } ?? Array(0..<Self.count)
        for index in indices {
            let fuzzCase = try FuzzCase(index: index, seed: Self.seed, corpus: corpus, root: root)
            var failed = false
            for arguments in fuzzCase.commands {
                let (status, problem) = try Self.check(arguments, in: fuzzCase)
                statuses[status, default: 0] += 1
                guard let problem else { continue }
                failed = true
                failures += 1
                if failures <= 25 { Issue.record(Comment(rawValue: fuzzCase.report(problem, arguments: arguments))) }
                break
            }
            if !failed { try? FileManager.default.removeItem(at: fuzzCase.folder) }
        }
        if failures > 25 { Issue.record("\(failures - 25) more failing cases were not reported one by one") }
        let summary = statuses.keys.sorted().map { "\($0 < 0 ? "hang/signal" : "exit \($0)"): \(statuses[$0] ?? 0)" }
        let seedText = "0x" + String(Self.seed, radix: 16)
        print("fuzz seed \(seedText), \(indices.count) case(s): " + summary.joined(separator: ", "))
        if failures == 0 {
            try? FileManager.default.removeItem(at: root.deletingLastPathComponent())
        }
    }

    /// Runs decant once; returns its exit status (-1 for a hang or a signal) and what was wrong with the run, or
    /// nil when it ended cleanly.
    static func check(_ arguments: [String], in fuzzCase: FuzzCase) throws -> (Int32, String?) {
        // A memory limit turns runaway allocation into a visible crash instead of a swapping machine.
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -v 2097152 && exec \"$0\" \"$@\"", binary.path] + arguments,
            timeout: timeout)
        let stderr = outcome.errors
        let status = outcome.status
        if outcome.timedOut { return (-1, "hang: still running after \(Int(timeout)) s (killed)") }
        if let signal = outcome.signal { return (-1, "crash: killed by signal \(signal)\n" + excerpt(stderr)) }
        if status >= 128 { return (status, "crash: exit status \(status)\n" + excerpt(stderr)) }
        guard acceptedStatuses.contains(status) else {
            return (status, "unexpected exit status \(status)\n" + excerpt(stderr))
        }
        if status != 0 {
            let lines = stderr.split(separator: "\n")
            let named = lines.contains { $0.hasPrefix("Error: ") && $0.contains(fuzzCase.folder.path) }
            if !named { return (status, "exit \(status) without an `Error:` line naming a path\n" + excerpt(stderr)) }
        }
        return (status, nil)
    }

    static func excerpt(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(12)
        return "stderr:\n" + lines.map { "  " + $0.prefix(300) }.joined(separator: "\n")
    }
}

/// A small deterministic generator (SplitMix64), so a seed and a case index always give the same damage.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0).
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }

    mutating func pick<T>(_ items: [T]) -> T {
        items[below(items.count)]
    }

    mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}

/// The corpus files the fuzz cases start from.
struct FuzzCorpus {
    /// `.xcdatamodel` folders that hold a `contents` file.
    let modelSources: [URL]
    let sourceBundles: [URL]
    let compiledBundles: [URL]
    /// `.mom` files (inside the `.momd` bundles).
    let compiledModels: [URL]
    /// Keyed archives and property lists (binary or XML) outside model bundles.
    let archives: [URL]
    let stores: [URL]

    /// The model bundles near a store (in its folder's parent, recursively), to pass as `--model`.
    func models(near store: URL) -> [URL] {
        let parent = store.deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL.path + "/"
        return (sourceBundles + compiledBundles).filter { $0.standardizedFileURL.path.hasPrefix(parent) }
    }

    init() {
        let manager = FileManager.default
        func items(_ extensions: Set<String>) -> [URL] {
            Fixtures.corpusItems { extensions.contains($0.pathExtension) }
        }
        modelSources = items(["xcdatamodel"]).filter {
            manager.fileExists(atPath: $0.appendingPathComponent("contents").path)
        }
        sourceBundles = items(["xcdatamodeld"])
        compiledBundles = items(["momd"])
        compiledModels = compiledBundles.flatMap { bundle in
            ((try? manager.contentsOfDirectory(at: bundle, includingPropertiesForKeys: nil)) ?? [])
                .filter { $0.pathExtension == "mom" }.sorted { $0.path < $1.path }
        }
        archives = items(["archive", "cdm", "bin", "plist"]).filter { url in
            guard !url.path.contains(".momd/") else { return false }
            let handle: FileHandle
            do {
                handle = try FileHandle(forReadingFrom: url)
            } catch {
                Issue.record("cannot read the corpus file \(url.path): \(error)")
                return false
            }
            defer { try? handle.close() }
            let header = (try? handle.read(upToCount: 8)) ?? Data()
            return header.starts(with: Data("bplist00".utf8)) || header.starts(with: Data("<?xml".utf8))
        }
        stores = Fixtures.corpusItems(where: Fixtures.isStore)
    }
}

/// One damaged input: a copy of a corpus item in its own folder, the damage done to it, and the commands to run.
struct FuzzCase {
    let index: Int
    let seed: UInt64
    let folder: URL
    /// The corpus file (or folder) the copy came from, relative to the corpus.
    private(set) var source = ""
    /// What was done to the copy, precisely enough to read.
    private(set) var mutation = ""
    /// The file that was damaged, inside `folder`.
    private(set) var damagedFile: URL
    private(set) var commands: [[String]] = []

    private var random: SplitMix64

    init(index: Int, seed: UInt64, corpus: FuzzCorpus, root: URL) throws {
        self.index = index
        self.seed = seed
        folder = root.appendingPathComponent("case-\(index)", isDirectory: true)
        damagedFile = folder
        random = SplitMix64(state: seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Every eighth case is one of the generated hostile documents; the rest damage corpus files by kind.
        switch index % 8 {
        case 0: try makeModelSource(corpus, hostile: true)
        case 1, 2: try makeModelSource(corpus, hostile: false)
        case 3: try makeCompiledModel(corpus)
        case 4: try makeSourceBundleOrArchive(corpus)
        default: try makeStore(corpus)
        }
    }

    /// The failure text: what failed, and how to reproduce it.
    func report(_ problem: String, arguments: [String]) -> String {
        let lines = problem.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let details = lines.count > 1 ? "\n" + lines[1] : ""
        return """
        fuzz case \(index) (seed 0x\(String(seed, radix: 16))): \(lines.first ?? "")
          mutation: \(mutation)
          source:   corpus/\(source)
          damaged:  \(damagedFile.path)
          command:  decant \(arguments.map(Self.quoted).joined(separator: " "))
          kept in:  \(folder.path)
          rerun:    DECANT_FUZZ_SEED=0x\(String(seed, radix: 16)) DECANT_FUZZ_CASE=\(index) \
        swift test --skip-build --filter FuzzTests\(details)
        """
    }

    static func quoted(_ argument: String) -> String {
        argument.contains(" ") ? "'\(argument)'" : argument
    }

    // MARK: Copying

    /// Copies a corpus item into the case folder (as `name`, default its own name) and makes the copy writable.
    private mutating func copy(_ item: URL, as name: String? = nil) throws -> URL {
        let manager = FileManager.default
        let target = folder.appendingPathComponent(name ?? item.lastPathComponent)
        try manager.copyItem(at: item, to: target)
        source = Fixtures.corpusRelativePath(item)
        // Corpus files are read-only; their copies must not be.
        var isDirectory: ObjCBool = false
        _ = manager.fileExists(atPath: target.path, isDirectory: &isDirectory)
        try manager.setAttributes([.posixPermissions: isDirectory.boolValue ? 0o755 : 0o644], ofItemAtPath: target.path)
        if isDirectory.boolValue, let walker = manager.enumerator(at: target, includingPropertiesForKeys: nil) {
            for case let child as URL in walker {
                _ = manager.fileExists(atPath: child.path, isDirectory: &isDirectory)
                try manager.setAttributes(
                    [.posixPermissions: isDirectory.boolValue ? 0o755 : 0o644], ofItemAtPath: child.path)
            }
        }
        return target
    }

    private mutating func inspect(_ url: URL) {
        commands.append(["inspect", url.path] + (random.chance(30) ? ["--json"] : []))
    }

    // MARK: Kinds of case

    private mutating func makeModelSource(_ corpus: FuzzCorpus, hostile: Bool) throws {
        let model = try copy(random.pick(corpus.modelSources))
        let contents = model.appendingPathComponent("contents")
        damagedFile = contents
        var data = try Data(contentsOf: contents)
        if hostile {
            data = hostileModel(data)
        } else {
            data = random.chance(50) ? xmlDamage(data) : byteDamage(data)
        }
        try data.write(to: contents)
        inspect(model)
    }

    private mutating func makeCompiledModel(_ corpus: FuzzCorpus) throws {
        if random.chance(50) {
            let bundle = try copy(random.pick(corpus.compiledBundles))
            let members = try FileManager.default.contentsOfDirectory(at: bundle, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "mom" || $0.lastPathComponent == "VersionInfo.plist" }
                .sorted { $0.path < $1.path }
            damagedFile = random.pick(members)
            var data = try Data(contentsOf: damagedFile)
            if damagedFile.lastPathComponent == "VersionInfo.plist", random.chance(50) {
                // Apple writes it in binary; the XML form goes through the XML reader.
                data = try Self.xmlPropertyList(from: data)
                data = random.chance(70) ? xmlDamage(data, plist: true) : byteDamage(data)
            } else {
                data = random.chance(30) ? binaryPropertyListDamage(data) : byteDamage(data)
            }
            try data.write(to: damagedFile)
            inspect(bundle)
        } else {
            let model = try copy(random.pick(corpus.compiledModels))
            damagedFile = model
            var data = try Data(contentsOf: model)
            data = random.chance(30) ? binaryPropertyListDamage(data) : byteDamage(data)
            try data.write(to: model)
            inspect(model)
        }
    }

    private mutating func makeSourceBundleOrArchive(_ corpus: FuzzCorpus) throws {
        if random.chance(50) {
            let bundle = try copy(random.pick(corpus.sourceBundles))
            let manager = FileManager.default
            var candidates = try manager.contentsOfDirectory(at: bundle, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "xcdatamodel" }
                .flatMap { [$0.appendingPathComponent("contents"), $0.appendingPathComponent("elements")] }  // Xcode 3
                .filter { manager.fileExists(atPath: $0.path) }
            let current = bundle.appendingPathComponent(".xccurrentversion")
            if manager.fileExists(atPath: current.path) { candidates.append(current) }
            guard !candidates.isEmpty else {
                mutation = "none (the bundle has no contents file)"
                inspect(bundle)
                return
            }
            damagedFile = random.pick(candidates.sorted { $0.path < $1.path })
            let data = try Data(contentsOf: damagedFile)
            let plist = damagedFile.lastPathComponent == ".xccurrentversion"
            if damagedFile.lastPathComponent == "elements" {
                try (random.chance(50) ? binaryPropertyListDamage(data) : byteDamage(data)).write(to: damagedFile)
            } else {
                try (random.chance(50) ? xmlDamage(data, plist: plist) : byteDamage(data)).write(to: damagedFile)
            }
            inspect(bundle)
        } else {
            // A keyed archive or property list named as a compiled model goes through the archive readers.
            let item = random.pick(corpus.archives)
            let archive = try copy(item, as: item.deletingPathExtension().lastPathComponent + ".mom")
            damagedFile = archive
            var data = try Data(contentsOf: archive)
            if data.starts(with: Data("<?xml".utf8)) {
                data = random.chance(60) ? xmlDamage(data, plist: true) : byteDamage(data)
            } else {
                data = random.chance(30) ? binaryPropertyListDamage(data) : byteDamage(data)
            }
            try data.write(to: archive)
            inspect(archive)
        }
    }

    private mutating func makeStore(_ corpus: FuzzCorpus) throws {
        let original = random.pick(corpus.stores)
        let store = try copy(original)
        damagedFile = store
        if random.chance(60) {
            // Python's sqlite3 makes the damage a corrupted file cannot: wrong types, missing rows and tables.
            let operation = random.pick(Self.sqlOperations)
            let detailSeed = random.next() % 1_000_000
            let outcome = try Self.python(Self.sqlDamageScript, [store.path, operation, String(detailSeed)])
            mutation = "SQL damage \(operation) (python seed \(detailSeed)): " + outcome.output
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if outcome.status != 0 { mutation += " [python failed: \(outcome.errors.suffix(200))]" }
        } else {
            var data = try Data(contentsOf: store)
            data = random.chance(50) ? pageDamage(data) : byteDamage(data)
            try data.write(to: store)
        }
        // Half the time against a model bundle from beside the store (read-only, straight from the corpus).
        let models = corpus.models(near: original)
        let model = !models.isEmpty && random.chance(50) ? ["--model", random.pick(models).path] : []
        commands.append(["inspect", store.path] + model + (random.chance(30) ? ["--json"] : []))
        commands.append(["convert", store.path, folder.appendingPathComponent("converted.sqlite").path] + model)
    }

    // MARK: Damage

    /// Bit flips, overwritten or duplicated or deleted chunks, truncation, inserted bytes.
    private mutating func byteDamage(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        guard !bytes.isEmpty else {
            mutation = "none (empty file)"
            return data
        }
        switch random.below(6) {
        case 0:
            let flips = 1 + random.below(8)
            var offsets: [Int] = []
            for _ in 0..<flips {
                let offset = random.below(bytes.count)
                bytes[offset] ^= 1 << UInt8(random.below(8))
                offsets.append(offset)
            }
            mutation = "flipped \(flips) bit(s) at offsets \(offsets)"
        case 1:
            let offset = random.below(bytes.count)
            let length = min(1 + random.below(16), bytes.count - offset)
            let value = random.pick([0x00, 0xFF, 0x7F, 0x80, UInt8(random.below(256))] as [UInt8])
            bytes.replaceSubrange(offset..<(offset + length), with: repeatElement(value, count: length))
            mutation = "overwrote \(length) byte(s) at offset \(offset) with 0x\(String(value, radix: 16))"
        case 2:
            let length = random.below(bytes.count)
            bytes.removeSubrange(length...)
            mutation = "truncated to \(length) of \(data.count) bytes"
        case 3:
            let start = random.below(bytes.count)
            let length = min(1 + random.below(256), bytes.count - start)
            let target = random.below(bytes.count + 1)
            bytes.insert(contentsOf: bytes[start..<(start + length)], at: target)
            mutation = "duplicated \(length) byte(s) from offset \(start) at offset \(target)"
        case 4:
            let start = random.below(bytes.count)
            let length = min(1 + random.below(256), bytes.count - start)
            bytes.removeSubrange(start..<(start + length))
            mutation = "deleted \(length) byte(s) at offset \(start)"
        default:
            let target = random.below(bytes.count + 1)
            let inserted = (0..<(1 + random.below(8))).map { _ in UInt8(random.below(256)) }
            bytes.insert(contentsOf: inserted, at: target)
            mutation = "inserted bytes \(inserted) at offset \(target)"
        }
        return Data(bytes)
    }

    /// Bytes that are not valid UTF-8 on their own (a stray continuation, a lead with no continuation, an
    /// overlong lead, a surrogate, values above U+10FFFF).
    private static let invalidUTF8: [[UInt8]] = [
        [0x80], [0xBF], [0xC0], [0xC3], [0xE9], [0xED, 0xA0, 0x80], [0xF5], [0xFF],
    ]

    /// Damage aimed at XML: invalid UTF-8 in an element name, attribute name or comment; a mismatched tag.
    private mutating func xmlDamage(_ data: Data, plist: Bool = false) -> Data {
        var bytes = [UInt8](data)
        let bad = random.pick(Self.invalidUTF8)
        let hex = bad.map { String(format: "%02X", $0) }.joined(separator: " ")
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        let elementNames = bytes.indices.dropLast().filter { bytes[$0] == UInt8(ascii: "<") && isLetter(bytes[$0 + 1]) }
        let attributeNames = bytes.indices.dropFirst().filter {
            bytes[$0] == UInt8(ascii: "=") && isLetter(bytes[$0 - 1])
        }
        switch random.below(plist ? 4 : 5) {
        case 0 where !elementNames.isEmpty:
            let offset = random.pick(elementNames) + 2
            bytes.insert(contentsOf: bad, at: offset)
            mutation = "invalid UTF-8 [\(hex)] inserted into an element name at offset \(offset)"
        case 1 where !attributeNames.isEmpty:
            let offset = random.pick(attributeNames)
            bytes.insert(contentsOf: bad, at: offset)
            mutation = "invalid UTF-8 [\(hex)] inserted into an attribute name at offset \(offset)"
        case 2:
            let comment = Array("<!-- fuzz ".utf8) + bad + Array(" -->".utf8)
            let offset = Self.endOfDeclaration(bytes)
            bytes.insert(contentsOf: comment, at: offset)
            mutation = "comment holding invalid UTF-8 [\(hex)] inserted at offset \(offset)"
        case 3 where elementNames.count > 2:
            // Rename one start tag so its end tag no longer matches.
            let offset = random.pick(elementNames) + 1
            bytes.insert(contentsOf: Array("fuzz".utf8), at: offset)
            mutation = "start tag renamed (mismatched end tag) at offset \(offset)"
        case 4:
            let offset = random.pick(elementNames.isEmpty ? [0] : elementNames)
            bytes.insert(contentsOf: bad, at: offset)
            mutation = "invalid UTF-8 [\(hex)] inserted before a tag at offset \(offset)"
        default:
            return byteDamage(data)
        }
        return Data(bytes)
    }

    /// The offset just after the XML declaration (`?>`), or 0.
    private static func endOfDeclaration(_ bytes: [UInt8]) -> Int {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return 0 }
        let end = bytes.indices.dropLast().first {
            bytes[$0] == UInt8(ascii: "?") && bytes[$0 + 1] == UInt8(ascii: ">")
        }
        return end.map { $0 + 2 } ?? 0
    }

    /// Generated hostile model documents: very deep nesting, a deeply nested derivation, an entity bomb.
    private mutating func hostileModel(_ data: Data) -> Data {
        var text = String(decoding: data, as: UTF8.self)
        let modelTagEnd = text.range(of: "<model").flatMap { text[$0.upperBound...].firstIndex(of: ">") }
        /// Puts `fragment` first inside `<model>` (or at the end when there is no `<model>` tag).
        func insertInsideModel(_ fragment: String) {
            guard let end = modelTagEnd else { return text += fragment }
            text.insert(contentsOf: fragment, at: text.index(after: end))
        }
        switch random.below(4) {
        case 0:
            let depth = 60_000
            let nest = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
            insertInsideModel(nest)
            mutation = "\(depth) nested <a> elements inside <model>"
        case 1:
            let depth = 10_000
            let shapes = [
                String(repeating: "(", count: depth) + "x" + String(repeating: ")", count: depth),
                String(repeating: "lowercase:(", count: depth) + "x" + String(repeating: ")", count: depth),
                Array(repeating: "x", count: depth).joined(separator: " + "),
            ]
            let shape = random.below(shapes.count)
            let derived = "derived=\"YES\" derivationExpression=\"\(shapes[shape])\""
            let attribute = "<attribute name=\"fuzzDerived\" attributeType=\"String\" \(derived)/>"
            let entity = "<entity name=\"FuzzDerived\">\(attribute)</entity>"
            insertInsideModel(entity)
            let kind = ["parentheses", "function calls", "operators"][shape]
            mutation = "derived attribute nesting \(depth) levels (\(kind))"
        case 2:
            var declarations = "<!ENTITY a0 \"lol\">"
            for level in 1...9 {
                declarations += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">"
            }
            let doctype = "<!DOCTYPE model [\(declarations)]>"
            let offset = Self.endOfDeclaration([UInt8](data))
            text.insert(contentsOf: doctype, at: text.utf8.index(text.startIndex, offsetBy: offset))
            if let range = text.range(of: "<entity name=\"") {
                text.replaceSubrange(range, with: "<entity name=\"&a9;")
            }
            mutation = "entity expansion bomb (10^9 'lol') declared in an internal DTD subset"
        default:
            let doctype = "<!DOCTYPE model [<!ENTITY secret SYSTEM \"file:///etc/passwd\">]>"
            let offset = Self.endOfDeclaration([UInt8](data))
            text.insert(contentsOf: doctype, at: text.utf8.index(text.startIndex, offsetBy: offset))
            if let range = text.range(of: "<entity name=\"") {
                text.replaceSubrange(range, with: "<entity name=\"&secret;")
            }
            mutation = "external entity (file:///etc/passwd) declared and referenced"
        }
        return Data(text.utf8)
    }

    /// Damage aimed at a binary property list: its trailer, offset table or an object marker.
    private mutating func binaryPropertyListDamage(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 40 else { return byteDamage(data) }
        let trailer = bytes.count - 32
        let offsetSize = max(1, min(8, Int(bytes[trailer + 6])))
        let tableStart = Int(bytes[(trailer + 24)..<(trailer + 32)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        switch random.below(3) {
        case 0:
            let offset = trailer + 6 + random.below(26)
            let value = random.pick([0, 1, 0xFF, UInt8(random.below(256))] as [UInt8])
            bytes[offset] = value
            mutation = "trailer byte at offset \(offset) set to 0x\(String(value, radix: 16))"
        case 1 where tableStart > 8 && tableStart < trailer:
            let offset = tableStart + random.below(max(1, (trailer - tableStart) / offsetSize)) * offsetSize
            bytes[min(offset + offsetSize - 1, trailer - 1)] = UInt8(random.below(256))
            mutation = "offset-table entry at offset \(offset) changed"
        default:
            let offset = 8 + random.below(max(1, min(tableStart, trailer) - 8))
            let marker = random.pick([0xA0, 0xAF, 0xD0, 0xDF, 0x5F, 0x6F, 0x4F, 0x80, 0x1F, 0x33] as [UInt8])
            bytes[offset] = marker
            mutation = "object marker at offset \(offset) set to 0x\(String(marker, radix: 16))"
        }
        return Data(bytes)
    }

    /// Overwrites part of one SQLite page (the first page, holding the header and schema, is chosen often).
    private mutating func pageDamage(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        guard bytes.count >= 512 else { return byteDamage(data) }
        var pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        if pageSize == 1 { pageSize = 65_536 }
        if pageSize < 512 { pageSize = 4_096 }
        let pages = max(1, bytes.count / pageSize)
        let page = random.chance(25) ? 0 : random.below(pages)
        let start = page * pageSize + random.below(pageSize)
        let length = min(1 + random.below(64), bytes.count - start)
        guard length > 0 else { return byteDamage(data) }
        for offset in start..<(start + length) { bytes[offset] = UInt8(random.below(256)) }
        mutation = "page \(page + 1) of \(pages): \(length) random byte(s) at offset \(start)"
        return Data(bytes)
    }

    /// Python 3 itself, found once: starting it through `env` and a version manager's shim costs a few tenths of
    /// a second per case.
    static let pythonExecutable: URL = {
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let found = try? Subprocess.run(env, ["python3", "-c", "import sys; print(sys.executable)"], timeout: 20)
        let path = found?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : env
    }()

    static func python(_ script: String, _ arguments: [String] = [], input: Data? = nil) throws -> Subprocess.Outcome {
        let prefix = pythonExecutable.lastPathComponent == "env" ? ["python3"] : []
        return try Subprocess.run(pythonExecutable, prefix + ["-c", script] + arguments, input: input, timeout: 20)
    }

    /// Converts a binary property list to XML with Python's plistlib (the bytes unchanged when it cannot).
    private static func xmlPropertyList(from data: Data) throws -> Data {
        let script = """
            import plistlib, sys
            sys.stdout.buffer.write(plistlib.dumps(plistlib.load(sys.stdin.buffer)))
            """
        let outcome = try python(script, input: data)
        return outcome.status == 0 ? outcome.stdout : data
    }

    static let sqlOperations = [
        "drop-table", "drop-entity-table", "text-in-z-ent", "integer-plist", "text-plist", "delete-metadata",
        "duplicate-metadata", "damage-plist-bytes", "truncate-model-cache", "garbage-model-cache",
        "damage-model-cache-archive", "delete-model-cache", "retype-column", "rename-column", "bad-primary-key-max",
        "dangling-relationship", "negative-pk", "damage-blob", "unknown-z-ent", "z-super-cycle", "invalid-utf8-text",
        "drop-column", "rename-entity",
    ]

    /// Applies one SQL-level damage to a store copy; prints what it did. Arguments: path, operation, seed.
    static let sqlDamageScript = #"""
        import random, sqlite3, sys, zlib
        path, op, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
        rng = random.Random(seed)
        con = sqlite3.connect(path)
        con.isolation_level = None
        query = "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'"
        tables = [r[0] for r in con.execute(query)]
        entities = [t for t in tables if not t.startswith("Z_") and t.startswith("Z")] or tables
        def columns(table):
            return [r[1] for r in con.execute(f'pragma table_info("{table}")')]
        def sql(statement, *args):
            con.execute(statement, args)
            shown = [repr(a)[:60] + (" (%d bytes)" % len(a) if isinstance(a, bytes) else "") for a in args]
            print(statement, " ".join(shown))
        def flip(blob):
            data = bytearray(blob or b"")
            for _ in range(rng.randint(1, 8)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            return bytes(data)
        if op == "drop-table":
            sql(f'drop table "{rng.choice(tables)}"')
        elif op == "drop-entity-table":
            sql(f'drop table "{rng.choice(entities)}"')
        elif op == "text-in-z-ent":
            table = rng.choice(entities + ["Z_PRIMARYKEY"])
            sql(f'update "{table}" set Z_ENT = ? where rowid in (select rowid from "{table}" limit 1)', "not a number")
        elif op == "integer-plist":
            sql("update Z_METADATA set Z_PLIST = ?", 42)
        elif op == "text-plist":
            sql("update Z_METADATA set Z_PLIST = ?", "<plist>")
        elif op == "delete-metadata":
            sql("delete from Z_METADATA")
        elif op == "duplicate-metadata":
            sql("insert into Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) "
                "select Z_VERSION + 1, Z_UUID, Z_PLIST from Z_METADATA")
        elif op == "damage-plist-bytes":
            for (blob,) in con.execute("select Z_PLIST from Z_METADATA").fetchall():
                sql("update Z_METADATA set Z_PLIST = ?", flip(blob))
        elif op == "truncate-model-cache":
            for (blob,) in con.execute("select Z_CONTENT from Z_MODELCACHE").fetchall():
                sql("update Z_MODELCACHE set Z_CONTENT = ?", (blob or b"")[: rng.randrange(len(blob or b"x"))])
        elif op == "garbage-model-cache":
            sql("update Z_MODELCACHE set Z_CONTENT = ?", bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))))
        elif op == "damage-model-cache-archive":
            for (blob,) in con.execute("select Z_CONTENT from Z_MODELCACHE").fetchall():
                archive = zlib.decompress(blob, -15)
                compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
                sql("update Z_MODELCACHE set Z_CONTENT = ?", compressor.compress(flip(archive)) + compressor.flush())
        elif op == "delete-model-cache":
            sql("delete from Z_MODELCACHE")
        elif op == "retype-column":
            table = rng.choice(entities)
            column = rng.choice(columns(table))
            value = rng.choice([
                "garbage", b"\x00\xff", 1e308, float("inf"), float("-inf"), -9223372036854775808, None, 3.5, 2.0**70,
            ])
            sql(f'update "{table}" set "{column}" = ?', value)
        elif op == "rename-column":
            table = rng.choice(entities)
            column = rng.choice(columns(table))
            sql(f'alter table "{table}" rename column "{column}" to "{column}_fuzz"')
        elif op == "bad-primary-key-max":
            sql("update Z_PRIMARYKEY set Z_MAX = ?", rng.choice([-5, "x", 9223372036854775807, None]))
        elif op == "dangling-relationship":
            table = rng.choice(entities)
            candidates = [c for c in columns(table) if c.startswith("Z") and not c.startswith("Z_") and c.isupper()]
            if candidates:
                sql(f'update "{table}" set "{rng.choice(candidates)}" = ?', rng.choice([999999, -1, 0]))
            else:
                print("no candidate column in", table)
        elif op == "negative-pk":
            table = rng.choice(entities)
            sql(f'update "{table}" set Z_PK = -Z_PK')
        elif op == "damage-blob":
            done = False
            for table in entities:
                for column in columns(table):
                    query = f'select rowid, "{column}" from "{table}" where typeof("{column}") = \'blob\''
                    rows = con.execute(query).fetchall()
                    if rows and not done:
                        rowid, blob = rng.choice(rows)
                        sql(f'update "{table}" set "{column}" = ? where rowid = ?', flip(blob), rowid)
                        done = True
            if not done:
                print("no blob value to damage")
        elif op == "unknown-z-ent":
            table = rng.choice(entities)
            sql(f'update "{table}" set Z_ENT = ? where rowid in (select rowid from "{table}" limit 1)',
                rng.choice([999, -1, 0]))
        elif op == "z-super-cycle":
            rows = con.execute("select Z_ENT from Z_PRIMARYKEY").fetchall()
            if rows:
                first = rng.choice(rows)[0]
                sql("update Z_PRIMARYKEY set Z_SUPER = ? where Z_ENT = ?", rng.choice([first, 999, -1]), first)
        elif op == "invalid-utf8-text":
            table = rng.choice(entities)
            column = rng.choice(columns(table))
            sql(f'update "{table}" set "{column}" = cast(x\'41ff80c3\' as text)')
        elif op == "drop-column":
            table = rng.choice(entities)
            column = rng.choice([c for c in columns(table) if c != "Z_PK"] or ["Z_PK"])
            sql(f'alter table "{table}" drop column "{column}"')
        elif op == "rename-entity":
            sql("update Z_PRIMARYKEY set Z_NAME = ? where Z_ENT = (select min(Z_ENT) from Z_PRIMARYKEY)",
                rng.choice(["", "Nope", "Mood\u00e9", "x" * 1000]))
        con.close()
        """#
}
