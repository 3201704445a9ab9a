import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant migrate` through Transformable values: a mapping file moves a field out of an archived dictionary, an app
/// class reads as nil with one `warning:`, and bytes that are no archive stop the run with a located error (exit 65).
extension EndToEndTests {
    /// Cards 1 `Card{info: Transformable}` → Cards 2 `Card{title: String}`, and a store of three cards: a dictionary,
    /// an app class, and `info` given by `third`.
    static func cards(third: Data, in folder: URL) throws -> (model: URL, store: URL, mapping: URL) {
        let model = try ModelBundleFiles.write(
            "Cards",
            versions: [
                ("Cards 1", #"<entity name="Card"><attribute name="info" optional="YES" attributeType="Transformable"/></entity>"#),
                ("Cards 2", #"<entity name="Card"><attribute name="title" optional="YES" attributeType="String"/></entity>"#),
            ], current: "Cards 2", in: folder)
        let v1 = try #require(try ModelBundle.load(from: model).version(named: "Cards 1"))
        let store = folder.appendingPathComponent("cards.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: v1)
        let layout = try #require(RecordLayout(entity: "Card", in: v1))
        var batch = RecordBatch(layout: layout)
        let infos = [
            try FoundationValue.dictionary([.init("title", .string("Ace"))]).archivedData(),
            try TransformableFixtures.object("MyApp.Cover"), third,
        ]
        for (key, info) in infos.enumerated() {
            batch.append(Record(entity: "Card", id: .primaryKey(Int64(key + 1)), values: [.transformable(info)]))
        }
        try writer.write(batch)
        try writer.finish()
        let mapping = folder.appendingPathComponent("cards.yaml")
        try Data(
            "source: Cards 1\ndestination: Cards 2\nentities:\n  Card:\n    attributes:\n      title: $source.info.title\n"
                .utf8
        ).write(to: mapping)
        return (model, store, mapping)
    }

    @Test(.requiresDecantBinary) func migrateReadsKeysOutOfArchivedDictionaries() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cards = try Self.cards(
            third: try FoundationValue.dictionary([.init("title", .string("Two"))]).archivedData(), in: folder)
        let output = folder.appendingPathComponent("out.sqlite")
        let run = try Self.run([
            "migrate", cards.store.path, "--model", cards.model.path, "--mapping", cards.mapping.path, "--output",
            output.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "warning: \(cards.store.path): entity Card, object Card/p2: Card.title: 1 value read from archives holding classes outside "
                    + "Foundation's plain ones (MyApp.Cover) was nil, as NSSecureUnarchiveFromData gives them (Card/p2)"),
            "\(run.stderr)")
        let titles = try Self.run(["convert", output.path, folder.appendingPathComponent("out.ndjson").path])
        #expect(titles.status == 0, "\(titles.stderr)")
        let lines = try String(contentsOf: folder.appendingPathComponent("out.ndjson"), encoding: .utf8)
        #expect(lines.contains(#""title":"Ace""#) && lines.contains(#""title":"Two""#), "\(lines)")
    }

    @Test(.requiresDecantBinary) func migrateStopsOnBytesThatAreNoArchive() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cards = try Self.cards(third: Data("#ff0000".utf8), in: folder)
        let output = folder.appendingPathComponent("out.sqlite")
        let run = try Self.run([
            "migrate", cards.store.path, "--model", cards.model.path, "--mapping", cards.mapping.path, "--output",
            output.path,
        ])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(
            run.stderr.hasPrefix(
                "Error: \(cards.store.path): entity Card, object Card/p3, key title: malformed input: CardToCard "
                    + "(Cards 1 → Cards 2): $source.info.title: the value is not a keyed archive (7 bytes)"),
            "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
