import Decant
import DecantTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The XML and binary stores are whole-file formats: their readers hold every object. These tests measure the memory
/// (resident set growth) a reader holds per object, for the figures in the README, and print it (other tests share
/// the process, so run each test alone for clean figures); what they check is that the reader measured holds every
/// object with the values written, compared with values written by hand.
@Suite("Whole-file store memory", .serialized)
struct WholeFileMemoryTests {
    static let count = 20_000

    /// `Item`: four attributes and a parent ⇄ children relationship.
    static let model: ObjectModel = {
        var item = Entity(name: "Item")
        item.attributes = [
            Attribute(name: "name", type: .string, isOptional: true),
            Attribute(name: "count", type: .integer32, isOptional: true),
            Attribute(name: "when", type: .date, isOptional: true),
            Attribute(name: "score", type: .double, isOptional: true),
        ]
        item.relationships = [
            Relationship(name: "parent", destination: "Item", inverse: "children"),
            Relationship(name: "children", destination: "Item", inverse: "parent", toMany: true),
        ]
        return ObjectModel(versionName: "Items", entities: [item])
    }()

    static var bundle: ModelBundle {
        ModelBundle(name: "Items", versions: [model], currentVersionName: "Items", sourceKind: .xcdatamodeld)
    }

    static func write(_ writer: some RecordWriter) throws {
        var writer = writer
        var batch = try #require(RecordLayout(entity: "Item", in: model)).emptyBatch()
        for key in 1...count {
            batch.append(
                Record(
                    entity: "Item", id: .primaryKey(Int64(key)),
                    values: [
                        .integer(Int64(key)), .string("item \(key)"), .double(Double(key) / 7),
                        .date(Date(timeIntervalSinceReferenceDate: Double(key) * 60.5)),
                    ],
                    relationships: [
                        .viaInverse,
                        .toOne(key == 1 ? nil : ObjectReference(entity: "Item", id: .primaryKey(Int64(key / 2)))),
                    ]))
        }
        try writer.write(batch)
        try writer.finish()
    }

    /// The resident set size, from `/proc/self/statm`: a test that reads it fails where it cannot be read, rather
    /// than printing a figure of 0.
    static func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        let pages = try #require(fields.count > 1 ? Int(fields[1]) : nil, "/proc/self/statm: \(text)")
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Gives freed heap pages back to the system (glibc's `malloc_trim`, looked up at run time), so that memory the
    /// writer freed is not silently reused by the reader being measured.
    static func trimHeap() {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    /// The reader holds all ``count`` items, item 7 with its values as written, and every item but the first a parent.
    static func expectEveryItem(in reader: inout some RecordReader) throws {
        let items = try #require(try RecordDump.records(of: &reader)["Item"])
        #expect(items.count == count)
        let seventh = try #require(items.first { $0.values.contains(.string("item 7")) })
        #expect(
            Set(seventh.values)
                == [.integer(7), .string("item 7"), .double(1), .date(Date(timeIntervalSinceReferenceDate: 7 * 60.5))])
        let withParent = items.filter { record in
            record.relationships.contains { if case .toOne(let target) = $0 { target != nil } else { false } }
        }
        #expect(withParent.count == count - 1)
    }

    static func measure(_ open: () throws -> any RecordReader) throws -> (perObject: Int, reader: any RecordReader) {
        trimHeap()
        let before = try residentBytes()
        let reader = try open()
        let after = try residentBytes()
        return ((after - before) / count, reader)
    }

    @Test func xmlStoreReaderMemoryPerObject() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("items.xml")
        try Self.write(try XMLStoreWriter(creating: url, model: Self.model))
        let size = try Data(contentsOf: url).count
        let (perObject, reader) = try Self.measure {
            try XMLStoreReader(contentsOf: url, options: FormatOptions(bundle: Self.bundle))
        }
        print("XML store: \(size / Self.count) bytes of file and \(perObject) bytes of memory per object")
        #expect(reader.model.entities.count == 1)
        var opened = reader
        try Self.expectEveryItem(in: &opened)
    }

    @Test func binaryStoreReaderMemoryPerObject() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("items.binarystore")
        try Self.write(try BinaryStoreWriter(creating: url, model: Self.model))
        let size = try Data(contentsOf: url).count
        let (perObject, reader) = try Self.measure {
            try BinaryStoreReader(contentsOf: url, options: FormatOptions(bundle: Self.bundle))
        }
        print("Binary store: \(size / Self.count) bytes of file and \(perObject) bytes of memory per object")
        #expect(reader.model.entities.count == 1)
        var opened = reader
        try Self.expectEveryItem(in: &opened)
    }
}
