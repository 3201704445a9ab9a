import ArgumentParser
import DecantCodecs
import Decant
@testable import DecantCLI
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// `decant inspect` on every model in the corpus, through the library path the command takes, plus argument
/// parsing.
@Suite("inspect")
struct InspectCommandTests {
    static let models: [String] = Fixtures.corpusItems { url in
        ["xcdatamodeld", "momd", "mom"].contains(url.pathExtension)
            || (url.pathExtension == "xcdatamodel" && url.deletingLastPathComponent().pathExtension != "xcdatamodeld")
    }.map(Fixtures.corpusRelativePath)

    /// 102 `.xcdatamodeld`, 2 `.momd` and 5 `.xcdatamodel` on their own in the corpus, the legacy corpus's Xcode 3
    /// `.xcdatamodel`, and the apps corpus's 28 `.xcdatamodeld`.
    @Test func theCorpusHasItsModels() {
        #expect(Self.models.count == 138)
    }

    @Test("describes every corpus model, Xcode 3 models included", arguments: models)
    func everyModel(_ path: String) throws {
        let url = Fixtures.corpus(path)
        let bundle = try ModelBundle.load(from: url)
        let report = ModelReport(bundle: bundle, path: path)
        #expect(report.versions.count == bundle.versions.count)
        #expect(report.versions.filter(\.isCurrent).count <= 1)
        for version in report.versions {
            #expect(version.entities.allSatisfy { Data(base64Encoded: $0.versionHash)?.count == 32 })
            #expect(Data(base64Encoded: version.checksum)?.count == 32)
        }
        let json = try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any]
        #expect(json?["kind"] as? String == "model")
        #expect(!report.text.isEmpty)
        #expect(report.versions.map(\.isXcode3Model) == bundle.versions.map(\.isXcode3Model))
    }

    @Test func parsesOptions() throws {
        let command = try DecantCommand.parseAsRoot(["inspect", "Notes.sqlite", "--model", "Notes.xcdatamodeld", "--json"])
        let inspect = try #require(command as? DecantCommand.Inspect)
        #expect(inspect.path == "Notes.sqlite")
        #expect(inspect.model == "Notes.xcdatamodeld")
        #expect(inspect.options.json)
    }

    @Test func convertParsesJournal() throws {
        let command = try DecantCommand.parseAsRoot(["convert", "a.sqlite", "b.sqlite", "--journal", "delete"])
        let convert = try #require(command as? DecantCommand.Convert)
        #expect(convert.outputOptions.journal == .delete)
        expectUsageError(["convert", "a", "b", "--journal", "x"], mentioning: "--journal")
    }

    @Test func helpNamesEveryCommand() {
        let help = DecantCommand.helpMessage(columns: 100)
        #expect(help.contains("inspect"))
        #expect(help.contains("convert"))
        #expect(help.contains("65 bad input data"))
    }
}
