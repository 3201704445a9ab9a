import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Every `xcmapping.xml` in the corpus is an Apple-written XML store: each reads completely without a model, with
/// every object, attribute and relationship that Python's `xml.etree` (an independent oracle) finds in the file.
@Suite("Corpus XML stores")
struct XMLStoreCorpusTests {
    static let stores: [String] = Fixtures.corpusItems { $0.lastPathComponent == "xcmapping.xml" }
        .map(Fixtures.corpusRelativePath)

    /// Eleven in the corpus, six in the apps corpus.
    @Test func theCorpusHasItsSeventeenXMLStores() {
        #expect(Self.stores.count == 17)
    }

    /// Per object id: its type, attribute texts and relationship idrefs, as `xml.etree` reads them.
    static let oracle = """
        import json, sys
        import xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        out = {}
        for o in root.iter('object'):
            out[o.get('id')] = {
                'type': o.get('type'),
                'attributes': {a.get('name'): [a.get('type'), a.text or ''] for a in o.findall('attribute')},
                'relationships': {r.get('name'): (r.get('idrefs') or '').split() for r in o.findall('relationship')},
            }
        print(json.dumps(out))
        """

    struct OracleObject: Decodable {
        var type: String
        var attributes: [String: [String]]
        var relationships: [String: [String]]
    }

    /// Every record of a reader, by id.
    static func records(of reader: inout some RecordReader) throws -> [String: Record] {
        var result: [String: Record] = [:]
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return [:] }
        var batch = layout.emptyBatch()
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count { result[batch.id(at: row).description] = batch.record(at: row) }
        }
        return result
    }

    @Test("reads completely without a model: every object, attribute and relationship", arguments: stores)
    func readsCompletely(_ store: String) throws {
        let url = Fixtures.corpus(store)
        var reader = try XMLStoreReader(contentsOf: url, options: FormatOptions())
        #expect(reader.isSchemaLess)
        #expect(reader.metadata.storeType == "XML")
        #expect(!reader.metadata.entityVersionHashes.isEmpty)
        let expected = try JSONDecoder().decode(
            [String: OracleObject].self, from: PythonOracle.run(Self.oracle, input: try Data(contentsOf: url)))
        let records = try Self.records(of: &reader)
        #expect(records.count == expected.count)
        #expect(!expected.isEmpty)
        // Apple's nextObjectID is the highest id assigned.
        let highest = expected.keys.compactMap { Int64($0.dropFirst()) }.max()
        #expect(reader.nextObjectID == highest)
        for (id, object) in expected {
            let record = try #require(records[id], "\(id) was not read")
            #expect(record.entity.uppercased() == object.type)
            let layout = try #require(RecordLayout(entity: record.entity, in: reader.model))
            for (name, typeAndText) in object.attributes {
                let index = try #require(layout.attributeIndex(name))
                let value = record.values[index]
                #expect(!value.isNull, "\(id).\(name)")
                if typeAndText[0] == "string" { #expect(value == .string(typeAndText[1]), "\(id).\(name)") }
                if typeAndText[0] == "binary" {
                    let base64 = typeAndText[1].filter { !$0.isWhitespace }
                    #expect(value == .data(try #require(Data(base64Encoded: base64))), "\(id).\(name)")
                }
            }
            let attributesSet = record.values.filter { !$0.isNull }.count
            #expect(attributesSet == object.attributes.count, "\(id): attributes not in the file")
            for (name, idrefs) in object.relationships {
                let index = try #require(layout.relationshipIndex(name))
                switch record.relationships[index] {
                case .toOne(let reference): #expect((reference.map { [$0.id.description] } ?? []) == idrefs)
                case .toMany(let references): #expect(references.map(\.id.description) == idrefs, "\(id).\(name)")
                case .viaInverse: Issue.record("\(id).\(name) is not listed")
                }
            }
        }
    }

    @Test("names entities as the metadata hashes spell them and pairs inverses", arguments: stores.prefix(1))
    func declaredModel(_ store: String) throws {
        let reader = try XMLStoreReader(contentsOf: Fixtures.corpus(store), options: FormatOptions())
        let names = Set(reader.model.entities.map(\.name))
        #expect(names.isSuperset(of: ["XDDevMappingModel", "XDDevEntityMapping", "XDDevAttributeMapping"]))
        let entityMapping = try #require(reader.model.entity(named: "XDDevEntityMapping"))
        let toModel = try #require(entityMapping.relationships.first { $0.name == "mappingmodel" })
        #expect(!toModel.isToMany)
        #expect(toModel.inverseName == "entitymappings")
        let mappingNumber = try #require(entityMapping.attributes.first { $0.name == "mappingnumber" })
        #expect(mappingNumber.type == .integer16)
    }

    /// XML stores in which Apple wrote objects of one entity with their attributes in different orders, which no
    /// one order per entity gives back: Decant writes each entity's attributes in one order, so these come back
    /// with the same lines, in another order within some objects.
    static let objectsInSeveralOrders: [String: String] = [
        "\(Fixtures.appsPrefix)LoopKit__LoopKit/LoopKit/Persistence/Modelv1v4.xcmappingmodel/xcmapping.xml":
            "XDDEVENTITYMAPPING z108 has destinationname after mappingnumber, z186 before name",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel v4 to v5.xcmappingmodel/xcmapping.xml":
            "XDDEVENTITYMAPPING z106 has destinationname after mappingnumber, other entity mappings before name",
    ]

    @Test("written back by Decant: the same objects, byte for byte", arguments: stores)
    func writesBackEqual(_ store: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var reader = try XMLStoreReader(contentsOf: Fixtures.corpus(store), options: FormatOptions())
        let output = folder.appendingPathComponent("copy.xml")
        var writer = try XMLStoreWriter(creating: output, model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        var original = try XMLStoreReader(contentsOf: Fixtures.corpus(store), options: FormatOptions())
        var copy = try XMLStoreReader(contentsOf: output, options: FormatOptions())
        #expect(copy.metadata.entityVersionHashes == reader.model.entityVersionHashes)
        #expect(try Self.records(of: &copy) == Self.records(of: &original))
        #expect(copy.nextObjectID == original.nextObjectID)
        // Byte for byte as Apple wrote it after databaseInfo (whose UUID, framework version and hashes differ: the
        // model declared by the file is not Xcode's private one): layout, order, escaping, base64 lines.
        func objects(_ url: URL) throws -> String {
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            return String(text[try #require(text.range(of: "</databaseInfo>")).lowerBound...])
        }
        if let reason = Self.objectsInSeveralOrders[store] {
            // The same lines, each object's attributes in the one order its entity has (the objects are equal above).
            let lines = { (url: URL) in try objects(url).split(separator: "\n").sorted() }
            #expect(try lines(output) == lines(Fixtures.corpus(store)), "\(reason)")
            #expect(try objects(output) != objects(Fixtures.corpus(store)), "\(store) is listed (\(reason)) but writes back byte for byte")
        } else {
            #expect(try objects(output) == objects(Fixtures.corpus(store)))
        }
        #expect(copy.metadata.versionIdentifiers == original.metadata.versionIdentifiers)
    }
}
