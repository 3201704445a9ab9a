import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Compiled models hold property-list values of any kind where a strict reading expects strings (section 1.9):
/// `NSValidationWarnings` are Cocoa error codes (numbers) in the caches of 16 Apple-written stores, LoopKit's
/// fixture among them. Such a cache decodes, keeps the values as they are, and needs no `--model`; a cache that
/// really cannot be decoded is refused naming the entity and key inside it, and the way round (`--model`).
@Suite("Model caches of every shape Apple writes")
struct ModelCacheShapeTests {
    /// `Note{title}` whose title has a minimum length, as Xcode compiles `minValueString` on a string.
    static var model: ObjectModel {
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        return ObjectModel(versionName: "Notes", entities: [note])
    }

    /// The compiled `model` with `fields` added to the archived attribute `title` (as Apple's compiler adds its
    /// validation keys), re-encoded as a binary property list.
    static func archive(addingToTitle fields: [String: (inout [PropertyListValue]) -> PropertyListValue]) throws -> Data {
        guard case .dictionary(var top) = try PropertyListValue.decode(from: ArchivedModelEncoder.encode(model)),
            case .array(var objects)? = top["$objects"]
        else { throw DecantError(.internalError, "the encoder wrote no keyed archive") }
        let title = try #require(objects.firstIndex { object in
            guard case .dictionary(let entries) = object, case .uid(let name)? = entries["NSPropertyName"] else { return false }
            return objects[Int(name)] == .string("title")
        })
        guard case .dictionary(var entries) = objects[title] else { throw DecantError(.internalError, "no title") }
        for (key, make) in fields { entries[key] = make(&objects) }
        objects[title] = .dictionary(entries)
        top["$objects"] = .array(objects)
        return BinaryPropertyListWriter().write(.dictionary(top))
    }

    /// An `NSArray` of `elements` appended to `objects`, its reference returned.
    static func array(_ elements: [PropertyListValue], in objects: inout [PropertyListValue]) -> PropertyListValue {
        let arrayClass = objects.count
        objects.append(["$classname": "NSArray", "$classes": .array(["NSArray", "NSObject"])])
        objects.append(["NS.objects": .array(elements), "$class": .uid(UInt64(arrayClass))])
        return .uid(UInt64(objects.count - 1))
    }

    /// A predicate object (`TRUEPREDICATE`) appended to `objects`.
    static func truePredicate(in objects: inout [PropertyListValue]) -> PropertyListValue {
        let predicateClass = objects.count
        objects.append(["$classname": "NSTruePredicate", "$classes": .array(["NSTruePredicate", "NSPredicate", "NSObject"])])
        objects.append(["$class": .uid(UInt64(predicateClass))])
        return .uid(UInt64(objects.count - 1))
    }

    /// LoopKit's shape: one validation predicate per warning, each warning the Cocoa error code as an inline number
    /// (1660 = NSValidationStringTooLongError), and an older model's string warning beside it.
    static func validationArchive() throws -> Data {
        try archive(addingToTitle: [
            "NSValidationPredicates": { objects in
                let first = truePredicate(in: &objects)
                let second = truePredicate(in: &objects)
                return array([first, second], in: &objects)
            },
            "NSValidationWarnings": { objects in
                objects.append(.integer(1660))
                let code = PropertyListValue.uid(UInt64(objects.count - 1))
                objects.append("title too long")
                return array([code, .uid(UInt64(objects.count - 1))], in: &objects)
            },
        ])
    }

    @Test func numericValidationWarningsDecodeAndAreKept() throws {
        let decoded = try ArchivedModelDecoder.decode(Self.validationArchive())
        let title = try #require(decoded.entity(named: "Note")?.attributes.first)
        #expect(title.common.validationWarnings == [.integer(1660), .string("title too long")])
        #expect(title.common.validationPredicates == ["TRUEPREDICATE", "TRUEPREDICATE"])
        // Nothing the hash reads changed.
        #expect(decoded.entityVersionHashes == Self.model.entityVersionHashes)
    }

    /// A store whose `Z_MODELCACHE` is `archive`: written by Decant, its cache then replaced.
    static func store(in folder: URL, cache archive: Data) throws -> URL {
        let url = folder.appendingPathComponent("Notes.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: model)))
        batch.append(Record(entity: "Note", id: .primaryKey(1), values: ["milk"]))
        try writer.write(batch)
        try writer.finish()
        let blob = try Deflate.deflate(archive)
        var db: OpaquePointer?
        try #require(sqlite3_open(url.path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(db, "UPDATE Z_MODELCACHE SET Z_CONTENT = ?", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        _ = blob.withUnsafeBytes { bytes in
            sqlite3_bind_blob(statement, 1, bytes.baseAddress, Int32(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
        try #require(sqlite3_step(statement) == SQLITE_DONE)
        return url
    }

    @Test func aStoreWhoseCacheHoldsErrorCodesReadsWithoutAModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.store(in: folder, cache: Self.validationArchive())
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.modelCacheProblem == nil)
        let model = try store.resolveModel(bundle: nil)
        let reader = try SQLiteStoreReader(store: store, model: model)
        #expect(try reader.records(of: "Note").map(\.values) == [["milk"]])
        // Given a model, no warning about the cache either.
        #expect(reader.diagnostics.isEmpty)
    }

    @Test func aCacheThatCannotBeDecodedNamesTheKeyAndSuggestsTheModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // An attribute type that is a string: no compiled model holds one.
        let broken = try Self.archive(addingToTitle: [
            "NSAttributeType": { objects in
                objects.append("seven hundred")
                return .uid(UInt64(objects.count - 1))
            }
        ])
        let store = try SQLiteStore(contentsOf: Self.store(in: folder, cache: broken))
        let error = try #require(throws: DecantError.self) { try store.resolveModel(bundle: nil) }
        #expect(error.code == .malformedInput)
        #expect(error.location?.entity == "Note")
        #expect(error.location?.keyPath == "title.NSAttributeType")
        #expect(error.message.hasPrefix("cannot decode the model in Z_MODELCACHE: "))
        #expect(error.message.hasSuffix("; give the store's model with --model"))
    }

    /// LoopKit's fixture: its cache decodes (framework 1048), with numeric warnings, and its hashes are the
    /// store's.
    @Test func loopKitsFixtureCacheDecodes() throws {
        let url = Fixtures.corpus("\(Fixtures.appsPrefix)LoopKit__LoopKit/LoopKitHostedTests/TestCoreData/Model.sqlite.v1.original")
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.modelCacheProblem == nil)
        let model = try store.resolveModel(bundle: nil)
        #expect(model.entityVersionHashes == store.metadata.entityVersionHashes)
        let warnings = model.entities.flatMap { $0.attributes.flatMap(\.common.validationWarnings) }
        #expect(warnings.contains(.integer(1620)), "\(warnings)")
        #expect(warnings.allSatisfy { if case .integer = $0 { true } else { false } })
    }
}
