import ArgumentParser
import Decant
import DecantTestSupport
import Foundation
import Testing

@testable import DecantCLI

/// `decant convert` to and from CSV: the options, a store through a CSV folder and back, and bad CSV exiting 65 with
/// its place and leaving no output.
@Suite("decant convert with CSV", .serialized)
struct ConvertCSVTests {
    static let notesBundle = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld")

    @Test func parsesTheCSVOptions() throws {
        let command = try DecantCommand.parseAsRoot([
            "convert", "in", "out", "--from", "csv", "--to", "sqlite", "--model-version", "Notes 3", "--entity", "Note",
            "--delimiter", "tab", "--null", "NULL",
        ])
        let convert = try #require(command as? DecantCommand.Convert)
        #expect(convert.inputOptions.from == "csv")
        #expect(convert.outputOptions.to == "sqlite")
        #expect(convert.modelVersion == "Notes 3")
        #expect(convert.inputOptions.entities == ["Note"])
        #expect(convert.inputOptions.csv.delimiter?.character == "\t")
        #expect(convert.inputOptions.csv.nullMarker == "NULL")
        let semicolon = try #require(
            try DecantCommand.parseAsRoot(["convert", "a", "b", "--delimiter", ";"]) as? DecantCommand.Convert)
        #expect(semicolon.inputOptions.csv.delimiter?.character == ";")
        expectUsageError(["convert", "a", "b", "--delimiter", ";;"])
        let help = DecantCommand.helpMessage(for: DecantCommand.Convert.self, columns: 100)
        #expect(help.contains("--delimiter <delimiter>"))
        #expect(help.contains("--null <null>"))
    }

    /// Writes `Notes.sqlite` (model Notes 3) into `folder`: two folders and three notes.
    static func writeNotesStore(in folder: URL) throws -> ObjectModel {
        let model = try #require(try ModelBundle.load(from: notesBundle).version(named: "Notes 3"))
        let writer = try SQLiteStoreWriter(
            creating: folder.appendingPathComponent("Notes.sqlite"), model: model, journalMode: .delete)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        folders.append(
            Record(entity: "Folder", id: .primaryKey(1), values: ["Home; garden"], relationships: [.viaInverse]))
        folders.append(Record(entity: "Folder", id: .primaryKey(2), values: ["NULL"], relationships: [.viaInverse]))
        try writer.write(folders)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        let texts: [Value] = ["milk, \"eggs\"\nand bread", "", nil]
        for (index, text) in texts.enumerated() {
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(index + 1)),
                    values: [
                        .date(Date(timeIntervalSinceReferenceDate: 737_057_646.84 + Double(index))), text,
                        .string("Note \(index)"),
                    ],
                    relationships: [.toOne(ObjectReference(entity: "Folder", id: .primaryKey(Int64(index % 2 + 1))))]))
        }
        try writer.write(notes)
        try writer.finish()
        return model
    }

    static func run(in folder: URL, _ arguments: [String]) throws -> Subprocess.Outcome {
        try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, EndToEndTests.binary.path] + arguments)
    }

    static func records(of store: URL, model: ObjectModel) throws -> [Record] {
        let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: store), model: model)
        return try model.entities.flatMap { try reader.records(of: $0.name) }
    }

    @Test(
        .requiresDecantBinary,
        arguments: [[], ["--delimiter", ";", "--null", "NULL"], ["--delimiter", "tab"]])
    func storeThroughCSVAndBack(_ dialect: [String]) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try Self.writeNotesStore(in: folder)
        let out = try Self.run(in: folder, ["convert", "Notes.sqlite", "notes", "--to", "csv", "--json"] + dialect)
        #expect(out.status == 0, "\(out.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any])
        #expect(report["outputFormat"] as? String == "csv")
        #expect((report["written"] as? [String: Int]) == ["Folder": 2, "Note": 3])
        #expect(try EndToEndTests.validate(out.output, schema: "convert") == "valid")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("notes").path)
            .sorted()
        #expect(files == ["Folder.csv", "Note.csv", "_decant.json"])

        // The folder records its version and dialect: --model is enough to read it back.
        let back = try Self.run(in: folder, ["convert", "notes", "Back.sqlite", "--model", Self.notesBundle.path])
        #expect(back.status == 0, "\(back.errors)")
        #expect(back.output.hasPrefix("Back.sqlite: 5 objects written (model Notes 3)"))
        #expect(
            try Self.records(of: folder.appendingPathComponent("Back.sqlite"), model: model)
                == Self.records(of: folder.appendingPathComponent("Notes.sqlite"), model: model))
    }

    @Test(.requiresDecantBinary) func badCSVExits65WithItsPlaceAndNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeNotesStore(in: folder)
        #expect(try Self.run(in: folder, ["convert", "Notes.sqlite", "notes", "--to", "csv"]).status == 0)
        let note = folder.appendingPathComponent("notes/Note.csv")
        var text = String(decoding: try Data(contentsOf: note), as: UTF8.self)
        text = text.replacingOccurrences(of: "2024-05-10T18:14:07.84Z", with: "10 May 2024")
        try Data(text.utf8).write(to: note)
        let outcome = try Self.run(in: folder, ["convert", "notes", "Out.sqlite", "--model", Self.notesBundle.path])
        #expect(outcome.status == 65)
        #expect(outcome.stdout.isEmpty)
        let first = outcome.errors.split(separator: "\n").first.map(String.init) ?? ""
        #expect(
            first.hasPrefix(
                "Error: notes/Note.csv:4:4: entity Note, object Note/p2, key date: malformed input: "
                    + "expected an ISO 8601 date"
            ),
            "\(first)")
        #expect(first.contains("found \"10 May 2024\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["Notes.sqlite", "notes"])

        // Without a model, a CSV folder cannot be read: a usage error.
        let missing = try Self.run(in: folder, ["convert", "notes", "Out.sqlite"])
        #expect(missing.status == 64)
        #expect(missing.errors.contains("--model"))
        // A bad delimiter is a usage error too.
        let delimiter = try Self.run(
            in: folder, ["convert", "Notes.sqlite", "other", "--to", "csv", "--delimiter", "\""])
        #expect(delimiter.status == 64)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["Notes.sqlite", "notes"])
    }

    @Test(.requiresDecantBinary) func singleFileWithEntity() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("title,text,date\nMilk,\"2 litres\",2024-05-01\n".utf8).write(
            to: folder.appendingPathComponent("export.csv"))
        let outcome = try Self.run(
            in: folder,
            [
                "convert", "export.csv", "Seed.sqlite", "--model", Self.notesBundle.path, "--entity", "Note",
                "--model-version", "Notes 2",
            ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.hasPrefix("Seed.sqlite: 1 object written (model Notes 2)"))
        // Without --model, the summary names the model the store keeps as such, not as a version "Z_MODELCACHE".
        let copied = try Self.run(in: folder, ["convert", "Seed.sqlite", "Copy.sqlite"])
        #expect(copied.output.hasPrefix("Copy.sqlite: 1 object written (the store's own model in Z_MODELCACHE)"))
        let validated = try Self.run(in: folder, ["validate", "Seed.sqlite"])
        #expect(
            validated.output.hasPrefix("Seed.sqlite: 1 object checked against the store's own model in Z_MODELCACHE"),
            "\(validated.output)")
        let model = try #require(try ModelBundle.load(from: Self.notesBundle).version(named: "Notes 2"))
        #expect(
            try Self.records(of: folder.appendingPathComponent("Seed.sqlite"), model: model).map(\.values) == [
                [.date(Date(timeIntervalSinceReferenceDate: 736_214_400)), "2 litres", "Milk"]
            ])
        // A store of one entity goes to one file, named by its extension; the ids Core Data gave come along.
        let file = try Self.run(in: folder, ["convert", "Seed.sqlite", "Note.csv"])
        #expect(file.status == 0, "\(file.errors)")
        #expect(
            String(decoding: try Data(contentsOf: folder.appendingPathComponent("Note.csv")), as: UTF8.self)
                == "_id,date,text,title\r\np1,2024-05-01T00:00:00Z,2 litres,Milk\r\n")
    }
}
