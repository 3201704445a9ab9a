import DecantCore
@testable import DecantCodecs
import DecantTestSupport
import Foundation
import Testing

@testable import DecantFormats

/// The JSON writer spells references by primary key from bytes (the entity's escaped name once per batch, then the
/// key's digits): each must read as the string of the reference's ``ObjectReference/description``, whatever the
/// entity name holds and whichever kind of cell the reference is.
@Suite("JSON reference spelling")
struct JSONReferenceSpellingTests {
    @Test("references read as their descriptions", arguments: JSONRecordWriter.Style.allCases)
    func referencesReadAsTheirDescriptions(_ style: JSONRecordWriter.Style) throws {
        let model = CSVFieldSpellingTests.model
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        // A name that must be escaped, a multi-byte one, and indices past the names ("?").
        let names = ["Item", "Ow\"ner\\", "Owner", "Ünïcödé"]
        var batch = RecordBatch(layout: layout, entityNames: names)
        var expected: [(labels: [String], owner: String?)] = []
        for row in 0..<500 {
            batch.beginRecord(id: .primaryKey(Int64(row + 1)))
            for _ in layout.attributes { batch.appendNull() }
            var keys: [Int64] = []
            var entities: [Int32] = []
            for member in 0..<(row % 5) {
                keys.append(Int64(row * 7 + member) - 3)
                entities.append(Int32((row + member) % 6))
            }
            if row % 10 == 7 {
                batch.appendReferenceList([
                    ObjectReference(entity: "Owner", id: .external("o\"\(row)")),
                    ObjectReference(entity: "Ow\"ner\\", id: .primaryKey(Int64(row))),
                ])
            } else {
                batch.appendReferenceList(primaryKeys: keys, entityIndices: entities)
            }
            switch row % 5 {
            case 0: batch.appendReference(primaryKey: Int64(row), entityIndex: Int32(row % 4))
            case 1: batch.appendNull()
            case 2: batch.appendReference(primaryKey: -Int64(row), entityIndex: 9)
            case 3: batch.appendReference(ObjectReference(entity: "Ünïcödé", id: .external("x/\(row)")))
            default: batch.appendReferenceList(primaryKeys: [Int64.max], entityIndices: [1])
            }
            batch.endRecord()
            let list = batch.cell(row: row, column: layout.attributes.count)
            let start = Int(list.integer)
            let labels = batch.references[start..<start + Int(list.length)].map { batch.reference(of: $0).description }
            let owner = batch.cell(row: row, column: layout.attributes.count + 1)
            switch owner.kind {
            case .reference, .externalReference: expected.append((labels, batch.reference(of: owner).description))
            case .referenceList:
                expected.append((labels, batch.reference(of: batch.references[Int(owner.integer)]).description))
            default: expected.append((labels, nil))
            }
        }
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(style == .lines ? "items.ndjson" : "items.json")
        let writer = try JSONRecordWriter(creating: url, model: model, style: style)
        try writer.write(batch)
        try writer.finish()
        let objects: [[String: Any]]
        let data = try Data(contentsOf: url)
        if style == .lines {
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst()
            objects = try lines.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        } else {
            let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            objects = try #require(document["objects"] as? [[String: Any]])
        }
        try #require(objects.count == expected.count)
        for (row, (object, wanted)) in zip(objects, expected).enumerated() {
            #expect(object["labels"] as? [String] == wanted.labels, "row \(row)")
            if let owner = wanted.owner {
                #expect(object["owner"] as? String == owner, "row \(row)")
            } else {
                #expect(object["owner"] is NSNull, "row \(row)")
            }
        }
    }
}
