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
                ("Cards 1", Self.card(#"name="info" optional="YES" attributeType="Transformable""#)),
                ("Cards 2", Self.card(#"name="title" optional="YES" attributeType="String""#)),
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
            ("source: Cards 1\ndestination: Cards 2\nentities:\n  Card:\n    attributes:\n"
                + "      title: $source.info.title\n").utf8
        ).write(to: mapping)
        return (model, store, mapping)
    }

    /// A `Card` entity of one attribute, whose XML attributes are `attribute`.
    static func card(_ attribute: String) -> String {
        #"<entity name="Card"><attribute "# + attribute + "/></entity>"
    }

    /// Runs `decant migrate` on ``cards(third:in:)`` into `output`.
    static func migrate(_ cards: (model: URL, store: URL, mapping: URL), to output: URL) throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        try run([
            "migrate", cards.store.path, "--model", cards.model.path, "--mapping", cards.mapping.path, "--output",
            output.path,
        ])
    }

    @Test(.requiresDecantBinary) func migrateReadsThroughArchivedValues() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Two dictionaries and an app class: the app class reads as nil, with one warning.
        let good = folder.appendingPathComponent("good")
        try FileManager.default.createDirectory(at: good, withIntermediateDirectories: true)
        let cards = try Self.cards(
            third: try FoundationValue.dictionary([.init("title", .string("Two"))]).archivedData(), in: good)
        let output = good.appendingPathComponent("out.sqlite")
        let run = try Self.migrate(cards, to: output)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "warning: \(cards.store.path): entity Card, object Card/p2: Card.title: 1 value read from archives "
                    + "holding classes outside Foundation's plain ones (MyApp.Cover) was nil, as "
                    + "NSSecureUnarchiveFromData gives them (Card/p2)"),
            "\(run.stderr)")
        let titles = try Self.run(["convert", output.path, good.appendingPathComponent("out.ndjson").path])
        #expect(titles.status == 0, "\(titles.stderr)")
        let lines = try String(contentsOf: good.appendingPathComponent("out.ndjson"), encoding: .utf8)
        #expect(lines.contains(#""title":"Ace""#) && lines.contains(#""title":"Two""#), "\(lines)")

        // Bytes that are no archive stop the run, naming the object and attribute (exit 65); no output is left.
        let bad = folder.appendingPathComponent("bad")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        let hex = try Self.cards(third: Data("#ff0000".utf8), in: bad)
        let failed = try Self.migrate(hex, to: bad.appendingPathComponent("out.sqlite"))
        #expect(failed.status == 65, "\(failed.stderr)")
        #expect(
            failed.stderr.hasPrefix(
                "Error: \(hex.store.path): entity Card, object Card/p3, key title: malformed input: CardToCard "
                    + "(Cards 1 → Cards 2): $source.info.title: the value is not a keyed archive (7 bytes)"),
            "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bad.appendingPathComponent("out.sqlite").path))
    }
}
