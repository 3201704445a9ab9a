import Decant
import DecantTestSupport
import Foundation
import Testing

/// The binary store against the one Apple wrote (ScreenFlow 10.0.9, Core Data 1414, `corpus-legacy`): read without
/// its model (not public), written back node for node, compared with Python's `plistlib` decoding both files; and
/// Decant's own stores compared with its classes, keys and encodings.
@Suite("Binary store: Apple's file")
struct AppleBinaryStoreTests {
    static let screenFlow = Fixtures.legacyCorpusRoot.appendingPathComponent(
        "zolotyh__holyjs2025/video/Untitled.screenflow/ScreenFlowDocument.dat")

    /// Decodes a binary store into canonical JSON: header fields, and both archives with every reference followed,
    /// objects as their class and fields, dictionaries as entries sorted by key, scalars tagged with their plist type.
    static let decoder = """
        import base64, json, plistlib, struct, sys
        d = open(sys.argv[2], 'rb').read()
        magic, fmt, dbv, mo, ml, do, dl, pk, zero = struct.unpack('>8sIIQQQQQQ', d[:64])
        def archive(blob, key):
            p = plistlib.loads(blob)
            objs = p['$objects']
            def dec(v):
                if isinstance(v, plistlib.UID):
                    if v.data == 0: return '$null'
                    o = objs[v.data]
                    if isinstance(o, dict) and '$class' in o:
                        cls = objs[o['$class'].data]
                        name = [cls['$classname']] + cls['$classes']
                        if 'NS.keys' in o:
                            entries = [[json.dumps(dec(k), sort_keys=True), dec(x)]
                                       for k, x in zip(o['NS.keys'], o['NS.objects'])]
                            return {'class': name, 'entries': sorted(entries, key=lambda e: e[0])}
                        return {'class': name, 'fields': {k: dec(x) for k, x in o.items() if k != '$class'}}
                    return dec(o)
                if isinstance(v, bool): return {'bool': v}
                if isinstance(v, int): return {'int': v}
                if isinstance(v, float): return {'real': v}
                if isinstance(v, bytes): return {'data': base64.b64encode(v).decode()}
                if isinstance(v, list): return [dec(x) for x in v]
                if isinstance(v, dict): return {k: dec(x) for k, x in v.items()}
                return v
            return {'archiver': p['$archiver'], 'top': list(p['$top'].keys()), 'root': dec(p['$top'][key])}
        out = {'magic': magic.decode(), 'format': fmt, 'database': dbv, 'counter': pk, 'zero': zero,
               'layout': [do, mo == 64 + dl, mo + ml == len(d)],
               'map': archive(d[do:do + dl], 'mapData'), 'metadata': archive(d[mo:mo + ml], 'metadata')}
        print(json.dumps(out, sort_keys=True))
        """

    static func decoded(_ url: URL) throws -> String {
        try PythonOracle.text(Self.decoder, arguments: [url.path])
    }

    @Test func readsApplesFileWithoutItsModel() throws {
        let file = try BinaryStoreFile(contentsOf: Self.screenFlow)
        #expect(file.primaryKeyCounter == 5)
        let nodes = Dictionary(uniqueKeysWithValues: file.nodes.map { ($0.key, $0) })
        #expect(nodes.keys.sorted() == [1, 2, 3, 4, 5])
        #expect(nodes[2]?.entity == "DocumentProperties")
        #expect(nodes[2]?.slots.count == 10)
        #expect(nodes[2]?.slots.first == .plist(.string("{{0, 0}, {2560, 1440}}")))
        #expect(nodes[2]?.slots[2] == .null)
        #expect(nodes[2]?.related == [])
        #expect(nodes[3]?.slots == [.plist(.integer(1)), .plist(.integer(1)), .plist(.integer(-1)), .null])
        #expect(nodes[1]?.entity == "MediaSource")
        #expect(nodes[1]?.slots.count == 33)
        #expect(nodes[1]?.related == [BinaryStoreFile.Related(name: "clips", keys: [5], isToMany: true)])
        #expect(nodes[5]?.entity == "ScreenMediaClip")
        #expect(nodes[5]?.slots.count == 97)
        #expect(nodes[5]?.related == [BinaryStoreFile.Related(name: "source", keys: [1], isToMany: false)])
        // A date is an archived NSDate; a float32-rounded real keeps its plist type.
        guard case .archived(let date)? = nodes[1]?.slots.first else {
            Issue.record(
                "MediaSource's first slot is not an archived object: \(String(describing: nodes[1]?.slots.first))")
            return
        }
        #expect(try KeyedArchive(data: date).decodeRootTree() == .date(765_406_831.99423))
        #expect(nodes[5]?.slots[10] == .plist(.real(0.800000011920929)))

        let metadata = try file.storeMetadata()
        #expect(metadata.storeType == "Binary")
        #expect(metadata.storeUUID == "8D608CF4-272F-4771-98DF-8C7086ABC00E")
        #expect(metadata.frameworkVersion == 1414)
        #expect(metadata.versionIdentifiers == ["9.0"])
        #expect(metadata.entityVersionHashes.count == 33)
        #expect(metadata.entityVersionHashes.values.allSatisfy { $0.count == 32 })
        // The hash encoding is Apple's: digest and checksum recompute from the stored hashes.
        #expect(ObjectModel.versionHashesDigest(of: metadata.entityVersionHashes) == metadata.versionHashesDigest)
        #expect(ObjectModel.versionChecksum(of: metadata.entityVersionHashes) == metadata.versionChecksum)
        #expect(metadata.plist["CFBundleShortVersionString"] == .string("10.0.9"))
    }

    /// The binary stores of both corpora (the sweep below reads each); one today, ScreenFlow's.
    @Test func theCorporaHoldTheirBinaryStore() {
        #expect(Fixtures.binaryStores.map(\.lastPathComponent) == ["ScreenFlowDocument.dat"])
    }

    @Test("every corpus binary store is written back decoding the same", arguments: Fixtures.binaryStores)
    func writtenBackDecodesTheSame(_ store: URL) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try BinaryStoreFile(contentsOf: store)
        let copy = folder.appendingPathComponent("Copy.binarystore")
        try file.encoded().write(to: copy)
        let apple = try Self.decoded(store)
        let decant = try Self.decoded(copy)
        #expect(apple.contains("\"NSDictionaryMapNode\""))
        #expect(decant == apple)
        let report = try StoreReport(store: store, bundle: nil)
        #expect(report.entityCounts.values.reduce(0, +) == file.nodes.count)
        #expect(!report.entityVersionHashes.isEmpty)
        // And Decant reads its own copy as it read Apple's.
        #expect(try BinaryStoreFile(contentsOf: copy) == file)
    }

    @Test func screenFlowsColourGraphIsKeptAsArchived() throws {
        #expect(try Self.decoded(Self.screenFlow).contains("NSColor"))
        let file = try BinaryStoreFile(contentsOf: Self.screenFlow)
        let graphs = try file.nodes.flatMap(\.slots).compactMap { slot -> ArchivedValue? in
            if case .archived(let data) = slot { try KeyedArchive(data: data).decodeRootTree() } else { nil }
        }
        #expect(graphs.contains { if case .object(className: "NSColor", _) = $0 { true } else { false } })
    }

    @Test func inspectTellsWhatTheStoreHoldsWithoutAModel() throws {
        let report = try StoreReport(store: Self.screenFlow, path: "ScreenFlowDocument.dat", bundle: nil)
        #expect(report.format == "binary")
        #expect(report.journalMode == nil)
        #expect(report.storeType == "Binary")
        #expect(report.storeUUID == "8D608CF4-272F-4771-98DF-8C7086ABC00E")
        #expect(report.frameworkVersion == 1414)
        #expect(report.entityVersionHashes.count == 33)
        #expect(
            report.entityCounts == ["DocumentProperties": 1, "Track": 2, "MediaSource": 1, "ScreenMediaClip": 1])
        #expect(report.model == nil)
        #expect(report.text.contains("ScreenFlowDocument.dat: Core Data binary store"))
        #expect(report.text.contains("    Track  2"))
        #expect(report.text.contains("a binary store carries no model"))
        #expect(try InputKind(of: Self.screenFlow) == .store("binary"))
    }

    /// Class chains, keys and encodings of a store, as Python reads them: what Core Data looks for when it opens one.
    static let shape = """
        import json, plistlib, struct, sys
        d = open(sys.argv[2], 'rb').read()
        magic, fmt, dbv, mo, ml, do, dl, pk, zero = struct.unpack('>8sIIQQQQQQ', d[:64])
        def load(blob):
            p = plistlib.loads(blob)
            return p, p['$objects']
        def cls(objs, ref):
            o = objs[ref.data]
            return objs[o['$class'].data]['$classes'] if isinstance(o, dict) and '$class' in o else type(o).__name__
        p, objs = load(d[do:do + dl])
        root = objs[p['$top']['mapData'].data]
        out = {'top': list(p['$top'].keys()), 'map': cls(objs, p['$top']['mapData']),
               'mapKeys': sorted({type(objs[k.data]).__name__ for k in root['NS.keys']}),
               'nodes': [], 'fields': [], 'slots': [], 'related': [], 'toOne': [], 'toMany': [], 'nil': [],
               'counterIsHighestKey': pk == max(objs[k.data] for k in root['NS.keys'])}
        for k, v in zip(root['NS.keys'], root['NS.objects']):
            node = objs[v.data]
            out['nodes'].append(cls(objs, v))
            out['fields'].append(sorted(f for f in node if f != '$class'))
            assert node['NSPrimaryKey64'] == objs[k.data]
            out['slots'].append(cls(objs, node['NSAttributeValues']))
            for s in objs[node['NSAttributeValues'].data]['NS.objects']:
                if s.data == 0: out['nil'].append('$null')
                elif isinstance(objs[s.data], dict) and cls(objs, s)[0] == 'NSNull': out['nil'].append(cls(objs, s))
            if 'NSRelatedNodes' in node:
                related = objs[node['NSRelatedNodes'].data]
                out['related'].append(cls(objs, node['NSRelatedNodes']))
                for r in related['NS.objects']:
                    members = objs[r.data]['NS.objects']
                    kind = cls(objs, r)
                    (out['toMany'] if kind[0] == 'NSMutableArray' else out['toOne']).append(kind)
                    assert all(type(objs[m.data]) is int for m in members)
        for key in ['nodes', 'fields', 'slots', 'related', 'toOne', 'toMany', 'nil']:
            out[key] = sorted({json.dumps(x) for x in out[key]})
        p, objs = load(d[mo:mo + ml])
        meta = objs[p['$top']['metadata'].data]
        entries = {objs[k.data]: v for k, v in zip(meta['NS.keys'], meta['NS.objects'])}
        hashes = objs[entries['NSStoreModelVersionHashes'].data]
        out['metaTop'] = list(p['$top'].keys())
        out['meta'] = cls(objs, p['$top']['metadata'])
        out['metaKeys'] = sorted(entries)
        out['hashes'] = cls(objs, entries['NSStoreModelVersionHashes'])
        out['hashKinds'] = sorted({type(objs[h.data]).__name__ + str(len(objs[h.data])) for h in hashes['NS.objects']})
        out['identifiers'] = cls(objs, entries['NSStoreModelVersionIdentifiers'])
        out['scalars'] = {k: type(objs[entries[k].data]).__name__ for k in
                          ['NSStoreType', 'NSStoreUUID', 'NSPersistenceFrameworkVersion',
                           'NSStoreModelVersionHashesVersion', 'NSStoreModelVersionHashesDigest']}
        out['header'] = [magic.decode(), fmt, dbv, do, mo == 64 + dl, mo + ml == len(d), zero]
        print(json.dumps(out, sort_keys=True))
        """

    struct Shape: Decodable, Equatable {
        var top: [String]
        var map: [String]
        var mapKeys: [String]
        var nodes: [String]
        var fields: [String]
        var slots: [String]
        var related: [String]
        var toOne: [String]
        var toMany: [String]
        var `nil`: [String]
        var counterIsHighestKey: Bool
        var metaTop: [String]
        var meta: [String]
        var metaKeys: [String]
        var hashes: [String]
        var hashKinds: [String]
        var identifiers: [String]
        var scalars: [String: String]
        var header: [JSONScalar]
    }

    enum JSONScalar: Decodable, Equatable {
        case int(Int), bool(Bool), string(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? container.decode(Int.self) {
                self = .int(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    static func shape(of url: URL) throws -> Shape {
        try JSONDecoder().decode(Shape.self, from: Data(PythonOracle.text(Self.shape, arguments: [url.path]).utf8))
    }

    @Test func decantWritesApplesClassesKeysAndEncodings() throws {
        let output = try BinaryStoreTests.libraryStoreFile()
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        let apple = try Self.shape(of: Self.screenFlow)
        var decant = try Self.shape(of: output)
        // Apple's file has nodes with and without relationships, as the library has: the field sets agree.
        #expect(decant.fields == apple.fields)
        // The app's own metadata keys (ScreenFlow's bundle version, duration) are the only ones Decant lacks.
        let appKeys: Set<String> = ["CFBundleShortVersionString", "CFBundleVersion", "kMDItemDurationSeconds"]
        #expect(Set(apple.metaKeys).subtracting(appKeys) == Set(decant.metaKeys))
        decant.metaKeys = apple.metaKeys
        #expect(decant == apple)
    }

    // MARK: SQLite → binary → SQLite

    /// Item holds every attribute type; Group's ordered to-many `items` is the inverse of Item's to-one `group`;
    /// Tag and Item are many-to-many.
    static let kinds: ObjectModel = {
        var item = Entity(name: "Item")
        item.attributes = [
            ("b16", .integer16), ("b32", .integer32), ("b64", .integer64), ("dec", .decimal), ("dbl", .double),
            ("flt", .float), ("str", .string), ("flag", .boolean), ("when", .date), ("blob", .binary), ("uid", .uuid),
            ("link", .uri), ("shape", .transformable),
        ].map { (name: String, type: AttributeType) in Attribute(name: name, type: type, isOptional: true) }
        item.relationships = [
            Relationship(name: "group", destination: "Group", inverse: "items"),
            Relationship(name: "tags", destination: "Tag", inverse: "items", toMany: true),
        ]
        var group = Entity(name: "Group")
        group.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var items = Relationship(name: "items", destination: "Item", inverse: "group", toMany: true)
        items.isOrdered = true
        group.relationships = [items]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "items", destination: "Item", inverse: "tags", toMany: true)]
        return ObjectModel(versionName: "Kinds", entities: [item, group, tag], versionIdentifiers: ["1"])
    }()

    static func kindsBatches() throws -> [RecordBatch] {
        func ref(_ entity: String, _ key: Int64) -> ObjectReference {
            ObjectReference(entity: entity, id: .primaryKey(key))
        }
        var shapeArchive = KeyedArchiveWriter()
        let shape = shapeArchive.addDictionary(
            keys: [shapeArchive.addString("corners").uid, shapeArchive.addString("name").uid],
            values: [shapeArchive.addValue(.integer(4)).uid, shapeArchive.addString("square").uid])
        let full: [String: Value] = [
            "b16": .integer(-12), "b32": .integer(1 << 20), "b64": .integer(1 << 50),
            "dec": .decimal(Decimal(string: "12.345") ?? 0), "dbl": .double(0.1), "flt": .double(1.5),
            "str": .string("naïve ✓"), "flag": .bool(true),
            "when": .date(Date(timeIntervalSinceReferenceDate: 86_400.5)), "blob": .data(Data([0, 1, 2, 255])),
            "uid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
            "link": .uri("https://example.com/a?b=c"),
            "shape": .transformable(try shapeArchive.encodedData(root: shape)),
        ]
        var other = full
        other["flag"] = .bool(false)
        other["str"] = .string("other")
        other["shape"] = .transformable(Data([9, 9]))  // bytes that are no archive stay bytes
        let items: [(Int64, [String: Value], group: Int64?, tags: [Int64])] = [
            (1, full, 1, [1, 2]), (2, [:], nil, []), (3, other, 1, [2]),
        ]
        var batches: [RecordBatch] = []
        var itemBatch = try #require(RecordLayout(entity: "Item", in: kinds)).emptyBatch()
        for (key, values, group, tags) in items {
            itemBatch.append(
                Record(
                    entity: "Item", id: .primaryKey(key),
                    values: itemBatch.layout.attributes.map { values[$0.name] ?? .null },
                    relationships: [.toOne(group.map { ref("Group", $0) }), .toMany(tags.map { ref("Tag", $0) })]))
        }
        batches.append(itemBatch)
        var groupBatch = try #require(RecordLayout(entity: "Group", in: kinds)).emptyBatch()
        groupBatch.append(
            Record(
                entity: "Group", id: .primaryKey(1), values: ["G"],
                relationships: [.toMany([ref("Item", 3), ref("Item", 1)])]))
        batches.append(groupBatch)
        var tagBatch = try #require(RecordLayout(entity: "Tag", in: kinds)).emptyBatch()
        tagBatch.append(
            Record(entity: "Tag", id: .primaryKey(1), values: ["one"], relationships: [.toMany([ref("Item", 1)])]))
        tagBatch.append(
            Record(
                entity: "Tag", id: .primaryKey(2), values: [nil],
                relationships: [.toMany([ref("Item", 1), ref("Item", 3)])]))
        batches.append(tagBatch)
        return batches
    }

    @Test func everyTypeAndRelationshipKindGoesSQLiteToBinaryToSQLite() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Kinds.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: Self.kinds, journalMode: .delete)
        for batch in try Self.kindsBatches() { try writer.write(batch) }
        try writer.finish()
        let bundle = ModelBundle(
            name: "Kinds", versions: [Self.kinds], currentVersionName: "Kinds", sourceKind: .xcdatamodeld)
        let (middle, back) = try XMLStoreRoundTripTests.roundTrip(
            store, through: "binary", options: FormatOptions(bundle: bundle))
        let before = try CSVStoreRoundTripTests.records(of: store, model: Self.kinds)
        let after = try CSVStoreRoundTripTests.records(of: back, model: Self.kinds)
        #expect(before["Item"]?.count == 3)
        ObjectGraph.expectEqual(
            try BinaryStoreTests.decodingTransformables(before), try BinaryStoreTests.decodingTransformables(after),
            model: Self.kinds)
        // Every value but the archived transformable is byte for byte what it was.
        func plain(_ records: [String: [Record]]) -> [String] {
            (records["Item"] ?? []).map { record in
                record.values.filter { if case .transformable = $0 { false } else { true } }.description
            }.sorted()
        }
        #expect(plain(before) == plain(after))
        // The ordered to-many keeps its order.
        #expect(
            try StoreFeatureQuery.rows(back, "SELECT ZSTR FROM ZITEM WHERE ZGROUP IS NOT NULL ORDER BY Z_FOK_GROUP")
                == ["other", "naïve ✓"])
        // In the binary store the transformable is its object graph, as Core Data keeps it: an NSDictionary.
        let file = try BinaryStoreFile(contentsOf: middle)
        let archived = file.nodes.filter { $0.entity == "Item" }.flatMap(\.slots).compactMap { slot -> Data? in
            if case .archived(let data) = slot { data } else { nil }
        }
        let trees = try archived.map { try KeyedArchive(data: $0).decodeRootTree() }
        #expect(trees.contains { if case .dictionary(let entries) = $0 { entries.count == 2 } else { false } })
        // A decimal is an NSDecimalNumber, as Foundation archives one.
        #expect(
            trees.contains {
                if case .object(className: "NSDecimalNumberPlaceholder", let fields) = $0 {
                    fields.contains { $0.name == "NS.mantissa" }
                } else {
                    false
                }
            })
        #expect(file.nodes.filter { $0.entity == "Item" }.flatMap(\.slots).contains(.plist(.data(Data([9, 9])))))
    }
}
