import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// A composite attribute's value in JSON and NDJSON is a nested object of its elements; CSV refuses composites
/// with a message that says where they go instead.
@Suite("Composite values in JSON and CSV")
struct CompositeJSONTests {
    static let model = CompositeFixtures.trip
    static let options = FormatOptions(bundle: JSONTesting.bundle(model))

    static func store() throws -> InMemoryStore {
        try JSONTesting.store(model, ["Trip": CompositeFixtures.tripRecords(in: model)])
    }

    @Test(arguments: [JSONRecordWriter.Style.document, .lines])
    func aCompositeIsANestedObjectAndReadsBack(style: JSONRecordWriter.Style) throws {
        let data = try JSONTesting.write(try Self.store(), style: style)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""season":{"summer":"summer"}"#) || text.contains(#""season" : {"summer":"summer"}"#), "\(text)")
        #expect(text.contains(#"{"city":"Lisboa","id":"0A5E0D1C-2B3C-4D5E-8F90-A1B2C3D4E5F6","latitude":38.72,"stops":"AQID"}"#), "\(text)")
        let read = try JSONTesting.read(data, style: style, options: Self.options)
        #expect(read.records(of: "Trip").map(\.values) == CompositeFixtures.tripRecords(in: Self.model).map(\.values))
    }

    /// A composite's JSON that is not an object of its elements, each of its type, is refused naming the attribute.
    @Test(arguments: [
        (#""place": "Lisboa""#, "an object of its elements (id, city, latitude, stops), found a string"),
        (#""place": {"town": "Lisboa"}"#, "only its elements (id, city, latitude, stops), found the key town"),
        (#""place": {"latitude": "north"}"#, "for its element latitude a number"),
        (#""place": {"id": 7}"#, "for its element id a UUID"),
    ])
    func aWrongCompositeIsRefused(member: String, expected: String) throws {
        let data = try JSONTesting.write(try Self.store(), style: .lines)
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.contains("Lisbon") })
        let start = try #require(lines[index].range(of: #""place":"#))
        let end = try #require(lines[index].range(of: "},", range: start.upperBound..<lines[index].endIndex))
        lines[index].replaceSubrange(start.lowerBound..<end.upperBound, with: member + ",")
        let error = JSONTesting.readError(lines.joined(separator: "\n") + "\n", style: .lines, options: Self.options)
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("attribute place expects \(expected)") == true, "\(String(describing: error))")
        #expect(error?.location?.line == index + 1)
    }

    @Test func csvRefusesCompositesBothWays() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var batch = try #require(RecordLayout(entity: "Trip", in: Self.model)).emptyBatch()
        for record in CompositeFixtures.tripRecords(in: Self.model) { batch.append(record) }
        let written = #expect(throws: DecantError.self) {
            try CSVTestFiles.write([batch], model: Self.model, to: folder.appendingPathComponent("out"))
        }
        #expect(written?.code == .unsupportedFormat)
        #expect(written?.message.contains("Trip.place is a composite attribute, which CSV does not hold") == true
            || written?.message.contains("Trip.mode is a composite attribute, which CSV does not hold") == true)
        let input = try CSVTestFiles.folder(["Trip.csv": "_id,name,id,place\n1,Lisbon,E621E1F8-C36C-495A-93FC-0C247A3E6E5F,Lisboa\n"])
        defer { try? FileManager.default.removeItem(at: input) }
        let read = CSVTestFiles.readError(input, options: Self.options)
        #expect(read?.message.contains("composite attribute") == true, "\(String(describing: read))")
    }
}
