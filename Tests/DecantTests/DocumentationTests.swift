import Decant
import DecantTestSupport
import Foundation
import Testing

/// The DocC articles of the library products: their code examples compile (each is copied verbatim below, its
/// `import` lines left out, in a method that is compiled and never run, since the paths are the reader's), and
/// their symbol links name public declarations.
@Suite("Documentation")
struct DocumentationTests {
    static let catalogs = [
        "Sources/Decant/Documentation.docc", "Sources/DecantTesting/DecantTesting.docc",
    ].map { Fixtures.packageRoot.appendingPathComponent($0, isDirectory: true) }

    /// Every article of the catalogs.
    static func articles() throws -> [URL] {
        try catalogs.flatMap { catalog in
            try FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
        }
    }

    /// Every Swift source of the library targets, as one text.
    static func librarySources() throws -> String {
        let root = Fixtures.packageRoot.appendingPathComponent("Sources", isDirectory: true)
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 100)
        return try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    @Test func everySymbolLinkNamesAPublicDeclaration() throws {
        let sources = try Self.librarySources()
        let modules: Set<String> = ["Decant", "DecantTesting"]
        var checked = 0
        for article in try Self.articles() {
            let text = try String(contentsOf: article, encoding: .utf8)
            // An unclosed link swallows the text up to the next one: a link never spans a line.
            for link in DocumentationExamples.symbolLinks(in: text) {
                #expect(!link.contains("\n") && !link.contains(" "), "\(article.lastPathComponent): ``\(link)")
                for component in link.split(separator: "/") where !modules.contains(String(component)) {
                    let name = String(component.prefix { $0 != "(" && $0 != "-" })
                    let pattern =
                        #"(public ((static|mutating|final|indirect|nonisolated|private\(set\)) )*"#
                        + #"(struct|enum|class|protocol|actor|typealias|func|var|let|init|subscript)|\bcase) "#
                        + NSRegularExpression.escapedPattern(for: name) + #"\b"#
                    #expect(
                        sources.range(of: pattern, options: .regularExpression) != nil,
                        "\(article.lastPathComponent): ``\(link)`` names \(name), which no library source declares")
                    checked += 1
                }
            }
        }
        #expect(checked > 30)
    }

    @Test func everyDocCommentLinkNamesADeclaration() throws {
        // A doc comment may link an internal declaration (DocC builds internal documentation too), so any access
        // level counts here.
        let sources = try Self.librarySources()
        // `init` and `subscript` are linked by their keyword; an extended type (``Foundation/URL/displayPath``) is
        // declared here by its extension.
        var declared: Set<Substring> = ["init", "subscript"]
        let declaration = #/\b(struct|enum|class|protocol|actor|typealias|func|var|let|case|subscript|extension) `?(\w+)/#
        for match in sources.matches(of: declaration) { declared.insert(match.output.2) }
        let modules: Set<Substring> = [
            "Decant", "DecantCore", "DecantFormats", "DecantSQLite", "DecantTesting", "DecantYAML", "Foundation",
        ]
        var checked = 0
        for line in sources.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("///") {
            for link in line.matches(of: #/``([^`]+)``/#).map(\.output.1) {
                for component in link.split(separator: "/") where !modules.contains(component) {
                    let name = component.prefix { $0 != "(" && $0 != "-" }
                    #expect(declared.contains(name), "``\(link)`` in \(line): no source declares \(name)")
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
    }

    @Test func theArticlesExamplesAreTheCompiledOnes() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        for name in ["Decant.md", "MigrationPolicies.md"] {
            let article = Self.catalogs[0].appendingPathComponent(name)
            let blocks = DocumentationExamples.swiftBlocks(in: try String(contentsOf: article, encoding: .utf8))
            #expect(!blocks.isEmpty, "\(name)")
            for block in blocks {
                let code = DocumentationExamples.compiledForm(of: block)
                #expect(
                    source.contains(DocumentationExamples.indent(code, by: 8)),
                    "an example of \(name) is not compiled here:\n\(code)")
            }
        }
    }

    // MARK: The examples, compiled

    func decantOverview() throws {
        let bundle = try ModelBundle.load(from: URL(fileURLWithPath: "Notes.xcdatamodeld"))
        if let current = bundle.currentVersion, let note = current.entityVersionHashes["Note"] {
            print(note.base64EncodedString(), current.versionChecksum)
        }

        // The whole job: reconciled counts and warnings in the report.
        let report = try StoreConversion.convert(
            from: URL(fileURLWithPath: "Notes.sqlite"), to: URL(fileURLWithPath: "Copy.sqlite"),
            options: FormatOptions(bundle: bundle))
        print(report.written)

        // The same through the pipeline: a reader, an optional transform, a writer.
        let store = try SQLiteStore(contentsOf: URL(fileURLWithPath: "Notes.sqlite"))
        let model = try store.resolveModel(bundle: bundle)        // the version whose hashes match
        var reader = try SQLiteStoreReader(store: store, model: model)
        var writer = try SQLiteStoreWriter(creating: URL(fileURLWithPath: "Copy.sqlite"), model: model)
        let counts = try RecordTransfer.copy(from: &reader, to: &writer)   // abandons the writer on any error
        print(counts)
    }

    func decantMigration(bundle: ModelBundle) throws {
        var options = StoreMigration.Options(bundle: bundle)                  // to the current version
        options.mappings = [try MappingFiles.load(from: URL(fileURLWithPath: "Notes2-Notes3.yaml"))]
        let plan = try StoreMigration.plan(store: URL(fileURLWithPath: "Notes.sqlite"), options: options)
        guard plan.plan.isExecutable else { throw DecantError(.planNotExecutable, "\(plan.plan.problems)") }
        let report = try StoreMigration.migrate(
            store: URL(fileURLWithPath: "Notes.sqlite"), to: .file(URL(fileURLWithPath: "Notes3.sqlite")), options: options)
        print(report.written)
    }

    func migrationPolicies() throws {
        struct NoteToParagraphPolicy: EntityMigrationPolicy {
            func createDestinationInstances(
                forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
            ) throws {
                let note = try manager.createDefaultDestinationInstance()
                let text = try manager.sourceValue("text").text
                let paragraph = manager.insertObject(entity: "Paragraph")
                paragraph["title"] = text.map { .string(String($0.prefix(24))) } ?? .null
                paragraph["body"] = .string(text ?? "")
                paragraph["position"] = .integer(0)
                paragraph.setRelationship("note", to: [note.reference])
            }
        }

        var options = StoreMigration.Options(bundle: try ModelBundle.load(from: URL(fileURLWithPath: "Journal.xcdatamodeld")))
        try options.loadMappings(from: [URL(fileURLWithPath: "Journal 1-Journal 2.xcmappingmodel")])
        options.functions.registerPolicy(NoteToParagraphPolicy(), as: "NotesMigration.NoteToParagraphPolicy")
        options.functions.registerMethod("Helpers", selector: "normalizedPlate:") { arguments in
            .string(arguments.first?.text?.uppercased() ?? "")
        }
        let report = try StoreMigration.migrate(
            store: URL(fileURLWithPath: "Journal.sqlite"), to: .file(URL(fileURLWithPath: "Journal2.sqlite")),
            options: options)
        print(report.written)
    }
}
