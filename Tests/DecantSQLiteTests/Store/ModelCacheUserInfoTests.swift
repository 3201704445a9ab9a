import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// A compiled model's `userInfo` (model cache, `.mom`) holds any property-list value, not only strings: stores whose
/// cache held an integer failed with "expected a string, found an inline integer", even when given their model.
@Suite("userInfo in compiled models and model caches")
struct ModelCacheUserInfoTests {
    /// Every kind of value, nested collections included.
    static let info: [String: UserInfoValue] = [
        "text": "kept", "count": .integer(12), "negative": .integer(-9_223_372_036_854_775_808), "ratio": .real(0.25),
        "flag": .bool(true), "off": .bool(false), "when": .date(Date(timeIntervalSinceReferenceDate: 86_400.5)),
        "bytes": .data(Data([0, 1, 2, 255])), "empty": .string(""),
        "list": .array(["a", .integer(1), .array([.bool(false)])]),
        "table": .dictionary(["inner": .real(-1.5), "nested": .dictionary(["deep": "yes"])]),
    ]

    static var model: ObjectModel {
        var note = Entity(name: "Note")
        var title = Attribute(name: "title", type: .string, isOptional: true)
        title.userInfo = info
        note.attributes = [title]
        note.userInfo = info
        return ObjectModel(versionName: "Notes", entities: [note])
    }

    @Test func everyKindOfValueSurvivesTheArchiveAndAMomFile() throws {
        let data = try ArchivedModelEncoder.encode(Self.model)
        let decoded = try ArchivedModelDecoder.decode(data)
        #expect(decoded.entities.first?.userInfo == Self.info)
        #expect(decoded.entities.first?.attributes.first?.userInfo == Self.info)
        // Written back unchanged: the same archive again.
        #expect(try ArchivedModelEncoder.encode(decoded) == data)

        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mom = folder.appendingPathComponent("Notes.mom")
        try data.write(to: mom)
        let loaded = try #require(ModelBundle.load(from: mom).versions.first)
        #expect(loaded.entities.first?.userInfo == Self.info)
        #expect(loaded.entities.first?.attributes.first?.userInfo == Self.info)
    }

    @Test func userInfoValuesAreBounded() throws {
        var model = Self.model
        model.entities[0].userInfo = ["many": .array(Array(repeating: .integer(1), count: 99_000))]
        let decoded = try ArchivedModelDecoder.decode(ArchivedModelEncoder.encode(model))
        #expect(decoded.entities.first?.userInfo == model.entities[0].userInfo)
        // Past the bound (counting the attribute's own values too): refused, not read on and on.
        model.entities[0].userInfo = ["many": .array(Array(repeating: .integer(1), count: 100_001))]
        let error = try #require(throws: DecantError.self) {
            try ArchivedModelDecoder.decode(ArchivedModelEncoder.encode(model))
        }
        #expect(error.message.contains("more than 100000 values"), "\(error.message)")
    }

    /// A store of `model` with one note.
    static func store(at url: URL) throws {
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        let layout = try #require(RecordLayout(entity: "Note", in: model))
        var batch = RecordBatch(layout: layout)
        batch.append(Record(entity: "Note", id: .primaryKey(1), values: ["milk"]))
        try writer.write(batch)
        try writer.finish()
    }

    @Test func aStoresCacheKeepsEveryKindOfValue() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        try Self.store(at: url)
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.modelCacheProblem == nil)
        let cached = try #require(store.cachedModel)
        #expect(cached.entities.first?.userInfo == Self.info)
        #expect(cached.entities.first?.attributes.first?.userInfo == Self.info)
        #expect(try store.resolveModel(bundle: nil).entities.first?.userInfo == Self.info)
    }

    @Test func aCacheThatCannotBeDecodedIsAWarningWhenTheModelIsGiven() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        try Self.store(at: url)
        // A cache of something that is not a model archive (valid DEFLATE of a few bytes: stored block "hello").
        var db: OpaquePointer?
        try #require(sqlite3_open(url.path, &db) == SQLITE_OK)
        let sql = "UPDATE Z_MODELCACHE SET Z_CONTENT = x'010500faff68656c6c6f'"
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)

        let store = try SQLiteStore(contentsOf: url)
        let problem = try #require(store.modelCacheProblem)
        #expect([.malformedInput, .unsupportedFormat].contains(problem.code))
        // Without a model the cache is needed: its error.
        let error = try #require(throws: DecantError.self) { try store.resolveModel(bundle: nil) }
        #expect(error.message == "cannot decode the model in Z_MODELCACHE: \(problem.message); give the store's model with --model")
        // With one, the run goes on and says so.
        let bundle = ModelBundle(name: "Notes", versions: [Self.model], currentVersionName: "Notes", sourceKind: .xcdatamodeld)
        let model = try store.resolveModel(bundle: bundle)
        let reader = try SQLiteStoreReader(store: store, model: model)
        #expect(reader.diagnostics.map(\.kind) == [.unreadableModelCache])
        #expect(reader.diagnostics.first?.description.hasPrefix("warning: ") == true)
        var batch = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        #expect(try reader.nextBatch(into: &batch))
        #expect(batch.count == 1)
    }
}
