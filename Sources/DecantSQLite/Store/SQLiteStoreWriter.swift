public import DecantCore
import DecantCodecs
internal import CSQLite
import DecantFormats
public import Foundation
import GRDB

/// Writes a fresh Core Data SQLite store for one model version: the schema Core Data creates for it, the
/// bookkeeping rows, `Z_METADATA` and `Z_MODELCACHE`, and the objects of the record batches it is given.
///
/// ``init(writingAt:model:journalMode:style:identityMapBound:)`` writes where it is told (a job's staging location,
/// ``DestinationLease/staging``; the job moves the store into place). ``init(creating:model:journalMode:style:identityMapBound:)``,
/// for use on its own, takes a ``DestinationLease`` of the destination itself: the store is built at its staging
/// location and renamed into place by ``finish()`` only after it is complete and checkpointed. A failed or abandoned
/// write (``abandon()``, or releasing the writer before ``finish()``) rolls back, finalizes its statements, closes the
/// connection and only then deletes what it wrote, and leaves any existing file untouched.
/// ```swift
/// var writer = try SQLiteStoreWriter(creating: out, model: model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class SQLiteStoreWriter: RecordWriter {
    /// The journal mode the finished store is left in (the one type ``SQLiteOptions`` holds).
    public typealias JournalMode = SQLiteOptions.JournalMode

    /// The model version the store is written for.
    public let model: ObjectModel
    /// The schema being written.
    public let schema: StoreSchema
    /// The destination.
    public private(set) var destination: URL

    /// The destination as the user named it, for messages.
    let displayPath: String
    private let journalMode: JournalMode
    /// Where the store is written.
    private let temporary: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:journalMode:style:identityMapBound:)``).
    private var lease: DestinationLease?
    let connection: DatabaseQueue
    private var inserters: [String: Inserter] = [:]
    /// The inserter of the last batch, whose join rows may still be pending.
    private var lastInserter: Inserter?
    var maxKeys: [String: Int64] = [:]  // root table → highest Z_PK
    /// External object ids and the references naming them, resolved set-wise in ``finish()``.
    let identities: ExternalIdentities
    private enum State { case open, finished, abandoned }
    private var state = State.open
    private let metadata: StoreMetadata
    /// What the writer let pass (derived attributes without triggers, values it has no column for).
    public private(set) var diagnostics: [Diagnostic] = []
    #if DEBUG
        /// Whether `DECANT_TEST_DROP_OBJECTS` made this writer drop its chunk already (debug builds only).
        var droppedForTesting = false
    #endif

    /// The objects the store took, per entity: rows SQLite inserted, counted as they went in.
    public var objectsStored: [String: Int]? { inserters.mapValues(\.stored) }
    /// Entity and attribute names already reported as unstored, so each is reported once.
    private var reportedUnstored: Set<String> = []
    /// `CREATE INDEX` statements of the non-unique indexes, run once the rows are in.
    private var deferredIndexes: [String] = []
    /// Hidden foreign keys of to-many relationships without inverse, staged in `temp.decant_hidden_keys`.
    fileprivate var hiddenKeys: [StoreSchema.ForeignKey] = []
    private var hiddenKeysStaged = false

    /// Starts a new store at `destination` for `model`, built beside it and renamed into place by ``finish()``.
    ///
    /// `style` picks the schema of a given Core Data release; the default is the current one.
    /// - Throws: `.cannotCreateOutput` when the folder is not writable; `.internalError` when SQLite refuses the
    ///   schema generated for the model.
    public convenience init(
        creating destination: URL, model: ObjectModel, journalMode: JournalMode = .wal, style: SchemaStyle = .current,
        identityMapBound: Int = 50_000
    ) throws {
        let lease = try DestinationLease(destination: destination, format: SQLiteFormat())
        try self.init(
            writingAt: lease.staging, model: model, journalMode: journalMode, style: style,
            identityMapBound: identityMapBound)
        self.lease = lease
        self.destination = destination
    }

    /// Starts a new store for `model` at `url`, where nothing is yet (a job's staging location): the writer writes
    /// there and only there.
    ///
    /// `style` picks the schema of a given Core Data release; the default is the current one. An older style
    /// reproduces the schema of a store that release wrote (for comparisons with old stores).
    ///
    /// Objects with external ids (a CSV key, a JSON or XML store id) get the next free key of their table; a
    /// reference to one of the first `identityMapBound` such ids is resolved at once, any other in ``finish()``,
    /// inside SQLite, with one statement per relationship (``ExternalIdentities``), so memory stays bounded.
    /// - Throws: `.cannotCreateOutput` when the folder is not writable; `.internalError` when SQLite refuses the
    ///   schema generated for the model (a Decant defect, or a model Core Data would refuse too).
    public init(
        writingAt destination: URL, model: ObjectModel, journalMode: JournalMode = .wal, style: SchemaStyle = .current,
        identityMapBound: Int = 50_000
    ) throws {
        self.identities = ExternalIdentities(memoryBound: identityMapBound)
        self.model = model
        self.destination = destination
        self.displayPath = destination.displayPath
        self.journalMode = journalMode
        self.schema = try StoreSchema(model: model, style: style)
        self.metadata = StoreMetadata.fresh(for: model, frameworkVersion: style.frameworkVersion)
        self.temporary = destination
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw DecantError(
                .cannotCreateOutput, "something is already at the store's location", at: Location(path: displayPath))
        }
        let connection: DatabaseQueue
        do {
            var configuration = GRDB.Configuration()
            configuration.label = "decant.writer"
            configuration.journalMode = .default
            // One transaction spans every write() call until finish() commits it.
            configuration.allowsUnsafeTransactions = true
            connection = try DatabaseQueue(path: destination.path, configuration: configuration)
            try connection.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "PRAGMA page_size = 4096")
                // The file is private until finish() renames it into place, and a failed run deletes it, so it is
                // built without a journal and with an exclusive lock; finish() sets the final journal mode.
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
                try db.execute(sql: "PRAGMA synchronous = OFF")
                try db.execute(sql: "PRAGMA cache_size = -8192")
                try db.execute(sql: "BEGIN IMMEDIATE")
            }
        } catch {
            Self.remove(destination)
            throw DecantError(
                .cannotCreateOutput, "cannot create a store here: \(DatabaseFailure.reason(of: error))",
                at: Location(path: destination.displayPath), underlyingError: error)
        }
        self.connection = connection
        do {
            try connection.writeWithoutTransaction { db in
                // Indexes that enforce nothing are built once the rows are in (``createDeferredIndexes(_:)``): one
                // sorted build costs far less than keeping them up to date row by row.
                let deferred = Set(schema.indexes.filter { !$0.isUnique }.map(\.createStatement))
                for statement in schema.createStatements {
                    if deferred.contains(statement) {
                        deferredIndexes.append(statement)
                        continue
                    }
                    do { try db.execute(sql: statement) } catch {
                        throw DecantError(
                            .internalError,
                            "SQLite refused the schema Decant generated for model \(model.versionName ?? "(unnamed)"): "
                                + "\(DatabaseFailure.reason(of: error)) in `\(statement)`",
                            at: Location(path: destination.displayPath), underlyingError: error)
                    }
                }
            }
        } catch {
            abandon()
            throw DatabaseFailure.wrap(error, "cannot create the store's schema", at: Location(path: displayPath))
        }
        for name in schema.derivedAttributeTriggers(for: model).unsupported {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            diagnostics.append(
                Diagnostic(
                    .unsupportedDerivation,
                    "derived attribute \(name) is copied as stored; Decant cannot create the trigger that keeps it "
                        + "up to date, so Core Data will recompute it only when the object changes",
                    at: Location(path: displayPath, entity: parts.first, keyPath: parts.last)))
        }
    }

    deinit {
        abandon()
    }

    public func write(_ batch: RecordBatch) throws {
        guard state == .open else {
            throw DecantError(.usage, "the store writer is already closed", at: Location(path: displayPath))
        }
        let name = batch.layout.entityName
        let location = Location(path: displayPath, entity: name)
        do {
            let inserter: Inserter
            if let known = inserters[name] {
                inserter = known
            } else {
                inserter = try Inserter(writer: self, layout: batch.layout)
                inserters[name] = inserter
            }
            noteUnstoredValues(in: batch, plan: inserter.plan)
            let previous = lastInserter
            lastInserter = inserter
            try connection.writeWithoutTransaction { db in
                if let previous, previous !== inserter { try previous.flushJoinRows(db) }
                try inserter.insert(batch, db: db)
            }
        } catch {
            throw DatabaseFailure.wrap(error, "cannot write objects", at: location)
        }
    }

    /// Reports, once per attribute, values the store has no column for.
    private func noteUnstoredValues(in batch: RecordBatch, plan: ColumnPlan) {
        for unstored in plan.unstored {
            let key = "\(plan.mapping.name).\(unstored.attribute.name)"
            guard !reportedUnstored.contains(key) else { continue }
            for row in 0..<batch.count where batch.cell(row: row, column: unstored.position).kind != .null {
                reportedUnstored.insert(key)
                diagnostics.append(
                    Diagnostic(
                        .unstoredProperty,
                        "values of \(unstored.attribute.type) attribute \(key) are not written: a Core Data SQLite "
                            + "store has no column for this type",
                        at: Location(
                            path: displayPath, entity: plan.mapping.name, object: "\(plan.mapping.name)/\(batch.id(at: row))",
                            keyPath: unstored.attribute.name)))
                break
            }
        }
    }

    /// Gives up the store: rolls back the open transaction, finalizes every prepared statement, closes the
    /// connection, and only then deletes the temporary files, so SQLite never finalizes a statement on a closed
    /// connection. Does nothing after ``finish()`` succeeded or a second time.
    public func abandon() {
        guard state == .open else { return }
        state = .abandoned
        try? connection.writeWithoutTransaction { db in
            if !db.isInsideTransaction { return }
            try db.execute(sql: "ROLLBACK")
        }
        inserters.removeAll()
        lastInserter = nil
        identities.close()
        try? connection.close()
        Self.remove(temporary)
    }

    /// Removes the store at `url` and its companion files (what a writer there wrote), ignoring what is not there.
    private static func remove(_ url: URL) {
        for file in [url] + StoreFiles(database: url).companions() { try? FileManager.default.removeItem(at: file) }
    }

    public func finish() throws {
        guard state == .open else { return }
        let location = Location(path: displayPath)
        do {
            try connection.writeWithoutTransaction { db in
                try lastInserter?.flushJoinRows(db)
                lastInserter = nil
                if !hiddenKeys.isEmpty { try createHiddenKeysTable(db) }
                try identities.resolve(
                    db, entityOfTable: { table in schema.entities.first { $0.tableName == table }?.name ?? table },
                    highestKey: { maxKeys[$0] ?? 0 }, noteKey: { noteKey($0, table: $1) })
                try applyHiddenKeys(db)
                try createDeferredIndexes(db)
                // Derived-attribute triggers go in after the rows, whose derived values were copied as stored.
                for statement in schema.derivedAttributeTriggers(for: model).statements { try db.execute(sql: statement) }
                for row in schema.primaryKeyRows {
                    let table = schema.entity(number: row.entityNumber)?.tableName ?? ""
                    let max = row.superNumber == 0 ? maxKeys[table] ?? 0 : 0
                    try db.execute(
                        sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                        arguments: [row.entityNumber, row.name, row.superNumber, max])
                }
                let plist = BinaryPropertyListWriter().write(.dictionary(metadata.plist))
                try db.execute(
                    sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                    arguments: [metadata.storeUUID, plist])
                if schema.style.hasModelCache {
                    let cache = try Deflate.deflate(ArchivedModelEncoder.encode(model))
                    try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [cache])
                }
                try db.execute(sql: "COMMIT")
                try db.execute(sql: "PRAGMA locking_mode = NORMAL")
                try db.execute(sql: "PRAGMA journal_mode = \(journalMode == .wal ? "WAL" : "DELETE")")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                if journalMode == .wal { try db.execute(sql: "PRAGMA main.wal_checkpoint(TRUNCATE)") }
            }
            inserters.removeAll()
            lastInserter = nil
            identities.close()
            try connection.close()
            // Closing checkpointed the log; a store whose data still sat in a -wal must not be moved without it.
            let log = StoreFiles(database: temporary).writeAheadLog.path
            if let size = try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int, size > 0 {
                throw DecantError(.ioError, "the store's write-ahead log was not checkpointed", at: location)
            }
            for companion in StoreFiles(database: temporary).companions() { try? FileManager.default.removeItem(at: companion) }
            state = .finished
            try lease?.commit()
        } catch {
            if state == .open {
                abandon()
            } else {
                Self.remove(temporary)
            }
            throw DatabaseFailure.wrap(error, "cannot complete the store", at: location)
        }
    }

    /// Runs `body` on the store being written with the database at `uri` attached read-only as `src`, for rows that
    /// go in with `INSERT … SELECT` (``InStoreMigration``); afterwards each table's highest `Z_PK` is noted for
    /// `Z_PRIMARYKEY`, as ``write(_:)`` does. SQLite attaches and detaches only outside a transaction, so the one the
    /// writer keeps open is committed around the call: the file is private until ``finish()``, and a failure
    /// abandons all of it (the writer is closed, its file removed: `src` stays attached to nothing).
    func withAttachedSource<T>(_ uri: String, _ body: (Database) throws -> T) throws -> T {
        guard state == .open else {
            throw DecantError(.usage, "the store writer is already closed", at: Location(path: displayPath))
        }
        do {
            return try attachingSource(uri, body)
        } catch {
            abandon()
            throw error
        }
    }

    private func attachingSource<T>(_ uri: String, _ body: (Database) throws -> T) throws -> T {
        try connection.writeWithoutTransaction { db in
            try lastInserter?.flushJoinRows(db)
            lastInserter = nil
            try db.execute(sql: "COMMIT")
            // The source is attached in the normal locking mode: the writer's exclusive mode would take (and, with a
            // write-ahead log, need) an exclusive lock on it, which the reader's connection keeps from it.
            try db.execute(sql: "PRAGMA locking_mode = NORMAL")
            try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [uri])
            try db.execute(sql: "PRAGMA main.locking_mode = EXCLUSIVE")
            try db.execute(sql: "BEGIN IMMEDIATE")
            let result = try body(db)
            try db.execute(sql: "COMMIT")
            try db.execute(sql: "DETACH DATABASE src")
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "BEGIN IMMEDIATE")
            for table in schema.tables {
                if let max = try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM \(table.name)") {
                    noteKey(max, table: table.name)
                }
            }
            return result
        }
    }

    /// Creates the non-unique indexes left out while rows went in (once; ``finish()`` calls it, and a caller that
    /// queries the rows through them first may call it earlier).
    func createDeferredIndexes(_ db: Database) throws {
        for statement in deferredIndexes { try db.execute(sql: statement) }
        deferredIndexes = []
    }

    /// Registers a key whose values are staged until finish(); returns its id.
    func registerStagedKey(_ key: StoreSchema.ForeignKey) -> Int {
        hiddenKeys.append(key)
        return hiddenKeys.count - 1
    }

    /// Stages one link of a staged key: `member`'s key column will hold `owner` (and its entity, and the order).
    func stageHiddenKey(
        id: Int, owner: Int64, ownerEntity: Int64, member: Int64, position: Int, db: Database
    ) throws {
        try createHiddenKeysTable(db)
        try db.cachedStatement(sql: "INSERT INTO temp.decant_hidden_keys VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [id, owner, ownerEntity, member, position])
    }

    private func createHiddenKeysTable(_ db: Database) throws {
        guard !hiddenKeysStaged else { return }
        try db.execute(
            sql: "CREATE TEMP TABLE decant_hidden_keys "
                + "(key INTEGER, owner INTEGER, owner_entity INTEGER, member INTEGER, position INTEGER)")
        hiddenKeysStaged = true
    }

    private func applyHiddenKeys(_ db: Database) throws {
        guard hiddenKeysStaged else { return }
        for (id, key) in hiddenKeys.enumerated() {
            let order = key.orderColumn.map { ", \($0) = s.position" } ?? ""
            let entity = key.entityColumn.map { ", \($0) = s.owner_entity" } ?? ""
            try db.execute(
                sql: "UPDATE \(key.table) SET \(key.column) = s.owner\(entity)\(order) FROM "
                    + "(SELECT owner, owner_entity, member, position FROM temp.decant_hidden_keys WHERE key = \(id)) AS s "
                    + "WHERE \(key.table).Z_PK = s.member")
        }
        try db.execute(sql: "DROP TABLE temp.decant_hidden_keys")
    }

    /// Records the highest primary key written to `table`, for its root's `Z_MAX`.
    func noteKey(_ key: Int64, table: String) {
        if key > maxKeys[table] ?? 0 { maxKeys[table] = key }
    }
}

/// SQLite's SQLITE_TRANSIENT destructor: SQLite copies the bound bytes before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

@available(*, unavailable)
extension SQLiteStoreWriter: Sendable {}
