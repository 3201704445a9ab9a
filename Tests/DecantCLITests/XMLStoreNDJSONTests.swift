import DecantTestSupport
import Foundation
import Testing

/// Every Apple-written XML store in the corpus (each `xcmapping.xml`) reads without a model and converts to NDJSON
/// with one line per object.
@Suite("XML stores to NDJSON", .requiresDecantBinary)
struct XMLStoreNDJSONTests {
    static let stores = Fixtures.corpusItems { $0.lastPathComponent == "xcmapping.xml" }.map(Fixtures.corpusRelativePath)

    /// Eleven in the corpus, six in the apps corpus.
    @Test func theCorpusHasItsSeventeenXMLStores() {
        #expect(Self.stores.count == 17)
    }

    @Test("one NDJSON line per object", arguments: stores)
    func oneLinePerObject(_ store: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Fixtures.corpus(store)
        let objects = try String(contentsOf: source, encoding: .utf8).components(separatedBy: "<object ").count - 1
        let output = folder.appendingPathComponent("store.ndjson")
        let outcome = try EndToEndTests.run(["convert", source.path, output.path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == objects + 1, "\(store): header plus \(objects) objects")
        #expect(objects > 0)
    }
}
