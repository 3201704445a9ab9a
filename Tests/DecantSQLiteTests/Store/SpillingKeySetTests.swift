import DecantCore
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// The set behind validation and delete rules on large stores: past its bound it moves keys to a temporary file and
/// still answers as a set in memory does.
@Suite("Spilling key sets")
struct SpillingKeySetTests {
    /// Inserts and looks up the same keys in both sets (integers and text, several scopes, repeats, an integer and
    /// the text of its digits) and compares every answer.
    @Test(arguments: [1, 3, 50, 10_000])
    func answersAsTheInMemorySetDoes(bound: Int) throws {
        let memory = InMemoryKeySet()
        let spilling = SpillingKeySet(bound: bound)
        // A fixed walk over 60 numbers in three scopes, both kinds of key, that comes back to every key every 60 steps.
        var repeats = 0
        var found = 0
        for step in 0..<600 {
            let scope = ["Note", "Folder", "Tag#Tag#0"][step * 7 % 3]
            let number = Int64(step * 7919 % 60)
            let key: SetKey = step / 5 % 2 == 0 ? .integer(number) : .text("\(number)")
            if step % 7 == 0 {
                let known = memory.contains(key, in: scope)
                #expect(try spilling.contains(key, in: scope) == known, "\(key) in \(scope)")
                if known { found += 1 }
            } else {
                let new = memory.insert(key, in: scope)
                #expect(try spilling.insert(key, in: scope) == new, "\(key) in \(scope)")
                if !new { repeats += 1 }
            }
            #expect(spilling.count == memory.count)
        }
        #expect(repeats > 0 && found > 0)
        for scope in ["Note", "Folder", "Tag#Tag#0", "Other"] {
            for number in Int64(0)..<200 {
                for key in [SetKey.integer(number), .text("\(number)")] {
                    #expect(try spilling.contains(key, in: scope) == memory.contains(key, in: scope))
                }
            }
        }
        // Texts spill past the bound; these integers are dense, held as bits, and never do.
        let texts = ["Note", "Folder", "Tag#Tag#0"].reduce(0) { sum, scope in
            sum + (0..<60).filter { memory.contains(.text("\($0)"), in: scope) }.count
        }
        if bound < texts { #expect(spilling.spilledCount > 0) } else { #expect(spilling.spilledCount == 0) }
        #expect(spilling.spilledCount <= texts)
        let reference = ObjectReference(entity: "Note", id: .primaryKey(7))
        #expect(try spilling.contains(reference) == memory.contains(reference))
    }

    @Test func theTemporaryFileGoesWithTheSet() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var spillFolder: URL?
        do {
            let set = SpillingKeySet(bound: 2, in: folder)
            for key in 0..<10 { _ = try set.insert(.text("n\(key)"), in: "Note") }
            spillFolder = set.spillFolder
            let spilled = try #require(spillFolder)
            #expect(spilled.deletingLastPathComponent().standardizedFileURL == folder.standardizedFileURL)
            #expect(FileManager.default.fileExists(atPath: spilled.path))
            #expect(try set.contains(.text("n0"), in: "Note"))
        }
        let spilled = try #require(spillFolder)
        #expect(!FileManager.default.fileExists(atPath: spilled.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aSetThatCannotSpillSaysWhereAndWhy() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The spill folder's parent is a file: the folder cannot be made.
        let blocker = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let set = SpillingKeySet(bound: 1, in: blocker)
        #expect(try set.insert(.text("1"), in: "Note"))
        let error = try #require(throws: DecantError.self) { try set.insert(.text("2"), in: "Note") }
        #expect(error.code == .ioError)
        #expect(error.message.contains("cannot spill a set of 2 keys to a temporary file"), "\(error)")
        // Integers the bitmaps do not take (none here) spill as texts do, and fail the same way.
        let integers = SpillingKeySet(bound: 1, in: blocker, bitmapChunks: 0, filterBytes: 8)
        #expect(try integers.insert(.integer(1), in: "Note"))
        #expect(throws: DecantError.self) { try integers.insert(.integer(2), in: "Note") }
        // A validator meeting the same failure stops with it rather than guessing (objects named by text ids: a
        // store's primary keys are kept as bits and never spill).
        let model = ObjectModel(versionName: "V", entities: [Entity(name: "Note")])
        let layout = try #require(RecordLayout(entity: "Note", in: model))
        var batch = RecordBatch(layout: layout)
        for key in 1...3 { batch.append(Record(entity: "Note", id: .external("n\(key)"), values: [])) }
        var validator = ModelValidator(model: model, collectsRejects: true, keySets: .spilling(bound: 1, in: blocker))
        var rejects: [Reject] = []
        let failure = try #require(throws: DecantError.self) { try validator.check(batch, rejects: &rejects) }
        #expect(failure.code == .ioError)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["not-a-folder"])
    }

    @Test func aFactoryMakesSeparateSets() throws {
        let factory = KeySetFactory.spilling(bound: 1)
        let first = factory.makeKeySet()
        let second = factory.makeKeySet()
        #expect(try first.insert(.text("a"), in: "s"))
        #expect(try first.insert(.text("b"), in: "s"))
        #expect(try !second.contains(.text("a"), in: "s"))
        #expect(try first.contains(.text("a"), in: "s"))
    }

    /// Keys that exercise every path: dense and sparse integers, negative and extreme ones, integers and the text of
    /// their digits, canonically equivalent texts (one key, as for a `Set<String>`), empty, NUL and long texts.
    static func keys(_ generator: inout SplitMix) -> [SetKey] {
        var keys: [SetKey] = (0..<400).map { .integer(Int64($0)) } + (0..<60).map { .text("\($0)") }
        keys += [Int64.max, .min, .max - 1, .min + 1, -1, -4_096, -4_097, 4_095, 4_096, 1 << 40].map { .integer($0) }
        keys += (0..<60).map { _ in .integer(Int64(bitPattern: generator.next())) }
        let texts = ["", "\u{0}", "a\u{0}b", "\u{E9}", "e\u{301}", "K", "\u{212A}", "日本"]
        keys += (texts + [String(repeating: "x", count: 99)]).map { .text($0) }
        keys += (0..<60).map { _ in .text("key \(generator.next() % 1_000)") }
        return keys
    }

    /// A set on the same walk as a plain `Set` per scope: every insert and look-up answers the same, whether keys
    /// spill (a bound of 1, a filter of one word so that every look-up reads the file, integers not taken as bits) or
    /// not. Keys come back across the spill boundary many times.
    @Test(arguments: [(1, 0, 8), (3, 2, 8), (7, 0, 64), (50, 16_384, 4 << 20), (100_000, 16_384, 4 << 20)])
    func answersAsAPlainSetDoes(bound: Int, bitmapChunks: Int, filterBytes: Int) throws {
        var generator = SplitMix(seed: UInt64(bound * 31 + bitmapChunks))
        let keys = Self.keys(&generator)
        let scopes = ["Note", "Folder", "", "Tag#Tag#0"]
        let set = SpillingKeySet(bound: bound, in: nil, bitmapChunks: bitmapChunks, filterBytes: filterBytes)
        var model: [String: Set<SetKey>] = [:]
        var repeats = 0
        for step in 0..<4_000 {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let scope = scopes[Int(generator.next() % 7 == 0 ? generator.next() % 4 : 0)]
            if generator.next() % 3 == 0 {
                let known = model[scope, default: []].contains(key)
                #expect(try set.contains(key, in: scope) == known, "step \(step): \(key) in \(scope)")
            } else {
                let new = model[scope, default: []].insert(key).inserted
                #expect(try set.insert(key, in: scope) == new, "step \(step): \(key) in \(scope)")
                if !new { repeats += 1 }
            }
            #expect(set.count == model.values.reduce(0) { $0 + $1.count })
        }
        #expect(repeats > 1_000)
        for scope in scopes + ["Other"] {
            for key in keys {
                let known = model[scope, default: []].contains(key)
                #expect(try set.contains(key, in: scope) == known, "\(key) in \(scope)")
            }
        }
        if bound < 10 { #expect(set.spilledCount > 0) } else if bound > 10_000 { #expect(set.spilledCount == 0) }
    }

    /// A store's primary keys, 1 to N per entity, take a few chunks of bits and never reach the file, whatever the
    /// bound; sparse ones past the set's chunks spill as other keys do.
    @Test func denseIntegersDoNotSpill() throws {
        let set = SpillingKeySet(bound: 1)
        for key in Int64(1)...20_000 {
            #expect(try set.insert(.integer(key), in: "Note"))
            #expect(try set.insert(.integer(key), in: "Folder"))
        }
        #expect(try !set.insert(.integer(7), in: "Note"))
        #expect(set.count == 40_000)
        #expect(set.spilledCount == 0)
        #expect(set.spillFolder == nil)
        let sparse = SpillingKeySet(bound: 1, in: nil, bitmapChunks: 3, filterBytes: 8)
        for key in Int64(0)..<10 { #expect(try sparse.insert(.integer(key << 20), in: "Note")) }
        #expect(sparse.spilledCount > 0)
        for key in Int64(0)..<10 {
            #expect(try sparse.contains(.integer(key << 20), in: "Note"))
            #expect(try !sparse.contains(.integer(key << 20 + 1), in: "Note"))
            #expect(try !sparse.insert(.integer(key << 20), in: "Note"))
        }
    }
}

/// A small seeded generator, so that a failure can be replayed.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var bits = state
        bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
        return bits ^ (bits >> 31)
    }
}
