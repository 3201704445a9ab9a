import DecantTestSupport
import DecantTesting
import Foundation
import Testing

/// The examples of DecantTesting's DocC article compile: each is copied verbatim below (its `import` lines left
/// out, and its test function's `@Test` attribute, so that it is compiled and not run: the article's paths are the
/// reader's), and a test checks the copies still match the article.
@Suite("Testing library article")
struct ArticleExampleTests {
    static let article = Fixtures.packageRoot.appendingPathComponent(
        "Sources/DecantTesting/DecantTesting.docc/DecantTesting.md")

    @Test func theArticlesExamplesAreTheCompiledOnes() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = DocumentationExamples.swiftBlocks(in: try String(contentsOf: Self.article, encoding: .utf8))
        #expect(blocks.count == 3)
        // The first is a line of a package manifest, not code of a test.
        for block in blocks.dropFirst() {
            let code = DocumentationExamples.compiledForm(of: block)
            #expect(
                [4, 8].contains { source.contains(DocumentationExamples.indent(code, by: $0)) },
                "an example of the article is not compiled here:\n\(code)")
        }
    }

    func contentBecomesText() throws {
        var store = try TestStore(model: URL(fileURLWithPath: "Notes.xcdatamodeld"), version: "Notes")
        let home = try store.insert("Folder", ["name": "Home"])
        try store.insert("Note", ["content": "Buy milk"], relationships: ["folder": .toOne(home)])
        try store.insert("Note", ["content": "Call mum"])

        let migrated = try store.migrated()   // to the current version

        #expect(try migrated.count("Note") == 2)
        let milk = try #require(try migrated.fetch("Note", where: "text BEGINSWITH 'Buy' AND folder.name == 'Home'").first)
        #expect(milk["text"] == "Buy milk")
    }

    func fixture() throws {
        let old = try TestStore.load(URL(fileURLWithPath: "Fixtures/Notes-1.0.sqlite"),
                                     model: URL(fileURLWithPath: "Notes.xcdatamodeld"))
        let current = try old.migrated(mappings: [URL(fileURLWithPath: "Migrations/")])
        #expect(current.migrationReport?.rejected == 0)
    }
}
