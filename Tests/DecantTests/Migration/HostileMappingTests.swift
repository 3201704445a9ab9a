import Decant
import DecantTestSupport
import Foundation
import Testing

/// Mapping files a fuzzer found: arithmetic that overflows a 64-bit integer (which trapped the process), and YAML
/// aliases nested to expand to gigabytes. Each is answered with a located error (or, at run time, a reject).
@Suite("Hostile mapping files")
struct HostileMappingTests {
    static func file(_ expression: String, syntax: String) -> String {
        let escaped = expression.replacingOccurrences(of: "\"", with: "\\\"")
        if syntax == "json" {
            return """
                {
                  "source": "Docs 1",
                  "destination": "Docs 2",
                  "entities": {
                    "Paragraph": {
                      "from": "Note",
                      "attributes": { "position": "\(escaped)" }
                    }
                  }
                }
                """
        }
        return """
            source: Docs 1
            destination: Docs 2
            entities:
              Paragraph:
                from: Note
                attributes:
                  position: "\(escaped)"
            """
    }

    @Test(
        "an expression that overflows on every object is refused at its file, line and key",
        arguments: [
            "floor(1e308)", "ceil(-1e308)", "round(1e308)", "integer(1e308)", "integer('nan')",
            "-(-9223372036854775807 - 1)", "(-9223372036854775807 - 1) / -1", "9223372036854775807 + 1",
            "-9223372036854775807 - 2", "4611686018427387904 * 2", "abs(-9223372036854775807 - 1)",
            "substring($source.text, 0, floor(1e308))",
        ], ["yaml", "json"])
    func constantOverflowIsLocated(_ expression: String, _ syntax: String) throws {
        let text = Self.file(expression, syntax: syntax)
        let error = try #require(throws: DecantError.self) {
            try MappingFiles.parse(text, path: "overflow.\(syntax)")
        }
        #expect(error.code == .malformedInput)
        #expect(error.location?.path == "overflow.\(syntax)")
        #expect(error.location?.line == (syntax == "json" ? 7 : 7))
        #expect(error.location?.keyPath == "entities.Paragraph.attributes.position")
        #expect(error.message.contains("does not fit a 64-bit integer"), "\(error.message)")
    }

    @Test func remainderByMinusOneIsZeroAndLegalEdgesStillWork() throws {
        // Int64.min % -1 is 0 (Swift's `%` traps on it); the extremes themselves are fine.
        for (expression, value) in [
            ("(-9223372036854775807 - 1) % -1", Value.integer(0)),
            ("-9223372036854775807 - 1", .integer(.min)), ("9223372036854775806 + 1", .integer(.max)),
            ("floor(-9223372036854775808.0)", .integer(.min)),
        ] {
            #expect(try MappingFiles.parse(Self.file(expression, syntax: "yaml"), path: "ok.yaml").entities.count == 1)
            let parsed = try ValueExpression(parsing: expression)
            #expect(try parsed.evaluate(source: { _ in .null }, functions: ValueExpressionFunctions()) == value)
        }
    }

    /// Docs 1 notes with texts of 0, 2 and 3 characters: `length($source.text) * 4611686018427387904` overflows for
    /// the last two only, so only a run can find it.
    static func store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("docs1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["text": ""]),
                MigrationFixtures.record("Note", 2, in: v1, ["text": "ab"]),
                MigrationFixtures.record("Note", 3, in: v1, ["text": "abc"]),
            ])
        return store
    }

    @Test func anOverflowAtRunTimeNamesTheObjectOrIsRejected() throws {
        let bundle = MappingFileMigrationTests.docs()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        var options = StoreMigration.Options(bundle: bundle)
        let text = Self.file("length($source.text) * 4611686018427387904", syntax: "yaml")
        options.mappings = [try MappingFiles.parse(text, path: "runtime.yaml")]

        let output = folder.appendingPathComponent("out.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        }
        #expect(error.code == .malformedInput)
        #expect(error.location?.path == "runtime.yaml")
        #expect(error.location?.object == "Note/p2")
        #expect(error.location?.keyPath == "position")
        #expect(error.message.contains("2 * 4611686018427387904 does not fit a 64-bit integer"), "\(error.message)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.first?.rows["Paragraph"]?.rejected == 2)
        let rejects = try String(contentsOf: folder.appendingPathComponent("rejects.ndjson"), encoding: .utf8)
            .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        #expect(rejects.map { $0?["object"] } == ["Note/p2", "Note/p3"])
        #expect(rejects.map { $0?["rule"] } == ["overflow", "overflow"])
        #expect(rejects.first??["property"] == "position")
    }

    @Test func nestedYAMLAliasesAreBounded() throws {
        // Six levels of twelve aliases: 12^6 (about three million) copies of the first list.
        var text = "a: &a [x, x, x, x, x, x, x, x, x, x, x, x]\n"
        let names = ["a", "b", "c", "d", "e", "f", "g"]
        for level in 1..<names.count {
            let items = Array(repeating: "*\(names[level - 1])", count: 12).joined(separator: ", ")
            text += "\(names[level]): &\(names[level]) [\(items)]\n"
        }
        text += "source: Docs 1\ndestination: Docs 2\n"
        #expect(text.utf8.count < 600)
        let error = try #require(throws: DecantError.self) { try MappingFiles.parse(text, path: "laughs.yaml") }
        #expect(error.code == .malformedInput)
        #expect(error.location?.path == "laughs.yaml")
        #expect((2...7).contains(error.location?.line ?? 0), "\(error)")
        #expect(error.message.contains("YAML aliases expand past the limit (10000 aliases"), "\(error.message)")
    }

    @Test func aFewAliasesStillExpand() throws {
        let text = """
            source: Docs 1
            destination: Docs 2
            entities:
              Paragraph:
                from: Note
                attributes: &shared
                  body: $source.text
                  position: 0
              Note:
                attributes: *shared
            """
        let mapping = try MappingFiles.parse(text, path: "aliases.yaml")
        let note = try #require(mapping.entities.first { $0.destination == "Note" })
        #expect(note.attributes.map(\.name) == ["body", "position"])
    }
}
