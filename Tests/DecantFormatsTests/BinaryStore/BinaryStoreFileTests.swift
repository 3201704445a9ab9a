import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// The binary store's slot order (section 6.3, decided in `BinaryStoreSlots` alone) and its reader on hostile input:
/// Apple's file flipped and truncated, header lengths pointing outside the file, archives holding the wrong types.
@Suite("Binary store file")
struct BinaryStoreFileTests {
    static let screenFlow = Fixtures.legacyCorpusRoot.appendingPathComponent(
        "zolotyh__holyjs2025/video/Untitled.screenflow/ScreenFlowDocument.dat")

    /// Parent: attributes `zeta`, `Alpha`, transient `temp`; to-one `owner`, to-many `items`, ordered `list`;
    /// fetched `recent`. Child (of Parent): `beta`, to-one `back`, transient to-many `cache`.
    static let model: ObjectModel = {
        var parent = Entity(name: "Parent")
        parent.attributes = [
            Attribute(name: "zeta", type: .string, isOptional: true),
            Attribute(name: "Alpha", type: .integer32, isOptional: true),
            Attribute(name: "temp", type: .string, isOptional: true, isTransient: true),
        ]
        var list = Relationship(name: "list", destination: "Child", toMany: true)
        list.isOrdered = true
        parent.relationships = [
            Relationship(name: "owner", destination: "Child"),
            Relationship(name: "items", destination: "Child", inverse: "back", toMany: true), list,
        ]
        parent.fetchedProperties = [FetchedProperty(name: "recent", entity: "Child", predicate: nil)]
        var child = Entity(name: "Child", parentName: "Parent")
        child.attributes = [Attribute(name: "beta", type: .string, isOptional: true)]
        var cache = Relationship(name: "cache", destination: "Parent", toMany: true)
        cache.isTransient = true
        child.relationships = [Relationship(name: "back", destination: "Parent", inverse: "items"), cache]
        return ObjectModel(versionName: "Slots", entities: [parent, child], versionIdentifiers: [])
    }()

    static func names(_ entity: String) throws -> [String] {
        let found = try #require(model.entity(named: entity))
        return BinaryStoreSlots.slots(of: found, in: model).map { slot in
            switch slot {
            case .attribute(let attribute): attribute.name
            case .relationship(let relationship): relationship.name
            case .unfilled(let name): "(\(name))"
            }
        }
    }

    @Test func slotsFollowCoreDatasPropertyOrder() throws {
        #expect(try Self.names("Parent") == ["Alpha", "zeta", "(temp)", "owner", "items", "list", "(recent)"])
        #expect(
            try Self.names("Child") == [
                "Alpha", "zeta", "beta", "(temp)", "owner", "back", "items", "list", "(cache)", "(recent)",
            ])
    }

    @Test func theWriterFillsAttributeSlotsInThatOrderAndTheReaderNamesThem() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Slots.binarystore")
        let writer = try BinaryStoreWriter(creating: url, model: Self.model)
        var parents = try #require(RecordLayout(entity: "Parent", in: Self.model)).emptyBatch()
        // Layout order: Alpha, zeta; relationships items, list, owner. A sub-entity shares its root's keys.
        parents.append(
            Record(
                entity: "Parent", id: .primaryKey(1), values: [.integer(7), .string("z")],
                relationships: [
                    .toMany([ObjectReference(entity: "Child", id: .primaryKey(2))]),
                    .toMany([ObjectReference(entity: "Child", id: .primaryKey(2))]),
                    .toOne(ObjectReference(entity: "Child", id: .primaryKey(2))),
                ]))
        try writer.write(parents)
        var children = try #require(RecordLayout(entity: "Child", in: Self.model)).emptyBatch()
        children.append(
            Record(
                entity: "Child", id: .primaryKey(2), values: [nil, "b", nil],
                relationships: [
                    .toOne(ObjectReference(entity: "Parent", id: .primaryKey(1))), .toMany([]), .toMany([]),
                    .toOne(nil),
                ]))
        try writer.write(children)
        try writer.finish()

        let file = try BinaryStoreFile(contentsOf: url)
        let parent = try #require(file.nodes.first { $0.entity == "Parent" })
        #expect(parent.slots == [.plist(.integer(7)), .plist(.string("z")), .null, .null, .null, .null, .null])
        #expect(
            parent.related == [
                .init(name: "items", keys: [2], isToMany: true), .init(name: "list", keys: [2], isToMany: true),
                .init(name: "owner", keys: [2], isToMany: false),
            ])
        let child = try #require(file.nodes.first { $0.entity == "Child" })
        #expect(child.slots == [.null, .null, .plist(.string("b")), .null, .null, .null, .null, .null, .null, .null])
        #expect(child.related == [.init(name: "back", keys: [1], isToMany: false)])
        #expect(file.primaryKeyCounter == 2)

        let reader = try BinaryStoreReader(
            contentsOf: url,
            options: FormatOptions(
                bundle: ModelBundle(
                    name: "Slots", versions: [Self.model], currentVersionName: "Slots", sourceKind: .xcdatamodeld)))
        var batch = try #require(RecordLayout(entity: "Parent", in: Self.model)).emptyBatch()
        var read: [Record] = []
        while try reader.nextBatch(into: &batch) { read += (0..<batch.count).map { batch.record(at: $0) } }
        #expect(read.first { $0.entity == "Parent" }?.values == [.integer(7), .string("z")])
        #expect(read.first { $0.entity == "Child" }?.values == [.null, .string("b"), .null])
        #expect(
            read.first { $0.entity == "Child" }?.relationships.first
                == .toOne(ObjectReference(entity: "Parent", id: .primaryKey(1))))
    }

    @Test func decimalsArchiveAsNSDecimalNumberAndBack() throws {
        let texts = [
            "0", "12.345", "-0.001", "1200", "-3.4", "79228162514264337593543950335", "0.000000000000000000001",
        ]
        for text in texts {
            let decimal = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            let fields = try ArchivedDecimal.fields(of: decimal)
            let object = ArchivedObject(
                index: 1, className: ArchivedDecimal.className, classes: ArchivedDecimal.classes, fields: fields,
                value: .dictionary(fields))
            #expect(try ArchivedDecimal.decimal(from: object) == decimal, "\(text)")
        }
        // 12.345 = 12345 × 10^-3: one 16-bit word, little-endian (0x3039), compact.
        let fields = try ArchivedDecimal.fields(of: Decimal(string: "12.345") ?? 0)
        #expect(fields["NS.exponent"] == .integer(-3))
        #expect(fields["NS.length"] == .integer(1))
        #expect(fields["NS.negative"] == .bool(false))
        #expect(fields["NS.compact"] == .bool(true))
        #expect(fields["NS.mantissa.bo"] == .integer(1))
        #expect(fields["NS.mantissa"] == .data(Data([0x39, 0x30] + Array(repeating: 0, count: 14))))
        let broken = ArchivedObject(
            index: 4, className: ArchivedDecimal.className, classes: [], fields: ["NS.length": .integer(9)],
            value: .null)
        #expect(throws: DecantError.self) { try ArchivedDecimal.decimal(from: broken) }
    }

    // MARK: Hostile input

    /// Reads `data` without a model; a failure must be a `DecantError` exiting 65 that names the file.
    static func expectReadOrRefused(_ data: Data, _ note: String) {
        do {
            let file = try BinaryStoreFile(data: data, path: "hostile.dat")
            _ = try file.storeMetadata()
        } catch let error as DecantError {
            #expect(error.code.exitCode == 65, "\(note): \(error)")
            #expect(error.location?.path == "hostile.dat", "\(note): \(error)")
        } catch {
            Issue.record("\(note): \(error) is not a DecantError")
        }
    }

    @Test func flippedBytesAreReadOrRefusedWithTheirPlace() throws {
        let data = try Data(contentsOf: Self.screenFlow)
        // Every header byte, then every 17th byte of both archives (a full sweep takes minutes).
        for offset in Array(0..<64) + Array(stride(from: 64, to: data.count, by: 17)) {
            var flipped = data
            flipped[offset] ^= 0xFF
            Self.expectReadOrRefused(flipped, "byte \(offset) flipped")
        }
    }

    @Test func truncationsAreRefusedWithTheirPlace() throws {
        let data = try Data(contentsOf: Self.screenFlow)
        #expect(try BinaryStoreFile(data: Data(), path: "empty.dat").nodes.isEmpty)
        for length in Array(1..<64) + Array(stride(from: 64, to: data.count, by: 41)) {
            let error = try #require(throws: DecantError.self, "\(length) bytes") {
                _ = try BinaryStoreFile(data: data.prefix(length), path: "short.dat")
            }
            #expect(error.code.exitCode == 65)
            #expect(error.location?.path == "short.dat")
            if length < 64 {
                #expect(error.location?.offset == 0)
                #expect(error.message.contains("at least 64 bytes"))
            } else {
                #expect(error.message.contains("outside the file"), "\(length): \(error)")
            }
        }
        var magic = data
        magic[3] = UInt8(ascii: "x")
        let wrongMagic = try #require(throws: DecantError.self) { _ = try BinaryStoreFile(data: magic, path: "m.dat") }
        #expect(wrongMagic.code.exitCode == 65)
        #expect(wrongMagic.message.contains("magic"))
    }

    @Test func lengthsPointingOutsideTheFileAreRefused() throws {
        let data = try Data(contentsOf: Self.screenFlow)
        let fields: [(Int, UInt64)] = [
            (16, UInt64.max), (24, UInt64.max - 8), (32, 1 << 40), (40, UInt64(data.count)), (16, 10),
        ]
        for (field, value) in fields {
            var bad = data
            for index in 0..<8 { bad[field + index] = UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * index)) }
            let error = try #require(throws: DecantError.self, "field \(field) = \(value)") {
                _ = try BinaryStoreFile(data: bad, path: "bad.dat")
            }
            #expect(error.code.exitCode == 65)
            #expect(error.location?.offset == (field < 32 ? 16 : 32), "field \(field): \(error)")
        }
    }

    /// A store whose map holds one node with `fields` (and its key `key` in the map), and a minimal metadata.
    static func store(key: Int64 = 1, _ fields: (inout KeyedArchiveWriter) -> PropertyListDictionary) throws -> Data {
        var map = BinaryStoreEncoder()
        let chain = ["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"]
        let nodeFields = fields(&map.writer)
        let node = map.writer.addObject(className: chain[0], classes: chain, fields: nodeFields)
        let root = map.writer.addDictionary(
            keys: [map.writer.addValue(.integer(key)).uid], values: [node.uid], className: "NSMutableDictionary")
        let mapData = try map.encodedData(root: root, topKey: "mapData")
        var meta = BinaryStoreEncoder()
        let metaRoot = meta.writer.addDictionary(
            keys: [meta.writer.addString("NSStoreType").uid], values: [meta.writer.addString("Binary").uid])
        let metadata = try meta.encodedData(root: metaRoot, topKey: "metadata")
        var file = Data(
            BinaryStoreHeader(metadataLength: metadata.count, mapDataLength: mapData.count, nextPrimaryKey: 1).bytes)
        file.append(mapData)
        file.append(metadata)
        return file
    }

    static func refusal(_ data: Data) throws -> DecantError {
        let error = try #require(throws: DecantError.self) { _ = try BinaryStoreFile(data: data, path: "typed.dat") }
        #expect(error.code.exitCode == 65, "\(error)")
        #expect(error.location?.path == "typed.dat")
        #expect(error.location?.offset == 64, "\(error)")  // the mapData archive
        return error
    }

    @Test func wrongTypesInTheArchiveAreRefusedWithTheNode() throws {
        // A well-formed node reads.
        let good = try Self.store { writer in
            ["NSPrimaryKey64": .integer(1), "NSEntityName": writer.addString("Note").uid,
             "NSAttributeValues": writer.addArray([writer.addString("hi").uid]).uid]
        }
        #expect(try BinaryStoreFile(data: good, path: "good.dat").nodes.map(\.slots) == [[.plist(.string("hi"))]])

        let entity = try Self.refusal(
            Self.store { writer in
                ["NSPrimaryKey64": .integer(1), "NSEntityName": .integer(7),
                 "NSAttributeValues": writer.addArray([]).uid]
            })
        #expect(entity.location?.keyPath == "NSEntityName", "\(entity)")
        let slots = try Self.refusal(
            Self.store { writer in
                ["NSPrimaryKey64": .integer(1), "NSEntityName": writer.addString("Note").uid,
                 "NSAttributeValues": writer.addString("not an array").uid]
            })
        #expect(slots.location?.keyPath == "NSAttributeValues", "\(slots)")
        let key = try Self.refusal(
            Self.store(key: 2) { writer in
                ["NSPrimaryKey64": .integer(1), "NSEntityName": writer.addString("Note").uid,
                 "NSAttributeValues": writer.addArray([]).uid]
            })
        #expect(key.message.contains("differs from its map key 2"))
        let missing = try Self.refusal(
            Self.store { writer in
                let members = writer.addArray([writer.addValue(.integer(9)).uid], className: "NSMutableArray").uid
                return [
                    "NSPrimaryKey64": .integer(1), "NSEntityName": writer.addString("Note").uid,
                    "NSAttributeValues": writer.addArray([]).uid,
                    "NSRelatedNodes": writer.addDictionary(
                        keys: [writer.addString("tags").uid], values: [members], className: "NSMutableDictionary"
                    ).uid,
                ]
            })
        #expect(missing.location?.entity == "Note")
        #expect(missing.location?.keyPath == "tags")
        #expect(missing.message.contains("refers to 9, which is not an object of this store"))
        let related = try Self.refusal(
            Self.store { writer in
                [
                    "NSPrimaryKey64": .integer(1), "NSEntityName": writer.addString("Note").uid,
                    "NSAttributeValues": writer.addArray([]).uid,
                    "NSRelatedNodes": writer.addDictionary(
                        keys: [writer.addString("tags").uid], values: [writer.addString("x").uid]).uid,
                ]
            })
        #expect(related.location?.keyPath == "NSRelatedNodes", "\(related)")
        let noNode = try Self.refusal(Self.store { _ in [:] })
        #expect(noNode.message.contains("NSEntityName"), "\(noNode)")
    }
}
