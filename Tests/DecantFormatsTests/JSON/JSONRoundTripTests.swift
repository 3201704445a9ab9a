import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Decant's JSON document and its NDJSON form read back into exactly what was written: every attribute type,
/// every relationship kind, edge values bit for bit, identities.
@Suite("JSON round trips")
struct JSONRoundTripTests {
    static let styles: [JSONRecordWriter.Style] = [.document, .lines]

    @Test("the library model (every type and relationship kind) reads back equal", arguments: styles)
    func library(style: JSONRecordWriter.Style) throws {
        let store = try JSONTesting.store(LibraryFixture.model, LibraryFixture.records)
        let data = try JSONTesting.write(store, style: style)
        let back = try JSONTesting.read(
            data, style: style, options: FormatOptions(bundle: JSONTesting.bundle(LibraryFixture.model)))
        for entity in LibraryFixture.model.entities {
            #expect(back.records(of: entity.name) == store.records(of: entity.name), "\(entity.name)")
        }
        #expect(back.counts == store.counts)
    }

    /// A model with one attribute of every stored type.
    static let edgeModel: ObjectModel = {
        var thing = Entity(name: "Thing")
        thing.attributes = [
            Attribute(name: "i16", type: .integer16, isOptional: true),
            Attribute(name: "i64", type: .integer64, isOptional: true),
            Attribute(name: "real", type: .double, isOptional: true),
            Attribute(name: "single", type: .float, isOptional: true),
            Attribute(name: "amount", type: .decimal, isOptional: true),
            Attribute(name: "text", type: .string, isOptional: true),
            Attribute(name: "flag", type: .boolean, isOptional: true),
            Attribute(name: "when", type: .date, isOptional: true),
            Attribute(name: "bytes", type: .binary, isOptional: true),
            Attribute(name: "uuid", type: .uuid, isOptional: true),
            Attribute(name: "link", type: .uri, isOptional: true),
            Attribute(name: "archive", type: .transformable, isOptional: true),
        ]
        thing.relationships = [
            Relationship(name: "next", destination: "Thing"),
            Relationship(name: "parts", destination: "Thing", toMany: true),
        ]
        return ObjectModel(versionName: "Edges", entities: [thing], versionIdentifiers: [])
    }()

    /// Cells whose storage class and bits must survive: extremes, NaN, infinities, -0.0, subnormals, dates that
    /// ISO 8601 can and cannot hold, exact decimals, control characters and Unicode, empty values.
    static func edgeStore() throws -> InMemoryStore {
        var batch = try #require(RecordLayout(entity: "Thing", in: edgeModel)).emptyBatch()
        let reals: [Double] = [
            0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1.0 / 3.0,
            -123.456e-200,
        ]
        let dates: [Double] = [
            737_057_646.84, -0.0, 0, -0.5, -978_307_200.000_001, 1e-300, 1e15, -1e15, .nan, .infinity,
            -63_113_904_000,  // 0001-01-01
            252_423_993_599.999_99,  // 9999-12-31T23:59:59.99999
            0.1 + 0.2, 737_057_646.840_000_1,
        ]
        let texts = [
            "", "milk", "ünïcødé ✓ 🎉", "\u{0}\u{1}\u{1F}\n\t\r\"\\/", "line\u{2028}sep",
            String(repeating: "x", count: 5000),
        ]
        let decimals: [RecordBatch.Cell] = [
            RecordBatch.Cell(kind: .integer, integer: 42), RecordBatch.Cell(kind: .integer, integer: Int64.min),
            RecordBatch.Cell(kind: .real, integer: Int64(bitPattern: (10.5).bitPattern)),
            RecordBatch.Cell(kind: .real, integer: Int64(bitPattern: (1e20).bitPattern)),
        ]
        let decimalTexts = ["3.14159265358979323846264338327950288", "10.50", "-0", "1E+3"]
        let count = max(reals.count, dates.count, texts.count, decimals.count + decimalTexts.count)
        let layout = batch.layout
        for index in 0..<count {
            // Each attribute's cell, appended below in the layout's (alphabetical) order.
            var cells: [String: (inout RecordBatch) -> Void] = [:]
            cells["i16"] = { index % 4 == 3 ? $0.appendNull() : $0.appendInteger(Int64(index * 1000 - 32768)) }
            cells["i64"] = { $0.appendInteger([Int64.min, Int64.max, 0, -1][index % 4]) }
            cells["real"] = { $0.appendReal(reals[index % reals.count]) }
            cells["single"] = { $0.appendReal(Double(Float(reals[(index + 3) % reals.count]))) }
            cells["amount"] = {
                if index < decimals.count {
                    $0.append(decimals[index])
                } else {
                    $0.appendText(decimalTexts[(index - decimals.count) % decimalTexts.count])
                }
            }
            cells["text"] = { $0.appendText(texts[index % texts.count]) }
            cells["flag"] = { index % 3 == 2 ? $0.appendNull() : $0.appendInteger(Int64(index % 2)) }
            cells["when"] = { $0.appendReal(dates[index % dates.count]) }
            cells["bytes"] = {
                if index == 4 {
                    $0.appendExternalDataReference("5B3D0F2E-1111-4A4A-9C9C-000000000001")
                } else {
                    $0.appendBlob((0..<(index * 7)).map { UInt8(truncatingIfNeeded: $0 * 37) })
                }
            }
            cells["uuid"] = { $0.appendBlob(withUnsafeBytes(of: UUID().uuid) { Array($0) }) }
            cells["link"] = { $0.appendText("https://example.com/\(index)?q=a%20b") }
            cells["archive"] = {
                index == 5 ? $0.appendExternalDataReference("missing") : $0.appendBlob([0x62, 0x70, UInt8(index)])
            }
            batch.beginRecord(id: index % 3 == 0 ? .external("ext-\(index)/x") : .primaryKey(Int64(index) - 2))
            for attribute in layout.attributes { cells[attribute.name]?(&batch) }
            if index == 0 {
                batch.appendReference(nil)
            } else {
                batch.appendReference(ObjectReference(entity: "Thing", id: .external("ext-0/x")))
            }
            batch.appendReferenceList(
                (0..<index % 4).map { ObjectReference(entity: "Thing", id: .primaryKey(Int64($0) - 2)) }.reversed())
            batch.endRecord()
        }
        var store = InMemoryStore(model: edgeModel)
        try store.insert(batch)
        return store
    }

    @Test("edge values come back bit for bit, in their storage class", arguments: styles)
    func edgeValues(style: JSONRecordWriter.Style) throws {
        let store = try Self.edgeStore()
        let data = try JSONTesting.write(store, style: style)
        let back = try JSONTesting.read(
            data, style: style, options: FormatOptions(bundle: JSONTesting.bundle(Self.edgeModel)))
        let expected = try JSONTesting.cells(store)
        let actual = try JSONTesting.cells(back)
        #expect(actual.keys.sorted() == expected.keys.sorted())
        for entity in expected.keys {
            let pairs = zip(actual[entity] ?? [], expected[entity] ?? [])
            for (got, want) in pairs where got != want { Issue.record("\(got)\n!=\n\(want)") }
            #expect(actual[entity]?.count == expected[entity]?.count)
        }
    }

    @Test func writtenValuesLookAsDocumented() throws {
        let store = try Self.edgeStore()
        let text = String(decoding: try JSONTesting.write(store, style: .lines), as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 15)
        #expect(lines[0].hasPrefix("{\"decant\":{\"formatVersion\":1,\"model\":{\"name\":\"Edges\""))
        // Exact dates as ISO 8601 in UTC; a date ISO cannot hold exactly as seconds since 2001.
        #expect(lines[1].contains("\"when\":\"2024-05-10T18:14:06.84Z\""))
        #expect(lines[2].contains("\"when\":-0.0"))
        #expect(lines[4].contains("\"when\":\"2000-12-31T23:59:59.5Z\""))
        #expect(lines[7].contains("\"when\":1000000000000000.0"))
        #expect(lines[9].contains("\"when\":\"NaN\""))
        #expect(lines[11].contains("\"when\":\"0001-01-01T00:00:00Z\""))
        // Doubles as their shortest exact text; decimals as strings; integers as numbers.
        #expect(lines[1].contains("\"real\":0.0"))
        #expect(lines[3].contains("\"real\":\"NaN\""))
        #expect(lines[6].contains("\"real\":5e-324"))
        #expect(lines[1].contains("\"amount\":\"42\""))
        #expect(lines[3].contains("\"amount\":\"10.5\""))
        #expect(lines[5].contains("\"amount\":\"3.14159265358979323846264338327950288\""))
        #expect(lines[2].contains("\"i64\":9223372036854775807"))
        // Escapes, external references, ids.
        #expect(lines[4].contains(#""text":"\u0000\u0001\u001F\n\t\r\"\\/""#))
        #expect(lines[5].contains(#""bytes":{"externalDataReference":"5B3D0F2E-1111-4A4A-9C9C-000000000001"}"#))
        #expect(lines[1].hasPrefix(#"{"@id":"Thing/ext-0/x","#))
        #expect(lines[2].hasPrefix(#"{"@id":"Thing/p-1","#))
        #expect(lines[4].contains(#""next":"Thing/ext-0/x","parts":["Thing/p0","Thing/p-1","Thing/p-2"]}"#))
    }

    @Test func toManyCarriedByTheInverseIsLeftOutAndComesBackSo() throws {
        var folder = Entity(name: "Folder")
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        let model = ObjectModel(versionName: "Notes", entities: [folder, note])
        let folderRef = ObjectReference(entity: "Folder", id: .primaryKey(1))
        let store = try JSONTesting.store(
            model,
            [
                "Folder": [Record(entity: "Folder", id: .primaryKey(1), values: [], relationships: [.viaInverse])],
                "Note": [
                    Record(entity: "Note", id: .primaryKey(1), values: ["milk"], relationships: [.toOne(folderRef)])
                ],
            ])
        let data = try JSONTesting.write(store, style: .document)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#"{"@id":"Folder/p1"}"#))
        #expect(text.contains(#"{"@id":"Note/p1","text":"milk","folder":"Folder/p1"}"#))
        let back = try JSONTesting.read(
            data, style: .document, options: FormatOptions(bundle: JSONTesting.bundle(model)))
        #expect(back.records(of: "Folder") == store.records(of: "Folder"))
        #expect(back.records(of: "Note") == store.records(of: "Note"))
    }

    @Test func anEmptyStoreIsAnEmptyDocument() throws {
        let store = InMemoryStore(model: LibraryFixture.model)
        for style in Self.styles {
            let data = try JSONTesting.write(store, style: style)
            let back = try JSONTesting.read(
                data, style: style, options: FormatOptions(bundle: JSONTesting.bundle(LibraryFixture.model)))
            #expect(back.counts.isEmpty)
        }
        let text = String(decoding: try JSONTesting.write(store, style: .document), as: UTF8.self)
        #expect(text.hasSuffix("\"objects\": []\n}\n"))
    }

    @Test func theHeaderResolvesTheVersionByHash() throws {
        let store = try JSONTesting.store(LibraryFixture.model, LibraryFixture.records)
        let data = try JSONTesting.write(store, style: .document)
        var renamed = LibraryFixture.model
        renamed.versionName = "Library 2"
        var other = LibraryFixture.model
        other.entities[0].attributes.append(Attribute(name: "extra", type: .string, isOptional: true))
        other.versionName = "Library 3"
        let bundle = ModelBundle(
            name: "Library", versions: [other, renamed], currentVersionName: "Library 3",
            sourceKind: .xcdatamodeld)
        let reader = try JSONRecordReader(data: data, style: .document, options: FormatOptions(bundle: bundle))
        #expect(reader.model.versionName == "Library 2")
        #expect(reader.header?.modelName == "Library")
        #expect(reader.header?.entityVersionHashes == LibraryFixture.model.entityVersionHashes)
        #expect(reader.header?.metadata["NSStoreUUID"]?.count == 36)

        let mismatch = #expect(throws: DecantError.self) {
            _ = try JSONRecordReader(
                data: data, style: .document,
                options: FormatOptions(
                    bundle: ModelBundle(
                        name: "L", versions: [other], currentVersionName: nil,
                        sourceKind: .xcdatamodeld)))
        }
        #expect(mismatch?.code == .modelMismatch)
        let missing = #expect(throws: DecantError.self) {
            _ = try JSONRecordReader(data: data, style: .document, options: FormatOptions())
        }
        #expect(missing?.code == .unsupportedFormat)
        #expect(missing?.message.contains("--model") == true)
    }

    @Test func objectsMayReferToObjectsThatComeLater() throws {
        let model = Self.edgeModel
        let header = String(decoding: JSONDocumentHeader(model: model).encoded(), as: UTF8.self)
        let text = """
            {"decant": \(header), "objects": [
              {"@id": "Thing/a", "next": "Thing/b", "parts": ["Thing/b", "Thing/a"]},
              {"@id": "Thing/b", "text": "later"}
            ]}
            """
        let store = try JSONTesting.read(
            Data(text.utf8), style: .document, options: FormatOptions(bundle: JSONTesting.bundle(model)))
        let records = store.records(of: "Thing")
        #expect(records.map(\.id) == [.external("a"), .external("b")])
        #expect(
            records[0].relationships == [
                .toOne(ObjectReference(entity: "Thing", id: .external("b"))),
                .toMany([
                    ObjectReference(entity: "Thing", id: .external("b")),
                    ObjectReference(entity: "Thing", id: .external("a")),
                ]),
            ])
        #expect(records[1].values[9] == .string("later"))
    }
}
