import Decant
import DecantTestSupport
import Foundation
import Testing

/// Decant mapping files: a split that one source entity feeds into two linked destination entities, inferred mappings
/// that round-trip through files, and errors that name the file, line and key.
@Suite("Mapping files")
struct MappingFileMigrationTests {
    /// Docs 1: `Note{text, title}`. Docs 2: `Note{text, title, paragraphs}` and `Paragraph{body, position, note}`.
    static func docs() -> ModelBundle {
        var note1 = Entity(name: "Note")
        note1.attributes = [
            Attribute(name: "text", type: .string, isOptional: true),
            Attribute(name: "title", type: .string, isOptional: true),
        ]
        var note2 = note1
        note2.relationships = [
            Relationship(name: "paragraphs", destination: "Paragraph", inverse: "note", toMany: true)
        ]
        var paragraph = Entity(name: "Paragraph")
        paragraph.attributes = [
            Attribute(name: "body", type: .string, isOptional: true), Attribute(name: "position", type: .integer32),
        ]
        paragraph.relationships = [Relationship(name: "note", destination: "Note", inverse: "paragraphs")]
        return MigrationFixtures.bundle(
            "Docs",
            [
                ObjectModel(versionName: "Docs 1", entities: [note1]),
                ObjectModel(versionName: "Docs 2", entities: [note2, paragraph]),
            ]
        )
    }

    static let split = """
        source: Docs 1
        destination: Docs 2
        entities:
          Paragraph:
            from: Note
            where: '$source.text != nil'
            attributes:
              body: 'uppercase(trim($source.text))'
              position: 0
            relationships:
              note: $source
        """

    @Test func oneSourceEntityFeedsTwoLinkedDestinationEntities() throws {
        let bundle = Self.docs()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let v2 = bundle.versions[1]
        let store = folder.appendingPathComponent("docs1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["text": " milk ", "title": "Shopping"]),
                MigrationFixtures.record("Note", 2, in: v1, ["title": "Empty"]),
                MigrationFixtures.record("Note", 3, in: v1, ["text": "call Bob"]),
            ]
        )
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [try MappingFiles.parse(Self.split, path: "docs-1-2.yaml")]
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.hops.first?.file == "docs-1-2.yaml")
        // The `where` filters the Paragraph entry only: every Note is kept by its own entry, so nothing is dropped
        // (the plan said every Note not matching was, although all three were written).
        #expect(plan.plan.destructiveChanges.isEmpty)

        let output = folder.appendingPathComponent("docs2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let ledger = try #require(report.ledgers.first)
        #expect(ledger.rows["Note"] == MigrationLedger.Row(read: 3, written: 3))
        #expect(ledger.rows["Paragraph"] == MigrationLedger.Row(written: 2, removed: 1, created: 3))
        #expect(try MigrationFixtures.hashes(output) == v2.entityVersionHashes)
        let records = try MigrationFixtures.read(output, bundle: bundle)
        let paragraphs = try #require(records["Paragraph"])
        #expect(paragraphs.map { MigrationFixtures.value($0, "body", model: v2) } == ["MILK", "CALL BOB"])
        #expect(paragraphs.map { MigrationFixtures.value($0, "position", model: v2) } == [.integer(0), .integer(0)])
        #expect(
            paragraphs.map { MigrationFixtures.relationship($0, "note", model: v2) }
                == [.toOne(.pk("Note", 1)), .toOne(.pk("Note", 3))]
        )
        let notes = try #require(records["Note"])
        #expect(notes.map { MigrationFixtures.value($0, "title", model: v2) } == ["Shopping", "Empty", .null])
        #expect(try MigrationFixtures.sameAgain(store, as: output, options: options, bundle: bundle))
    }

    @Test(arguments: MappingFileWriter.Syntax.allCases)
    func anInferredMappingRoundTripsThroughAFile(_ syntax: MappingFileWriter.Syntax) throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try NotesMigrationTests.v1Store(in: folder, bundle: bundle)
        var inferredFiles: [ExplicitMapping] = []
        for (from, to) in [("Notes", "Notes 2"), ("Notes 2", "Notes 3")] {
            let source = try #require(bundle.version(named: from))
            let destination = try #require(bundle.version(named: to))
            let inferred = MappingInference.infer(from: source, to: destination)
            let text = MappingFileWriter.render(inferred.mapping, as: syntax)
            let file = try MappingFiles.parse(text, path: "\(from)-\(to).\(syntax.rawValue)")
            inferredFiles.append(file)
            // The file read back gives the same mapping, property by property.
            let again = MappingInference.infer(from: source, to: destination, explicit: file)
            #expect(again.problems.isEmpty)
            for mapping in inferred.mapping.entityMappings {
                let other = again.mapping.entityMappings.first { $0.name == mapping.name }
                #expect(other?.attributes.map(\.expression) == mapping.attributes.map(\.expression))
                #expect(other?.relationships.map(\.expression) == mapping.relationships.map(\.expression))
            }
        }
        var options = StoreMigration.Options(bundle: bundle)
        let inferredOutput = folder.appendingPathComponent("inferred.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(inferredOutput), options: options)
        options.mappings = inferredFiles
        let explicitOutput = folder.appendingPathComponent("explicit.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(explicitOutput), options: options)
        #expect(report.hops == ["Notes → Notes 2", "Notes 2 → Notes 3"])
        #expect(
            try MigrationFixtures.read(explicitOutput, bundle: bundle)
                == MigrationFixtures.read(inferredOutput, bundle: bundle)
        )
        #expect(try MigrationFixtures.hashes(explicitOutput) == MigrationFixtures.hashes(inferredOutput))
    }

    @Test func errorsNameTheFileTheLineAndTheKey() throws {
        let unknownKey = """
            source: Docs 1
            destination: Docs 2
            entities:
              Paragraph:
                from: Note
                atributes:
                  body: $source.text
            """
        let error = try #require(throws: DecantError.self) { try MappingFiles.parse(unknownKey, path: "bad.yaml") }
        #expect(error.location?.path == "bad.yaml")
        #expect(error.location?.line == 6)
        #expect(error.location?.keyPath == "entities.Paragraph.atributes")
        #expect(error.message.contains("unknown key atributes"))

        let badExpression = """
            {
              "source": "Docs 1",
              "destination": "Docs 2",
              "entities": {
                "Paragraph": {
                  "attributes": { "body": "uppercase($source.text" }
                }
              }
            }
            """
        let parse = try #require(throws: DecantError.self) { try MappingFiles.parse(badExpression, path: "bad.json") }
        #expect(parse.location?.line == 6)
        #expect(parse.location?.keyPath == "entities.Paragraph.attributes.body")
        #expect(parse.description.hasPrefix("bad.json:6: key entities.Paragraph.attributes.body: malformed input"))

        // A property the destination does not have is a plan problem at its line.
        let unknownProperty = """
            source: Docs 1
            destination: Docs 2
            entities:
              Paragraph:
                from: Note
                attributes:
                  heading: $source.title
            """
        let bundle = Self.docs()
        let file = try MappingFiles.parse(unknownProperty, path: "plan.yaml")
        let plan = try MigrationPlan(bundle: bundle, source: bundle.versions[0], mappings: [file])
        #expect(!plan.isExecutable)
        let problem = try #require(plan.problems.first)
        #expect(problem.location?.line == 7)
        #expect(
            problem.description.hasPrefix("plan.yaml:7: key entities.Paragraph.attributes.heading: Paragraph.heading:")
        )

        let invalidYAML = "source: [unclosed\n"
        let yaml = try #require(throws: DecantError.self) { try MappingFiles.parse(invalidYAML, path: "broken.yaml") }
        #expect(yaml.code == .malformedInput)
        #expect(yaml.location?.path == "broken.yaml")
        #expect(yaml.location?.line != nil)
    }
}

extension MappingFileMigrationTests {
    @Test func aRelationshipTakesOnlySourceReferences() throws {
        let text = """
            source: Docs 1
            destination: Docs 2
            entities:
              Paragraph:
                from: Note
                attributes:
                  position: 0
                relationships:
                  note: "uppercase($source.title)"
            """
        let bundle = Self.docs()
        let file = try MappingFiles.parse(text, path: "rel.yaml")
        let plan = try MigrationPlan(bundle: bundle, source: bundle.versions[0], mappings: [file])
        let problem = try #require(plan.problems.first)
        #expect(problem.property == "note")
        #expect(problem.location?.line == 9)
        #expect(problem.message.contains("a relationship takes $source.<key path>"))
        #expect(problem.message.contains("mapped(") && problem.message.contains("uppercase($source.title)"))
    }
}
