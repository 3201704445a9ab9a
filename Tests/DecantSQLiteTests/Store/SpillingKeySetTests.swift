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
        if bound < memory.count { #expect(spilling.spilledCount > 0) } else { #expect(spilling.spilledCount == 0) }
        let reference = ObjectReference(entity: "Note", id: .primaryKey(7))
        #expect(try spilling.contains(reference) == memory.contains(reference))
    }

    @Test func theTemporaryFileGoesWithTheSet() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var spillFolder: URL?
        do {
            let set = SpillingKeySet(bound: 2, in: folder)
            for key in Int64(0)..<10 { _ = try set.insert(.integer(key), in: "Note") }
            spillFolder = set.spillFolder
            let spilled = try #require(spillFolder)
            #expect(spilled.deletingLastPathComponent().standardizedFileURL == folder.standardizedFileURL)
            #expect(FileManager.default.fileExists(atPath: spilled.path))
            #expect(try set.contains(.integer(0), in: "Note"))
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
        #expect(try set.insert(.integer(1), in: "Note"))
        let error = try #require(throws: DecantError.self) { try set.insert(.integer(2), in: "Note") }
        #expect(error.code == .ioError)
        #expect(error.message.contains("cannot spill a set of 2 keys to a temporary file"), "\(error)")
        // A validator meeting the same failure stops with it rather than guessing.
        let model = ObjectModel(versionName: "V", entities: [Entity(name: "Note")])
        let layout = try #require(RecordLayout(entity: "Note", in: model))
        var batch = RecordBatch(layout: layout)
        for key in Int64(1)...3 { batch.append(Record(entity: "Note", id: .primaryKey(key), values: [])) }
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
}

