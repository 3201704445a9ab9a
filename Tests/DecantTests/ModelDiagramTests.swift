@testable import Decant
import DecantTestSupport
import Foundation
import Testing

/// Model diagrams: Graphviz renders every corpus model's DOT without a warning; Mermaid text has every entity and
/// relationship exactly once, names quoted where Mermaid needs it; the README's diagram is the command's output.
@Suite("Model diagrams")
struct ModelDiagramTests {
    /// Every bundle, and every `.xcdatamodel` outside one (the legacy corpus's Xcode 3 model among them).
    static let bundles: [URL] = Fixtures.corpusItems { url in
        ["xcdatamodeld", "momd"].contains(url.pathExtension)
            || (url.pathExtension == "xcdatamodel" && url.deletingLastPathComponent().pathExtension != "xcdatamodeld")
    }

    static func models() -> [(String, ObjectModel)] {
        bundles.flatMap { url -> [(String, ObjectModel)] in
            let record = { (text: String) in _ = Issue.record(Comment(rawValue: text)) }
            guard let bundle = CorpusAllowList.loadModelBundle(url, record: record, load: ModelBundle.load(from:))
            else { return [] }
            return bundle.versions.map { ("\(Fixtures.corpusRelativePath(url)) \($0.versionName ?? "")", $0) }
        }
    }

    @Test(.enabled(if: Graphviz.shouldRun, Graphviz.skipReason)) func graphvizRendersEveryCorpusModelWithoutWarnings() throws {
        let dot = try #require(Graphviz.dot, "`dot` is not on PATH, and make test (make deps) installs graphviz")
        let models = Self.models()
        #expect(models.count > 100)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, model) in models {
            let source = folder.appendingPathComponent("model.dot")
            try Data(ModelDiagram(model: model, style: .dot).text.utf8).write(to: source)
            let outcome = try Subprocess.run(dot, ["-Tsvg", source.path])
            #expect(outcome.status == 0, "\(name): \(outcome.errors)")
            #expect(outcome.errors.isEmpty, "\(name): \(outcome.errors)")
            #expect(outcome.output.contains("<svg"), "\(name)")
        }
    }

    @Test func mermaidHasEveryEntityAndRelationshipOnce() throws {
        for (name, model) in Self.models() {
            let diagram = ModelDiagram(model: model, style: .mermaid)
            let lines = diagram.text.split(separator: "\n").map(String.init)
            for entity in model.entities {
                let declared = lines.filter { $0 == "    class \(ModelDiagram.mermaidName(entity.name)) {" }
                #expect(declared.count == 1, "\(name): \(entity.name)")
            }
            // Every relationship is on exactly one line, with its inverse when it has one; and, where inverses are not
            // paired (Image.artist's inverse is Artist.thumbnail, whose own inverse is Image.thumbnail), once more beside
            // each other relationship that names it as its inverse.
            let relationshipLines = lines.filter { $0.contains(" : ") }
            #expect(relationshipLines.count == diagram.links.count, "\(name)")
            for entity in model.entities {
                let shown = ModelDiagram.mermaidName(entity.name)
                for relationship in entity.relationships where !relationship.isTransient {
                    // `NAME` or `NAME (notes)`, the whole of one side of a label.
                    let name = ModelDiagram.mermaidText(relationship.name)
                    func isSide(_ side: Substring) -> Bool { side == name || side.hasPrefix(name + " (") }
                    let mentions = relationshipLines.filter { line in
                        guard let colon = line.range(of: " : ") else { return false }
                        let sides = line[colon.upperBound...].components(separatedBy: " / ").map { Substring($0) }
                        // On this entity's side of the line (first), or as the inverse of a line ending at it.
                        let forward = line.hasPrefix("    \(shown) ") && sides.first.map(isSide) == true
                        let inverse = line[..<colon.lowerBound].hasSuffix(" \(shown)") && sides.count == 2 && isSide(sides[1])
                        return forward || inverse
                    }
                    let partner = relationship.inverseName.map { "\(relationship.destinationEntity ?? "?").\($0)" }
                    let namingIt = model.entities.flatMap { other in
                        other.relationships.filter {
                            !$0.isTransient && $0.destinationEntity == entity.name && $0.inverseName == relationship.name
                        }.map { "\(other.name).\($0.name)" }
                    }.filter { $0 != partner }
                    #expect(
                        mentions.count == 1 + namingIt.count,
                        "\(name): \(entity.name).\(relationship.name) (named as inverse by \(namingIt)): \(mentions)")
                }
            }
        }
    }

    @Test func theNotesModelsMermaidIsAsWrittenByHand() throws {
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let text = ModelDiagram(model: try #require(bundle.currentVersion), style: .mermaid).text
        #expect(
            text == """
                classDiagram
                    direction LR
                    class Folder {
                        +String? name
                    }
                    class `Note` {
                        +Date? date
                        +String? text
                        +String? title
                    }
                    Folder "0..1" -- "*" `Note` : notes / folder
                """)
    }

    @Test func namesMermaidWouldMisreadAreQuoted() {
        #expect(ModelDiagram.mermaidName("Folder") == "Folder")
        #expect(ModelDiagram.mermaidName("Note") == "`Note`")
        #expect(ModelDiagram.mermaidName("class") == "`class`")
        #expect(ModelDiagram.mermaidName("Café") == "`Café`")
        #expect(ModelDiagram.mermaidName("2D") == "`2D`")
        #expect(ModelDiagram.dotString(#"a "b" \c"#) == #""a \"b\" \\c""#)
    }

    @Test func readmeShowsTheCommandsOutput() throws {
        let readme = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/USAGE.md"), encoding: .utf8)
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let current = try #require(bundle.currentVersion)
        let block = "```mermaid\n" + ModelDiagram(model: current, style: .mermaid).text + "\n```"
        #expect(readme.contains(block), "docs/USAGE.md's Notes diagram differs from `decant inspect samples/Notes.xcdatamodeld --diagram mermaid`:\n\(block)")
    }
}
