import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Every value the XML store holds reads back as written, through text that needs escaping, line-end
/// normalisation and Apple's base64 layout; names are written as Core Data writes them.
@Suite("XML store values")
struct XMLStoreValueTests {
    static let model: ObjectModel = {
        var item = Entity(name: "Item")
        item.attributes = AttributeType.allCases.compactMap { type -> Attribute? in
            switch type {
            case .undefined, .objectID, .composite: nil
            default: Attribute(name: "a\(type.rawValue)Value", type: type, isOptional: true)
            }
        }
        var link = Relationship(name: "relatedItems", destination: "Item", inverse: "owner", toMany: true)
        link.isOrdered = true
        item.relationships = [link, Relationship(name: "owner", destination: "Item", inverse: "relatedItems")]
        return ObjectModel(versionName: "Values", entities: [item], versionIdentifiers: ["7"])
    }()

    static let strings = [
        "", "  spaced  ", "a\r\nb\rc\nd", "tab\there", "control\u{1}\u{1F}", "<&>\"'", "]]>", "日本語 ✓ 👍🏽",
    ]

    static func value(_ type: AttributeType, _ row: Int) -> Value {
        switch type {
        case .string: .string(strings[row % strings.count])
        case .integer16: .integer(row % 2 == 0 ? Int64(Int16.min) : Int64(Int16.max))
        case .integer32: .integer(Int64(Int32.min) + Int64(row))
        case .integer64: .integer(Int64.max - Int64(row))
        case .decimal: .decimal(Decimal(string: "12345.678\(row)") ?? 0)
        case .double: .double([0.1, -1e-300, 1.7976931348623157e308, 3, .infinity, -0.5, 1e-7, 42][row % 8])
        case .float: .double(Double(Float(row) / 3))
        case .boolean: .bool(row % 2 == 0)
        case .date: .date(Date(timeIntervalSinceReferenceDate: [273_512_152.850_763, -1e9, 0, 1e-9][row % 4]))
        case .binary: .data(Data((0..<(row * 37)).map { UInt8(truncatingIfNeeded: $0 * 7) }))
        case .transformable: .transformable(Data("bplist00\(row)".utf8))
        case .uuid: .uuid(UUID())
        case .uri: .uri("https://example.com/\(row)?q=a&b=<c>")
        default: .null
        }
    }

    static func batch() throws -> RecordBatch {
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        var batch = layout.emptyBatch()
        for row in 0..<8 {
            batch.append(
                Record(
                    entity: "Item", id: .primaryKey(Int64(row + 1)),
                    values: layout.attributes.map { row == 7 ? .null : value($0.type, row) },
                    relationships: [
                        row == 0 ? .toOne(nil) : .toOne(ObjectReference(entity: "Item", id: .primaryKey(1))),
                        row == 0
                            ? .toMany(
                                (2...8).reversed().map { ObjectReference(entity: "Item", id: .primaryKey(Int64($0))) })
                            : .toMany([]),
                    ]))
        }
        return batch
    }

    @Test func everyValueReadsBackAsWritten() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("values.xml")
        let batch = try Self.batch()
        let writer = try XMLStoreWriter(creating: url, model: Self.model)
        try writer.write(batch)
        #expect(!FileManager.default.fileExists(atPath: url.path), "nothing appears before finish")
        try writer.finish()
        let bundle = ModelBundle(
            name: "Values", versions: [Self.model], currentVersionName: nil, sourceKind: .xcdatamodeld)
        let reader = try XMLStoreReader(contentsOf: url, options: FormatOptions(bundle: bundle))
        #expect(reader.metadata.entityVersionHashes == Self.model.entityVersionHashes)
        #expect(reader.metadata.versionIdentifiers == ["7"])
        #expect(reader.metadata.storeType == "XML")
        #expect(reader.nextObjectID == 109)
        var read = try #require(RecordLayout(entity: "Item", in: Self.model)).emptyBatch()
        #expect(try reader.nextBatch(into: &read))
        #expect(read.count == 8)
        for row in 0..<8 {
            let original = batch.record(at: row)
            let back = read.record(at: row)
            #expect(back.id == .external("z\(102 + row)"))
            #expect(back.values == original.values, "row \(row)")
            // References now carry the store's ids: z102 is the object that was primary key 1, and so on.
            let expected = original.relationships.map { value -> RelationshipValue in
                switch value {
                case .toOne(let reference):
                    .toOne(
                        reference.map {
                            ObjectReference(entity: "Item", id: .external("z\(101 + Int("\($0.id)".dropFirst())!)"))
                        })
                case .toMany(let list):
                    .toMany(
                        list.map {
                            ObjectReference(entity: "Item", id: .external("z\(101 + Int("\($0.id)".dropFirst())!)"))
                        })
                case .viaInverse: .viaInverse
                }
            }
            #expect(back.relationships == expected, "row \(row)")
        }
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(text.contains("<object type=\"ITEM\" id=\"z102\">"))
        #expect(text.contains("<attribute name=\"a700value\" type=\"string\"></attribute>"))
        #expect(
            text.contains("<relationship name=\"relateditems\" type=\"0/0\" destination=\"ITEM\" idrefs=\"z109 z108"))
        #expect(text.contains("<relationship name=\"owner\" type=\"1/1\" destination=\"ITEM\"></relationship>"))
        // Binary: 76 base64 characters, a line feed, the rest on one line, a line feed, the end tag at column 0.
        let binary = try #require(text.components(separatedBy: "type=\"binary\">").dropFirst(3).first)
        let lines = binary.components(separatedBy: "\n")
        #expect(lines[0].count == 76)
        #expect(lines[2].hasPrefix("</attribute>"))
        #expect(text.contains("<key>NSStoreModelVersionHashesDigest</key>"))
        #expect(!text.contains("NSStoreType"))
    }

    @Test func namesThatDifferOnlyInCaseCannotBeWritten() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var entity = Entity(name: "Item")
        entity.attributes = [Attribute(name: "name", type: .string), Attribute(name: "Name", type: .string)]
        let error = try #require(throws: DecantError.self) {
            _ = try XMLStoreWriter(
                creating: folder.appendingPathComponent("never.xml"), model: ObjectModel(entities: [entity]))
        }
        #expect(error.code == .unsupportedFormat)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func abandonLeavesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try XMLStoreWriter(creating: folder.appendingPathComponent("x.xml"), model: Self.model)
        try writer.write(try Self.batch())
        writer.abandon()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }
}
