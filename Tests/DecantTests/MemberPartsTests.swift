@testable import Decant
import DecantTestSupport
import Foundation
import Testing

/// A store's to-many lists in parts (issue 23): a reader asked for parts cuts a list longer than the part size and
/// delivers the rest in continuation batches, so memory does not grow with the longest list (a tag of four million
/// notes held 1.3 million members); the NDJSON, JSON and CSV writers and validation put the parts back together into
/// exactly what whole records give, and every other consumer still gets whole records.
@Suite("To-many lists in parts")
struct MemberPartsTests {
    /// `Tag{name (at most 5 characters), notes (at most 6), pinned (ordered)}`, `Note{title, pinnedBy, tags}`,
    /// `Note.tags ⇄ Tag.notes` (many-to-many), `Tag.pinned ⇄ Note.pinnedBy` (ordered one-to-many).
    static let model: ObjectModel = {
        var tag = Entity(name: "Tag")
        var name = Attribute(name: "name", type: .string, isOptional: true)
        name.maxValue = "5"
        tag.attributes = [name]
        var notes = Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)
        notes.maxCount = 6
        var pinned = Relationship(name: "pinned", destination: "Note", inverse: "pinnedBy", toMany: true)
        pinned.isOrdered = true
        tag.relationships = [notes, pinned]
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        note.relationships = [
            Relationship(name: "pinnedBy", destination: "Tag", inverse: "pinned"),
            Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true),
        ]
        return ObjectModel(versionName: "Parts", entities: [note, tag], versionIdentifiers: ["1"])
    }()

    /// Each tag's notes and pinned notes (in order), by primary key: `toolong` has ten of each (two lists cut short;
    /// its name breaks the rule before its count does), `empty` none, `three` exactly a part of three, `seven` seven
    /// notes (cut short, breaking the count rule alone).
    static let tags: [(name: String, notes: [Int64], pinned: [Int64])] = [
        ("toolong", Array(1...10), [12, 11, 10, 9, 8, 7, 6, 5, 4, 3]),
        ("empty", [], []),
        ("three", [1, 2, 3], []),
        ("seven", Array(4...10), [1, 2]),
    ]

    /// A store of twelve notes and the four tags, written in batches of records as the library fixture's are.
    static func makeStore() throws -> URL {
        let store = try Fixtures.temporaryDirectory().appendingPathComponent("Parts.sqlite")
        func note(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Note", id: .primaryKey(key)) }
        func tag(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Tag", id: .primaryKey(key)) }
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        for key in Int64(1)...12 {
            let tagged = tags.indices.filter { tags[$0].notes.contains(key) }.map { tag(Int64($0 + 1)) }
            let pinnedBy = tags.indices.first { tags[$0].pinned.contains(key) }.map { tag(Int64($0 + 1)) }
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(key), values: [.string("note \(key), \"quoted\"")],
                    relationships: [.toOne(pinnedBy), .toMany(tagged)]))
        }
        var tagBatch = try #require(RecordLayout(entity: "Tag", in: model)).emptyBatch()
        for (index, entry) in tags.enumerated() {
            tagBatch.append(
                Record(
                    entity: "Tag", id: .primaryKey(Int64(index + 1)), values: [.string(entry.name)],
                    relationships: [.toMany(entry.notes.map(note)), .toMany(entry.pinned.map(note))]))
        }
        let writer = try SQLiteStoreWriter(creating: store, model: model)
        try writer.write(notes)
        try writer.write(tagBatch)
        try writer.finish()
        return store
    }

    static func reader(_ store: URL, batchSize: Int = 1024) throws -> SQLiteStoreReader {
        try SQLiteStoreReader(store: try SQLiteStore(contentsOf: store), model: model, batchSize: batchSize)
    }

    @Test("a list longer than the part size comes cut short, its further members in continuations, layout order")
    func partsArriveInOrder() throws {
        let store = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let reader = try Self.reader(store)
        reader.memberPartSize = 3
        var batch = try #require(RecordLayout(entity: "Note", in: Self.model)).emptyBatch()
        var seen: [String] = []
        while try reader.nextBatch(into: &batch) {
            guard batch.layout.entityName == "Tag" else { continue }
            if let continuation = batch.continuation {
                #expect(batch.count == 0)
                seen.append("+\(continuation.relationship):\(batch.references.count)\(continuation.isFinal ? "." : "")")
                continue
            }
            let cut = (0..<2).map { batch.isContinued(batch.cell(row: batch.count - 1, column: 1 + $0)) }
            seen.append("\(batch.count) records, \(batch.references.count) members, cut \(cut)")
        }
        #expect(
            seen == [
                "1 records, 6 members, cut [true, true]", "+0:3", "+0:3", "+0:1.", "+1:3", "+1:3", "+1:1.",
                "3 records, 8 members, cut [true, false]", "+0:3", "+0:1.",
            ])
    }

    @Test("a run that stops midway through a list in parts is refused at finish, and abandoning leaves no output",
        arguments: ["ndjson", "csv"])
    func aListCutShortAndNeverFinishedLeavesNoOutput(format: String) throws {
        let store = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent(format == "csv" ? "out" : "out.\(format)")
        var writer = try FormatRegistry.builtIn.outputFormat(for: output, named: format, fallback: "sqlite")
            .makeWriter(at: output, model: Self.model, options: FormatOptions())
        let reader = try Self.reader(store)
        reader.memberPartSize = 3
        var batch = try #require(RecordLayout(entity: "Note", in: Self.model)).emptyBatch()
        // Up to the first continuation, as if the reader had failed there: a tag's lists are left cut short.
        while try reader.nextBatch(into: &batch), batch.continuation == nil { try writer.write(batch) }
        #expect(throws: DecantError.self) { try writer.finish() }
        writer.abandon()
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(FileManager.default.fileExists(atPath: store.path), "the input is untouched")
    }

    /// What a copy through `writer`'s format gives, read in batches of `batchSize` with lists in parts of
    /// `partSize` (whole when nil): every file of the output, by name.
    static func export(_ store: URL, as format: String, batchSize: Int, partSize: Int?) throws -> [String: Data] {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent(format == "csv" ? "out" : "out.\(format)")
        var writer = try FormatRegistry.builtIn.outputFormat(for: output, named: format, fallback: "sqlite")
            .makeWriter(at: output, model: model, options: FormatOptions())
        var reader = try Self.reader(store, batchSize: batchSize)
        _ = try RecordTransfer.copy(from: &reader, to: &writer, memberPartSize: partSize)
        #expect(reader.memberPartSize == nil, "the copy leaves the reader as it found it")
        guard format == "csv" else {
            // The header line names a new store UUID for every output: the objects are compared.
            let lines = String(decoding: try Data(contentsOf: output), as: UTF8.self).split(separator: "\n")
            return ["out": Data(lines.filter { !$0.contains("NSStoreUUID") }.joined(separator: "\n").utf8)]
        }
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: output.path) {
            files[name] = try Data(contentsOf: output.appendingPathComponent(name))
        }
        return files
    }

    @Test(
        "lists in parts give the bytes of whole records", arguments: ["ndjson", "json", "csv"],
        [(1024, 3), (2, 3), (1, 1), (3, 4), (1024, 10), (1024, 1 << 16)])
    func partsGiveTheSameBytes(format: String, sizes: (batch: Int, part: Int)) throws {
        let store = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let whole = try Self.export(store, as: format, batchSize: 1024, partSize: nil)
        let parted = try Self.export(store, as: format, batchSize: sizes.batch, partSize: sizes.part)
        #expect(parted.keys.sorted() == whole.keys.sorted())
        for (name, bytes) in whole {
            #expect(parted[name] == bytes, "\(name)\n\(String(decoding: parted[name] ?? Data(), as: UTF8.self))")
        }
        if format == "csv" {
            // The ordered list's positions run on across its parts.
            let pinned = String(decoding: whole["Tag.pinned.csv"] ?? Data(), as: UTF8.self)
            #expect(pinned.contains("p1,Note/p3,10\r\n") || pinned.contains("p1,Note/p3,10\n"))
        } else {
            let text = String(decoding: whole["out"] ?? Data(), as: UTF8.self)
            #expect(text.contains(#""notes":["Note/p1","Note/p2","Note/p3","Note/p4","Note/p5","Note/p6","Note/p7""#))
            #expect(text.contains(#""pinned":["Note/p12","Note/p11""#))
        }
    }

    /// A writer that takes no parts and keeps every batch's records.
    struct RecordingWriter: RecordWriter {
        var records: [Record] = []
        var continuations = 0
        mutating func write(_ batch: RecordBatch) throws {
            if batch.continuation != nil { continuations += 1 }
            records += (0..<batch.count).map { batch.record(at: $0) }
        }
        mutating func finish() throws {}
        mutating func abandon() {}
    }

    @Test("a consumer that does not take parts gets whole records, whatever part size the copy is given")
    func otherConsumersGetWholeRecords() throws {
        let store = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        var reader = try Self.reader(store)
        var writer = RecordingWriter()
        _ = try RecordTransfer.copy(from: &reader, to: &writer, memberPartSize: 1)
        #expect(writer.continuations == 0)
        let tags = writer.records.filter { $0.entity == "Tag" }
        #expect(tags.count == 4)
        for (record, expected) in zip(tags, Self.tags) {
            #expect(record.relationships == [
                .toMany(expected.notes.map { ObjectReference(entity: "Note", id: .primaryKey($0)) }),
                .toMany(expected.pinned.map { ObjectReference(entity: "Note", id: .primaryKey($0)) }),
            ])
        }
        // A transform that takes no parts (a migration stage, a selection) gets whole records too.
        var selected = try Self.reader(store)
        var kept = RecordingWriter()
        _ = try RecordTransfer.copy(
            from: &selected, through: SelectionTransform(RecordSelection()), to: &kept, memberPartSize: 1)
        #expect(kept.continuations == 0)
        #expect(kept.records == writer.records)
    }

    /// The rejects a validation in place finds, lists read in parts of `partSize` (whole when nil).
    static func rejects(_ store: URL, partSize: Int?) throws -> [Reject] {
        var reader = try Self.reader(store, batchSize: 2)
        var sink = DiscardingWriter()
        let transform = ValidationTransform(model: model, collectsRejects: true, dropsRejected: false)
        #expect(transform.takesMemberParts)
        let report = try RecordTransfer.copy(from: &reader, through: transform, to: &sink, memberPartSize: partSize)
        return report.rejects + report.findings
    }

    @Test("validation counts a list's members across its parts and reports what whole records report")
    func validationCountsAcrossParts() throws {
        let store = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let whole = try Self.rejects(store, partSize: nil)
        // `toolong` fails its name first; `seven` its count of seven notes (3 + 3 + 1 in parts).
        #expect(
            whole == [
                Reject(entity: "Tag", object: "Tag/p1", property: "name", rule: "max", value: "toolong"),
                Reject(entity: "Tag", object: "Tag/p4", property: "notes", rule: "maxCount", value: "7"),
            ])
        for size in [1, 2, 3, 6, 7] {
            #expect(try Self.rejects(store, partSize: size) == whole, "part size \(size)")
        }
        // Checking stops at the first failing object without a rejects list, with the same error in parts as whole.
        func firstFailure(partSize: Int?) throws -> String {
            var reader = try Self.reader(store)
            var sink = DiscardingWriter()
            let error = #expect(throws: DecantError.self) {
                _ = try RecordTransfer.copy(
                    from: &reader,
                    through: ValidationTransform(model: Self.model, collectsRejects: false, dropsRejected: false),
                    to: &sink, memberPartSize: partSize)
            }
            return "\(try #require(error))"
        }
        let stop = try firstFailure(partSize: nil)
        #expect(stop.contains("Tag/p1"))
        #expect(try firstFailure(partSize: 3) == stop)
    }
}
