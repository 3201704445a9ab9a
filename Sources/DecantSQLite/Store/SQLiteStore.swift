public import DecantCore
public import DecantCodecs
import DecantFormats
public import Foundation
import GRDB

/// An open Core Data SQLite store, read-only: its metadata, entity numbers, model cache and counts.
///
/// The files on disk are never modified (see ``StoreFiles/readableLocation()``).
/// ```swift
/// let store = try SQLiteStore(contentsOf: url)
/// print(store.metadata.frameworkVersion ?? 0, try store.objectCounts())
/// ```
public final class SQLiteStore {
    /// The store's files.
    public let files: StoreFiles
    /// `Z_METADATA`.
    public let metadata: StoreMetadata
    /// `Z_PRIMARYKEY` rows: entity number → (name, super number, max).
    public let primaryKeys: [StoreSchema.PrimaryKeyRow]
    /// The model decoded from `Z_MODELCACHE`, when the store has one (framework 637 and later).
    public let cachedModel: ObjectModel?
    /// Why `Z_MODELCACHE` could not be decoded, when it could not: an error only for a run that needs the cache (no
    /// model given), a warning otherwise (``SQLiteStoreReader/diagnostics``).
    public let modelCacheProblem: DecantError?
    /// The connection (read-only, on the original or a private copy).
    let connection: DatabaseQueue
    /// The URI the connection opened (the original read-only and immutable, or the private copy), for attaching the
    /// same consistent database to another connection.
    let uri: String
    private let temporaryFolder: URL?
    /// The store's path as the user named it, for messages.
    public var displayPath: String { files.database.displayPath }

    /// Opens the store at `url` for reading.
    ///
    /// - Throws: ``DecantError`` `.fileNotFound`, or `.malformedInput` when the file is not a Core Data store.
    public init(contentsOf url: URL) throws {
        let files = StoreFiles(database: url)
        let (uri, folder) = try files.readableLocation()
        self.files = files
        self.uri = uri
        self.temporaryFolder = folder
        let location = Location(path: url.displayPath)
        do {
            var configuration = GRDB.Configuration()
            configuration.readonly = true
            configuration.label = "decant.store"
            let queue = try DatabaseQueue(path: uri, configuration: configuration)
            self.connection = queue
            let (metadata, primaryKeys, cache) = try queue.inDatabase { db -> (StoreMetadata, [StoreSchema.PrimaryKeyRow], Data?) in
                guard try db.tableExists("Z_METADATA"), try db.tableExists("Z_PRIMARYKEY") else {
                    throw DecantError(
                        .malformedInput, "not a Core Data store: expected tables Z_METADATA and Z_PRIMARYKEY",
                        at: location)
                }
                // Every value read from the file is untrusted: columns are read as database values and checked,
                // never through conversions that trap on a wrong type.
                guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
                else { throw DecantError(.malformedInput, "Z_METADATA has no row 1", at: location) }
                guard case .blob(let plistData) = (row["Z_PLIST"] as DatabaseValue).storage else {
                    throw DecantError(
                        .malformedInput, "Z_METADATA.Z_PLIST is \(Self.kind(of: row["Z_PLIST"])), expected a property list blob",
                        at: location)
                }
                let plist = try BinaryPropertyListReader(path: url.displayPath + " (Z_METADATA.Z_PLIST)").read(plistData)
                guard let dictionary = plist.dictionaryValue else {
                    throw DecantError(.malformedInput, "Z_METADATA.Z_PLIST is not a dictionary", at: location)
                }
                let uuid = String.fromDatabaseValue(row["Z_UUID"]) ?? ""
                let metadata = StoreMetadata(storeUUID: uuid, plist: dictionary)
                var keys: [StoreSchema.PrimaryKeyRow] = []
                for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
                    guard case .int64(let number) = (row["Z_ENT"] as DatabaseValue).storage,
                        let name = String.fromDatabaseValue(row["Z_NAME"])
                    else {
                        throw DecantError(
                            .malformedInput,
                            "Z_PRIMARYKEY has a row whose Z_ENT (\(Self.kind(of: row["Z_ENT"]))) or Z_NAME "
                                + "(\(Self.kind(of: row["Z_NAME"]))) is not an integer and a name", at: location)
                    }
                    keys.append(
                        StoreSchema.PrimaryKeyRow(
                            entityNumber: Int(number), name: name, superNumber: Int.fromDatabaseValue(row["Z_SUPER"]) ?? 0,
                            max: Int.fromDatabaseValue(row["Z_MAX"]) ?? 0))
                }
                var cache: Data?
                if try db.tableExists("Z_MODELCACHE"), let value = try DatabaseValue.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") {
                    switch value.storage {
                    case .blob(let data): cache = data
                    case .null: cache = nil
                    default:
                        throw DecantError(
                            .malformedInput, "Z_MODELCACHE.Z_CONTENT is \(Self.kind(of: value)), expected a blob",
                            at: location)
                    }
                }
                return (metadata, keys, cache)
            }
            self.metadata = metadata
            self.primaryKeys = primaryKeys
            var cachedModel: ObjectModel?
            var modelCacheProblem: DecantError?
            do {
                cachedModel = try cache.map { try Self.decodeModelCache($0, path: url.displayPath) }
            } catch let problem as DecantError {
                modelCacheProblem = problem
            }
            self.cachedModel = cachedModel
            self.modelCacheProblem = modelCacheProblem
        } catch {
            if let folder { try? FileManager.default.removeItem(at: folder) }
            throw DatabaseFailure.wrap(error, "cannot read the store as a Core Data SQLite store", at: location)
        }
    }

    deinit {
        if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) }
    }

    /// What a caller that needs the cache (no model given) is told when it cannot be decoded: the problem, where in
    /// the cache it is, and the way round it, since the store still reads with its model.
    public var modelCacheRefusal: DecantError? {
        modelCacheProblem.map { problem in
            var refusal = problem
            refusal.message = "cannot decode the model in Z_MODELCACHE: \(problem.message); give the store's model with "
                + "--model"
            return refusal
        }
    }

    /// The entity number each entity name has in this store.
    public var entityNumbers: [String: Int] {
        Dictionary(primaryKeys.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { first, _ in first })
    }

    /// Decodes a `Z_MODELCACHE` blob: raw DEFLATE around a keyed archive of the model.
    public static func decodeModelCache(_ blob: Data, path: String? = nil) throws -> ObjectModel {
        let archiveData = try Deflate.inflate(blob, path: path)
        var model = try ArchivedModelDecoder.decode(archiveData, path: path.map { $0 + " (Z_MODELCACHE)" })
        model.versionName = nil
        return model
    }

    /// Resolves the model the store was written with: the version of `bundle` whose hashes match, or, without a
    /// bundle, the model in `Z_MODELCACHE` after proving its hashes equal the metadata's.
    ///
    /// - Throws: `.modelMismatch` naming the nearest version and what differs; `.unsupportedFormat` for a
    ///   store without a cache when no bundle is given.
    public func resolveModel(bundle: ModelBundle?) throws -> ObjectModel {
        if bundle == nil, let modelCacheRefusal { throw modelCacheRefusal }
        return try ModelMatch.resolve(
            storeHashes: metadata.entityVersionHashes, storeIdentifiers: metadata.versionIdentifiers, bundle: bundle,
            cachedModel: cachedModel,
            missingModelAdvice:
                "the store has no Z_MODELCACHE (written by Core Data \(metadata.frameworkVersion ?? 0)); give its model with --model",
            at: Location(path: displayPath))
    }

    /// The storage class of a database value, for messages.
    static func kind(of value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64: "an integer"
        case .double: "a real"
        case .string: "text"
        case .blob: "a blob"
        }
    }

    /// Each entity's number in this store: its `Z_PRIMARYKEY` row, or for an entity that row does not name (a store
    /// migrated in place may keep an entity's former name there), the number Core Data gives it in `schema`.
    public func entityNumbers(for schema: StoreSchema) -> [String: Int] {
        let stored = entityNumbers
        var numbers: [String: Int] = [:]
        for entity in schema.entities { numbers[entity.name] = stored[entity.name] ?? entity.number }
        return numbers
    }

    /// The number of rows per entity, counted with `SELECT Z_ENT, COUNT(*)` over every entity table. Entities are
    /// named by `Z_PRIMARYKEY`, or, given the store's model, by the model (see ``entityNumbers(for:)``); given the
    /// model, every row of a table that holds one entity alone counts as that entity, whatever its `Z_ENT`, as Core
    /// Data fetches it (section 1.9).
    public func objectCounts(model: ObjectModel? = nil) throws -> [String: Int] {
        var names = Dictionary(primaryKeys.map { ($0.entityNumber, $0.name) }, uniquingKeysWith: { first, _ in first })
        var soleEntity: [String: String] = [:]
        if let model {
            let schema = try StoreSchema(model: model, style: SchemaStyle(frameworkVersion: metadata.frameworkVersion ?? 1344))
            for (name, number) in entityNumbers(for: schema) { names[number] = name }
            for (table, members) in Dictionary(grouping: schema.entities, by: \.tableName) where members.count == 1 {
                soleEntity[table.uppercased()] = members[0].name
            }
        }
        do {
            return try connection.inDatabase { db in
                var counts: [String: Int] = [:]
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                for table in tables where table.hasPrefix("Z") {
                    let columns = Set(try db.columns(in: table).map { $0.name.uppercased() })
                    guard columns.isSuperset(of: ["Z_PK", "Z_ENT", "Z_OPT"]) else { continue }
                    let quoted = table.replacingOccurrences(of: "\"", with: "\"\"")
                    if let entity = soleEntity[table.uppercased()] {
                        let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\(quoted)\"") ?? 0
                        if rows > 0 { counts[entity, default: 0] += rows }
                        continue
                    }
                    let grouped = try Row.fetchAll(db, sql: "SELECT Z_ENT, COUNT(*) AS n FROM \"\(quoted)\" GROUP BY Z_ENT")
                    for entry in grouped {
                        let count = Int.fromDatabaseValue(entry["n"]) ?? 0
                        guard case .int64(let number) = (entry["Z_ENT"] as DatabaseValue).storage else {
                            counts["\(table) rows whose Z_ENT is \(Self.kind(of: entry["Z_ENT"]))", default: 0] += count
                            continue
                        }
                        counts[names[Int(number)] ?? "Z_ENT \(number)", default: 0] += count
                    }
                }
                return counts
            }
        } catch {
            throw DatabaseFailure.wrap(error, "cannot count the store's objects", at: Location(path: displayPath))
        }
    }
}

@available(*, unavailable)
extension SQLiteStore: Sendable {}
