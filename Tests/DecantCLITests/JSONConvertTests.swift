import ArgumentParser
import Decant
@testable import DecantCLI
import DecantTestSupport
import Foundation
import Testing

/// `decant convert` with JSON and NDJSON: the options (parsed in-process) and, through the built binary, exit
/// codes, located errors, no output on failure, and output that follows `schemas/document.schema.json`.
@Suite("convert JSON")
struct JSONConvertTests {
    @Test func parsesTheFormatOptions() throws {
        let command = try DecantCommand.parseAsRoot([
            "convert", "books.json", "Books.sqlite", "--from", "json", "--to", "sqlite", "--model",
            "Books.xcdatamodeld",
            "--model-version", "Books 2", "--entity", "Book", "--key", "Author=id", "--key", "Tag=name", "--date-epoch",
            "reference",
        ])
        let convert = try #require(command as? DecantCommand.Convert)
        #expect(convert.inputOptions.from == "json")
        #expect(convert.outputOptions.to == "sqlite")
        #expect(convert.modelVersion == "Books 2")
        #expect(convert.inputOptions.entities == ["Book"])
        #expect(try convert.inputOptions.keys() == ["Author": "id", "Tag": "name"])
        #expect(convert.inputOptions.json.dateEpoch == .reference)
        let defaults = try #require(
            try DecantCommand.parseAsRoot(["convert", "a.json", "b.sqlite"]) as? DecantCommand.Convert)
        #expect(defaults.inputOptions.json.dateEpoch == .unix)
        #expect(try defaults.inputOptions.keys().isEmpty)
    }

    @Test(
        "bad option values are usage errors",
        arguments: [
            ["--key", "Author"], ["--key", "=id"], ["--key", "Author=id", "--key", "Author=name"],
            ["--date-epoch", "mars"],
        ])
    func badOptions(_ options: [String]) {
        expectUsageError(["convert", "a.json", "b.sqlite"] + options)
    }

    @Test func helpNamesTheFormatOptions() throws {
        let help = DecantCommand.helpMessage(for: DecantCommand.Convert.self, columns: 100)
        // The model version is --model-version: --version is ArgumentParser's, which prints Decant's version.
        #expect(help.contains("--model-version <model-version>"))
        #expect(help.contains("--from <from>"))
        #expect(help.contains("(sqlite, xml, binary, json, ndjson, csv, plist,"))
        #expect(help.contains("--date-epoch <date-epoch>"))
        #expect(help.contains("--key <key>"))
        #expect(help.contains("Plain JSON holds the objects of one entity"))
    }

    // MARK: The binary

    static func run(in folder: URL, _ arguments: [String]) throws -> Subprocess.Outcome {
        try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, EndToEndTests.binary.path] + arguments)
    }

    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    @Test(.requiresDecantBinary) func plainJSONToAStoreAndBackToNDJSON() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(
            """
            [{"name": "Home", "notes": [{"text": "milk", "date": 1716142446.5}, {"text": "eggs", "title": "Shop"}]}]
            """.utf8
        ).write(to: folder.appendingPathComponent("folders.json"))
        let imported = try Self.run(
            in: folder, ["convert", "folders.json", "Notes.sqlite", "--model", Self.notes, "--entity", "Folder"])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("3 objects written (model Notes 3)"))
        let exported = try Self.run(
            in: folder, ["convert", "Notes.sqlite", "notes.ndjson", "--model", Self.notes, "--json"])
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(try EndToEndTests.validate(exported.output, schema: "convert") == "valid")
        let lines = try String(contentsOf: folder.appendingPathComponent("notes.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1] == #"{"@id":"Folder/p1","name":"Home"}"#)
        #expect(
            lines[2]
                == #"{"@id":"Note/p1","date":"2024-05-19T18:14:06.5Z","text":"milk","title":null,"folder":"Folder/p1"}"#
        )
        #expect(try DocumentSchema.validate(folder.appendingPathComponent("notes.ndjson"), lines: true) == "valid")
        // --to overrides the extension; --from json reads Decant's document.
        let document = try Self.run(in: folder, ["convert", "Notes.sqlite", "notes.txt", "--to", "json"])
        #expect(document.status == 0, "\(document.errors)")
        #expect(try DocumentSchema.validate(folder.appendingPathComponent("notes.txt"), lines: false) == "valid")
        let back = try Self.run(
            in: folder, ["convert", "notes.txt", "back.sqlite", "--from", "json", "--model", Self.notes])
        #expect(back.status == 0, "\(back.errors)")
    }

    @Test(.requiresDecantBinary) func aStoreToJSONFollowsTheSchema() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite")
        for name in ["out.json", "out.ndjson"] {
            let outcome = try Self.run(in: folder, ["convert", store.path, name])
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(
                try DocumentSchema.validate(folder.appendingPathComponent(name), lines: name.hasSuffix("ndjson"))
                    == "valid")
        }
    }

    @Test(.requiresDecantBinary) func badJSONExits65NamingThePlaceAndCreatesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, String)] = [
            (
                "[{\"text\": \"a\"},\n {\"text\": 5}]",
                "Error: in.json:2:11: entity Note, key text: malformed input: the String attribute text expects a "
                    + "string, found a number"
            ),
            (
                "[{\"text\": \"a\"},\n {\"txt\": \"b\"}]",
                "Error: in.json:2:3: entity Note, key txt: malformed input: unknown key txt"
            ),
            (
                "[{\"text\": \"a\"},\n {\"text\": \"b\"",
                "Error: in.json:2:14: malformed input: unexpected end of file, expected ',' or '}'"
            ),
            (
                "[{\"text\": \"a\" \"b\"}]",
                "Error: in.json:1:15: malformed input: unexpected character '\"', expected ',' or '}'"
            ),
        ]
        for (text, expected) in cases {
            try Data(text.utf8).write(to: folder.appendingPathComponent("in.json"))
            let outcome = try Self.run(
                in: folder, ["convert", "in.json", "out.sqlite", "--model", Self.notes, "--entity", "Note"])
            #expect(outcome.status == 65)
            #expect(outcome.errors.hasPrefix(expected), "\(outcome.errors)")
            #expect(outcome.output.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["in.json"])
        }
        try Data([0x5B, 0x7B, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D, 0x5D]).write(
            to: folder.appendingPathComponent("in.json"))
        let utf8 = try Self.run(
            in: folder, ["convert", "in.json", "out.ndjson", "--model", Self.notes, "--entity", "Note"])
        #expect(utf8.status == 65)
        #expect(utf8.errors.hasPrefix("Error: in.json:1:11: malformed input: invalid UTF-8"), "\(utf8.errors)")
        let noEntity = try Self.run(in: folder, ["convert", "in.json", "out.sqlite", "--model", Self.notes])
        #expect(noEntity.status == 64)
        #expect(noEntity.errors.contains("--entity"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["in.json"])
    }
}
