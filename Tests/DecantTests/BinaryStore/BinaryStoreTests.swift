import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// The binary store: its structure checked against section 6 of the formats spec with Python's `plistlib` as an
/// independent reader, round trips through Decant and through SQLite, and bad input. (`AppleBinaryStoreTests`
/// compares it with a store Apple wrote.)
@Suite("Binary store")
struct BinaryStoreTests {
    /// Header fields, and for each archive its `$top` keys, `$archiver` and root class, as Python reads them.
    static let oracle = """
        import json, plistlib, struct, sys
        data = open(sys.argv[1], 'rb').read()
        magic, fmt, dbv, mo, ml, do, dl, pk, zero = struct.unpack('>8sIIQQQQQQ', data[:64])
        out = {'magic': magic.decode(), 'format': fmt, 'database': dbv, 'metadataOffset': mo, 'metadataLength': ml,
               'mapOffset': do, 'mapLength': dl, 'nextPK': pk, 'zero': zero, 'size': len(data)}
        def archive(blob, key):
            p = plistlib.loads(blob)
            objs = p['$objects']
            root = objs[p['$top'][key].data]
            cls = objs[root['$class'].data]['$classname']
            return p['$archiver'], list(p['$top'].keys()), cls, objs, root
        arch, top, cls, objs, root = archive(data[do:do + dl], 'mapData')
        out['map'] = {'archiver': arch, 'top': top, 'class': cls, 'count': len(root['NS.keys'])}
        node = objs[root['NS.objects'][0].data]
        out['nodeClasses'] = objs[node['$class'].data]['$classes']
        arch, top, cls, objs, root = archive(data[mo:mo + ml], 'metadata')
        keys = [objs[k.data] for k in root['NS.keys']]
        values = [objs[v.data] for v in root['NS.objects']]
        meta = dict(zip(keys, values))
        out['meta'] = {'archiver': arch, 'top': top, 'class': cls, 'storeType': meta['NSStoreType'],
                       'keys': sorted(keys)}
        print(json.dumps(out))
        """

    struct Structure: Decodable {
        struct Archive: Decodable {
            var archiver: String
            var top: [String]
            var `class`: String
            var count: Int?
            var storeType: String?
            var keys: [String]?
        }
        var magic: String
        var format: Int
        var database: Int
        var metadataOffset: Int
        var metadataLength: Int
        var mapOffset: Int
        var mapLength: Int
        var nextPK: Int
        var zero: Int
        var size: Int
        var map: Archive
        var nodeClasses: [String]
        var meta: Archive
    }

    static func libraryStore(in folder: URL) throws -> URL {
        try XMLStoreRoundTripTests.libraryStore(in: folder)
    }

    static func records(of reader: inout some RecordReader) throws -> [String: [Record]] {
        var result: [String: [Record]] = [:]
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return [:] }
        var batch = layout.emptyBatch()
        while try reader.nextBatch(into: &batch) {
            result[batch.layout.entityName, default: []] += (0..<batch.count).map { batch.record(at: $0) }
        }
        return result
    }

    static func records(of batches: [RecordBatch]) -> [String: [Record]] {
        var result: [String: [Record]] = [:]
        for batch in batches {
            result[batch.layout.entityName, default: []] += (0..<batch.count).map { batch.record(at: $0) }
        }
        return result
    }

    @Test func layoutFollowsSection6() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Library.binarystore")
        let writer = try BinaryStoreWriter(creating: output, model: LibraryFixture.model)
        for batch in LibraryFixture.batches { try writer.write(batch) }
        try writer.finish()
        let structure = try JSONDecoder().decode(
            Structure.self, from: PythonOracle.run(Self.oracle, input: try Data(contentsOf: output)))
        let objects = LibraryFixture.records.values.map(\.count).reduce(0, +)
        #expect(structure.magic == "CoreData")
        #expect(structure.format == 1)
        #expect(structure.database == 134_481_920)
        #expect(structure.mapOffset == 64)
        #expect(structure.metadataOffset == 64 + structure.mapLength)
        #expect(structure.metadataOffset + structure.metadataLength == structure.size)
        #expect(structure.nextPK == objects)  // the highest key handed out, as Apple's header holds it
        #expect(structure.zero == 0)
        #expect(structure.map.archiver == "NSKeyedArchiver")
        #expect(structure.map.top == ["mapData"])
        #expect(structure.map.class == "NSMutableDictionary")
        #expect(structure.map.count == objects)
        #expect(structure.nodeClasses == ["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"])
        #expect(structure.meta.top == ["metadata"])
        #expect(structure.meta.storeType == "Binary")
        #expect(structure.meta.keys?.contains("NSStoreModelVersionHashes") == true)
        #expect(structure.meta.keys?.contains("NSStoreUUID") == true)
        // Decant reads it back: the model version by its hashes, every object.
        var reader = try BinaryStoreReader(contentsOf: output, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(reader.metadata.entityVersionHashes == LibraryFixture.model.entityVersionHashes)
        #expect(try FormatRegistry.builtIn.inputFormat(of: output, named: nil).name == "binary")
        let back = try Self.records(of: &reader)
        ObjectGraph.expectEqual(
            Self.records(of: LibraryFixture.batches), back, model: LibraryFixture.model)
    }

    @Test func libraryGoesToABinaryStoreAndBackUnchanged() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.libraryStore(in: folder)
        let (_, back) = try XMLStoreRoundTripTests.roundTrip(
            store, through: "binary", options: FormatOptions(bundle: LibraryFixture.bundle))
        let model = LibraryFixture.model
        ObjectGraph.expectEqual(
            try CSVStoreRoundTripTests.records(of: store, model: model),
            try CSVStoreRoundTripTests.records(of: back, model: model), model: model)
        #expect(
            try StoreFeatureQuery.rows(
                back,
                "SELECT ZTITLE FROM ZBOOK WHERE ZSHELF = (SELECT Z_PK FROM ZSHELF WHERE ZLABEL = 'Fiction') "
                    + "ORDER BY Z_FOK_SHELF") == ["", "Dune", "Snow Crash"])
    }

    @Test("every corpus store goes to a binary store and back unchanged", arguments: XMLStoreRoundTripTests.stores)
    func corpusStore(_ store: String) throws {
        let copy = try CSVStoreRoundTripTests.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let opened = try SQLiteStore(contentsOf: copy)
        let model = try opened.resolveModel(
            bundle: CorpusStoreModels.bundle(forStore: store, hashes: opened.metadata.entityVersionHashes))
        let bundle = ModelBundle(
            name: "Cache", versions: [model], currentVersionName: model.versionName, sourceKind: .storeCache)
        guard
            let (_, back) = try CorpusAllowList.readingRows(of: store, refusedBy: CorpusAllowList.danglingReferences, {
                try XMLStoreRoundTripTests.roundTrip(copy, through: "binary", options: FormatOptions(bundle: bundle))
            })
        else { return }
        // A transformable value travels as its object graph (Core Data keeps the value itself in the node) and comes
        // back re-archived: compared decoded.
        ObjectGraph.expectEqual(
            try Self.decodingTransformables(CSVStoreRoundTripTests.records(of: copy, model: model)),
            try Self.decodingTransformables(CSVStoreRoundTripTests.records(of: back, model: model)), model: model)
        // Independently of Decant's readers: each entity and join table holds as many rows in the store that came
        // back as in Apple's file, counted with Python's sqlite3.
        let rows = "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); "
            + "ts = [r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' "
            + "AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE', 'Z_PRIMARYKEY') ORDER BY name\")]; "
            + "[print(t, c.execute('SELECT count(*) FROM \"%s\"' % t).fetchone()[0]) for t in ts]"
        let apple = try PythonOracle.text(rows, arguments: [copy.path])
        #expect(try PythonOracle.text(rows, arguments: [back.path]) == apple, "\(store)")
    }

    /// `records` with each transformable value that is a keyed archive replaced by the text of its decoded tree.
    static func decodingTransformables(_ records: [String: [Record]]) throws -> [String: [Record]] {
        try records.mapValues { list in
            try list.map { record in
                var copy = record
                copy.values = try record.values.map { value in
                    guard case .transformable(let data) = value, data.starts(with: Data("bplist00".utf8)),
                        let archive = try? KeyedArchive(data: data)
                    else { return value }
                    return .transformable(Data(String(describing: try archive.decodeRootTree()).utf8))
                }
                return copy
            }
        }
    }

    // MARK: Bad input

    static func refusal(_ data: Data) throws -> DecantError {
        let error = try #require(throws: DecantError.self) {
            _ = try BinaryStoreReader(
                data: data, path: "bad.binarystore", options: FormatOptions(bundle: LibraryFixture.bundle))
        }
        #expect(error.code.exitCode == 65, "\(error)")
        #expect(error.location?.path == "bad.binarystore")
        return error
    }

    /// The library written as a binary store in a new temporary folder.
    static func libraryStoreFile() throws -> URL {
        let output = try Fixtures.temporaryDirectory().appendingPathComponent("Library.binarystore")
        let writer = try BinaryStoreWriter(creating: output, model: LibraryFixture.model)
        for batch in LibraryFixture.batches { try writer.write(batch) }
        try writer.finish()
        return output
    }

    static func libraryData() throws -> Data {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Library.binarystore")
        let writer = try BinaryStoreWriter(creating: output, model: LibraryFixture.model)
        for batch in LibraryFixture.batches { try writer.write(batch) }
        try writer.finish()
        return try Data(contentsOf: output)
    }

    @Test func truncatedAndDamagedHeadersFailWithTheirOffset() throws {
        let data = try Self.libraryData()
        #expect(try Self.refusal(data.prefix(40)).location?.offset == 0)
        let truncated = try Self.refusal(data.prefix(data.count - 10))
        #expect(truncated.message.contains("outside the file"))
        #expect(truncated.location?.offset == 16)
        var magic = data
        magic[0] = UInt8(ascii: "X")
        #expect(try Self.refusal(magic).message.contains("magic"))
        var version = data
        version[14] = 0x09
        #expect(try Self.refusal(version).location?.offset == 12)
        // A zero-length file is an empty store.
        var empty = try BinaryStoreReader(
            data: Data(), path: "empty", options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(try Self.records(of: &empty).isEmpty)
    }

    @Test func wrongTypesAndUnknownReferencesNameEntityObjectAndProperty() throws {
        // The shelf label "Fiction" is archived as a 7-byte ASCII string (marker 0x57); make it 7 bytes of data
        // (marker 0x47): the archive stays valid, the value has the wrong type.
        var data = try Self.libraryData()
        let string = Data([0x57] + Array("Fiction".utf8))
        let range = try #require(data.range(of: string))
        data[range.lowerBound] = 0x47
        let error = try #require(throws: DecantError.self) {
            var reader = try BinaryStoreReader(
                data: data, path: "bad.binarystore", options: FormatOptions(bundle: LibraryFixture.bundle))
            _ = try Self.records(of: &reader)
        }
        #expect(error.code.exitCode == 65)
        #expect(error.location?.path == "bad.binarystore")
        #expect(error.location?.entity == "Shelf")
        #expect(error.location?.object?.hasPrefix("Shelf/p") == true)
        #expect(error.location?.keyPath == "label")
        #expect(error.message.contains("expected a string"))
        // Converted, it exits 65 and leaves no output.
        let converted = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: converted) }
        let input = converted.appendingPathComponent("bad.binarystore")
        try data.write(to: input)
        let converting = try #require(throws: DecantError.self) {
            _ = try StoreConversion.convert(
                from: input, to: converted.appendingPathComponent("out.sqlite"),
                options: FormatOptions(bundle: LibraryFixture.bundle))
        }
        #expect(converting.code.exitCode == 65)
        #expect(converting.location?.keyPath == "label")
        #expect(try FileManager.default.contentsOfDirectory(atPath: converted.path) == ["bad.binarystore"])
        // A relationship pointing at an object of the wrong entity (written by hand: the writer does not check).
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("wrong.binarystore")
        let writer = try BinaryStoreWriter(creating: output, model: LibraryFixture.model)
        var tags = try #require(RecordLayout(entity: "Tag", in: LibraryFixture.model)).emptyBatch()
        tags.append(Record(entity: "Tag", id: .primaryKey(1), values: ["t"]))
        try writer.write(tags)
        var readings = try #require(RecordLayout(entity: "Reading", in: LibraryFixture.model)).emptyBatch()
        readings.append(
            Record(
                entity: "Reading", id: .primaryKey(1), values: [nil],
                relationships: [.toOne(ObjectReference(entity: "Tag", id: .primaryKey(1)))]))
        try writer.write(readings)
        try writer.finish()
        let wrong = try #require(throws: DecantError.self) {
            let options = FormatOptions(bundle: LibraryFixture.bundle)
            var reader = try BinaryStoreReader(contentsOf: output, options: options)
            _ = try Self.records(of: &reader)
        }
        #expect(wrong.code.exitCode == 65)
        #expect(wrong.location?.entity == "Reading")
        #expect(wrong.location?.keyPath == "book")
        #expect(wrong.message.contains("a Tag, where the model expects a Book"))
        let unknown = try Self.refusalOfReferences()
        #expect(unknown.location?.entity == "Reading")
        #expect(unknown.location?.keyPath == "book")
        #expect(unknown.message.contains("not among the objects written"))
    }

    /// A reference to an object that is not in the store fails when written, naming the object and relationship.
    static func refusalOfReferences() throws -> DecantError {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("dangling.binarystore")
        let writer = try BinaryStoreWriter(creating: output, model: LibraryFixture.model)
        var readings = try #require(RecordLayout(entity: "Reading", in: LibraryFixture.model)).emptyBatch()
        readings.append(
            Record(
                entity: "Reading", id: .primaryKey(1), values: [nil],
                relationships: [.toOne(ObjectReference(entity: "Book", id: .primaryKey(99)))]))
        try writer.write(readings)
        let error = try #require(throws: DecantError.self) { try writer.finish() }
        writer.abandon()
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        return error
    }
}
