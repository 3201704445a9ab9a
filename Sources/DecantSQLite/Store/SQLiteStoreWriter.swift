public import DecantCore
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
    private let displayPath: String
    private let journalMode: JournalMode
    /// Where the store is written.
    private let temporary: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:journalMode:style:identityMapBound:)``).
    private var lease: DestinationLease?
    private let connection: DatabaseQueue
    private var inserters: [String: Inserter] = [:]
    /// The inserter of the last batch, whose join rows may still be pending.
    private var lastInserter: Inserter?
    private var maxKeys: [String: Int64] = [:]  // root table → highest Z_PK
    /// External object ids and the references naming them, resolved set-wise in ``finish()``.
    private let identities: ExternalIdentities
    private enum State { case open, finished, abandoned }
    private var state = State.open
    private let metadata: StoreMetadata
    /// What the writer let pass (derived attributes without triggers, values it has no column for).
    public private(set) var diagnostics: [Diagnostic] = []
    #if DEBUG
        /// Whether `DECANT_TEST_DROP_OBJECTS` made this writer drop its chunk already (debug builds only).
        fileprivate var droppedForTesting = false
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
    fileprivate func registerStagedKey(_ key: StoreSchema.ForeignKey) -> Int {
        hiddenKeys.append(key)
        return hiddenKeys.count - 1
    }

    /// Stages one link of a staged key: `member`'s key column will hold `owner` (and its entity, and the order).
    fileprivate func stageHiddenKey(
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
    fileprivate func noteKey(_ key: Int64, table: String) {
        if key > maxKeys[table] ?? 0 { maxKeys[table] = key }
    }

    // MARK: Inserting one entity

    /// The prepared statements and column plan for one entity.
    private final class Inserter {
        #if DEBUG
            /// `DECANT_TEST_DROP_OBJECTS` set: the writer drops one chunk of objects (debug builds only), so that
            /// tests can see the run that loses objects end with exit 70.
            static let dropsObjectsForTesting = ProcessInfo.processInfo.environment["DECANT_TEST_DROP_OBJECTS"] != nil
        #endif
        /// An attribute cell bound to an INSERT parameter.
        struct AttributeBinding {
            var cell: Int
            var parameter: Int32
            var asReal: Bool
            var external: Bool
        }

        /// A composite cell (``CompositeValueCoding`` bytes) bound to its elements' parameters (12.5).
        struct CompositeBinding {
            var cell: Int
            var elements: [(name: String, type: AttributeType, parameter: Int32)]
        }

        /// A to-one cell bound to its key parameter and, when the destination has sub-entities, its entity parameter.
        struct ToOneBinding {
            var cell: Int
            var parameter: Int32
            var entityParameter: Int32?
            /// Where a reference by an external id not known yet is staged (``ExternalIdentities``).
            var target: Int
        }

        /// A to-many cell whose members go to a join table (its rows through ``links``, at this index) or a staged
        /// hidden key; `target` stages members by an external id not known yet (``ExternalIdentities``).
        enum MemberTarget {
            case joinTable(links: Int, target: Int)
            case hiddenKey(id: Int, target: Int)
        }

        /// The rows of one join table whose keys are known, inserted ``chunk`` at a time (one step for many rows
        /// costs far less than a step per link, which the join file's million links paid): `values` holds the
        /// pending rows' parameters, owner, member and (when ordered) position, until ``JoinRows/flush(_:)``.
        final class JoinRows {
            let insertOne: Statement
            let insertChunk: Statement
            let width: Int
            let chunk: Int
            var values: [Int64] = []

            init(_ db: Database, link: StoreSchema.JoinLink) throws {
                let columns = [link.sourceColumn, link.destinationColumn] + (link.orderColumn.map { [$0] } ?? [])
                width = columns.count
                chunk = 64
                let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
                // Both sides list the pair; the second insert only adds its own order column.
                func sql(_ rows: Int) -> String {
                    let values = Array(repeating: tuple, count: rows).joined(separator: ", ")
                    if let order = link.orderColumn {
                        return "INSERT INTO \(link.table) (\(columns.joined(separator: ", "))) VALUES \(values) "
                            + "ON CONFLICT DO UPDATE SET \(order) = excluded.\(order)"
                    }
                    return "INSERT OR IGNORE INTO \(link.table) (\(columns.joined(separator: ", "))) VALUES \(values)"
                }
                insertOne = try db.makeStatement(sql: sql(1))
                insertChunk = try db.makeStatement(sql: sql(chunk))
            }

            /// Adds a row; a full chunk goes in at once.
            func append(owner: Int64, member: Int64, position: Int, db: Database) throws {
                values.append(owner)
                values.append(member)
                if width == 3 { values.append(Int64(position)) }
                if values.count == chunk * width { try flush(db) }
            }

            /// Inserts the pending rows, in the order they came (a whole chunk at once, the rest one by one).
            func flush(_ db: Database) throws {
                guard !values.isEmpty else { return }
                defer { values.removeAll(keepingCapacity: true) }
                let rows = values.count / width
                let handle = rows == chunk ? insertChunk.sqliteStatement : insertOne.sqliteStatement
                var index = 0
                while index < values.count {
                    let count = rows == chunk ? chunk * width : width
                    for parameter in 0..<count {
                        sqlite3_bind_int64(handle, Int32(parameter + 1), values[index + parameter])
                    }
                    index += count
                    let code = sqlite3_step(handle)
                    sqlite3_reset(handle)
                    guard code == SQLITE_DONE else {
                        throw DatabaseError(
                            resultCode: ResultCode(rawValue: code),
                            message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                }
            }
        }

        let plan: ColumnPlan
        let entityNumber: Int64
        let table: String
        /// The scope of this table's external ids.
        let scope: Int64
        /// INSERT of one row, and of ``chunk`` rows at once (one step for many rows is much cheaper).
        let insertOne: Statement
        let insertChunk: Statement
        let chunk: Int
        let parameterCount: Int32
        var attributeBindings: [AttributeBinding] = []
        var compositeBindings: [CompositeBinding] = []
        var toOneBindings: [ToOneBinding] = []
        var memberTargets: [(cell: Int, target: MemberTarget)] = []
        /// Per join table this entity's to-many relationships fill: its pending rows.
        var joinRows: [JoinRows] = []
        unowned let writer: SQLiteStoreWriter
        let entityNumbers: [String: Int]
        /// Rows of this entity the store took (SQLite's count of changes, step by step): what the writer reports as
        /// stored (``SQLiteStoreWriter/objectsStored``), checked against the objects it was given.
        var stored = 0
        let entityTables: [String: String]

        init(writer: SQLiteStoreWriter, layout: RecordLayout) throws {
            self.writer = writer
            let plan = try ColumnPlan(layout: layout, schema: writer.schema, path: writer.displayPath)
            self.plan = plan
            let mapping = plan.mapping
            entityNumber = Int64(mapping.number)
            table = mapping.tableName
            scope = writer.identities.scope(of: mapping.tableName)
            entityNumbers = Dictionary(writer.schema.entities.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
            entityTables = Dictionary(writer.schema.entities.map { ($0.name, $0.tableName) }, uniquingKeysWith: { a, _ in a })
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
            for stored in plan.attributes {
                columns.append(stored.column)
                attributeBindings.append(
                    AttributeBinding(
                        cell: stored.position, parameter: Int32(columns.count),
                        asReal: [.double, .float, .date].contains(stored.attribute.type),
                        external: stored.attribute.allowsExternalBinaryDataStorage))
            }
            for composite in plan.composites {
                var elements: [(name: String, type: AttributeType, parameter: Int32)] = []
                for element in composite.elements {
                    columns.append(element.column)
                    elements.append((element.element.name, element.element.type, Int32(columns.count)))
                }
                compositeBindings.append(CompositeBinding(cell: composite.position, elements: elements))
            }
            let attributeCount = layout.attributes.count
            var targets: [(cell: Int, target: MemberTarget)] = []
            var toOnes: [ToOneBinding] = []
            var links: [JoinRows] = []
            try writer.connection.inDatabase { db in
                for relationship in plan.relationships {
                    let cell = attributeCount + relationship.position
                    switch relationship.storage {
                    case .toOne(let key)?:
                        columns.append(key.column)
                        let parameter = Int32(columns.count)
                        var entityParameter: Int32?
                        if let entityColumn = key.entityColumn {
                            columns.append(entityColumn)
                            entityParameter = Int32(columns.count)
                        }
                        let target = writer.identities.register(.toOne(table: mapping.tableName, column: key.column))
                        toOnes.append(
                            ToOneBinding(
                                cell: cell, parameter: parameter, entityParameter: entityParameter, target: target))
                    case .manyToMany(let link)?:
                        links.append(try JoinRows(db, link: link))
                        targets.append(
                            (
                                cell,
                                .joinTable(links: links.count - 1, target: writer.identities.register(.joinTable(link)))
                            ))
                    case .toManyThroughInverse(let key)? where key.orderColumn != nil:
                        // The order of an ordered one-to-many lives on the members, which may not be written yet:
                        // staged like a hidden key and applied in finish().
                        let id = writer.registerStagedKey(key)
                        targets.append((cell, .hiddenKey(id: id, target: writer.identities.register(.hiddenKey(id: id)))))
                    case .toManyThroughHiddenKey(let key)?:
                        // The members may not be written yet: stage the links, apply them in finish().
                        let id = writer.registerStagedKey(key)
                        targets.append((cell, .hiddenKey(id: id, target: writer.identities.register(.hiddenKey(id: id)))))
                    default:
                        break
                    }
                }
            }
            toOneBindings = toOnes
            memberTargets = targets
            joinRows = links
            let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            let prefix = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
            let chunk = max(1, min(64, 30_000 / columns.count))
            self.chunk = chunk
            self.parameterCount = Int32(columns.count)
            (insertOne, insertChunk) = try writer.connection.inDatabase { db in
                (
                    try db.makeStatement(sql: prefix + tuple),
                    try db.makeStatement(sql: prefix + Array(repeating: tuple, count: chunk).joined(separator: ", "))
                )
            }
        }

        /// Inserts the join rows still pending (before another entity's rows, and before the store is completed).
        func flushJoinRows(_ db: Database) throws {
            for rows in joinRows { try rows.flush(db) }
        }

        func insert(_ batch: RecordBatch, db: Database) throws {
            // Hot path: statements were prepared once through GRDB; binding and stepping use the SQLite handles
            // directly, rows go in `chunk` at a time, and text and bytes are bound straight from the batch's buffer
            // without a copy (no String, no Data): SQLite reads them during the step, and the statement is reset
            // right after it.
            let width = batch.width
            var maxKey: Int64 = 0
            // Keys for external ids are taken from the table's counter, kept in a local while the batch goes in.
            var lastKey = writer.maxKeys[table] ?? 0
            defer { writer.noteKey(lastKey, table: table) }
            var keys = [Int64](repeating: 0, count: chunk)  // the current chunk's primary keys
            defer {
                sqlite3_clear_bindings(insertOne.sqliteStatement)
                sqlite3_clear_bindings(insertChunk.sqliteStatement)
            }
            // Per entity index of the batch: the destination's scope of external ids, and its entity number.
            let scopes = batch.entityNames.map { writer.identities.scope(of: entityTables[$0] ?? "") }
            let numbers = batch.entityNames.map { Int64(entityNumbers[$0] ?? 0) }
            let references = References(scopes: scopes, numbers: numbers)
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.bytes.withUnsafeBytes { arena in
                    var row = 0
                    while row < batch.count {
                        let count = batch.count - row >= chunk ? chunk : 1
                        let handle = count == 1 ? insertOne.sqliteStatement : insertChunk.sqliteStatement
                        for offset in 0..<count {
                            let first = Int32(offset) * parameterCount
                            let identity = batch.identities[row + offset]
                            let key: Int64
                            if identity.kind == .integer {
                                key = identity.integer
                            } else {
                                lastKey += 1
                                key = lastKey
                                if !batch.isAnonymous(at: row + offset) {
                                    try writer.identities.stageObject(
                                        name: Self.text(of: identity, in: arena), scope: scope, key: key, db: db)
                                }
                            }
                            keys[offset] = key
                            maxKey = max(maxKey, key)
                            sqlite3_bind_int64(handle, first + 1, key)
                            sqlite3_bind_int64(handle, first + 2, entityNumber)
                            sqlite3_bind_int64(handle, first + 3, 1)
                            let base = (row + offset) * width
                            for binding in attributeBindings {
                                bind(cells[base + binding.cell], binding, first: first, to: handle, arena: arena)
                            }
                            for binding in compositeBindings {
                                bindComposite(cells[base + binding.cell], binding, first: first, to: handle, arena: arena)
                            }
                            for binding in toOneBindings {
                                try bindReference(
                                    cells[base + binding.cell], binding: binding, owner: key, first: first,
                                    handle: handle, arena: arena, references: references, db: db)
                            }
                        }
                        #if DEBUG
                            // Fault injection for the tests of the check that catches it (docs/TESTING.md): one
                            // chunk of objects is bound and never stepped, as a writer's defect would drop them.
                            if Self.dropsObjectsForTesting, !writer.droppedForTesting {
                                writer.droppedForTesting = true
                                sqlite3_reset(handle)
                                row += count
                                continue
                            }
                        #endif
                        let code = sqlite3_step(handle)
                        stored += Int(sqlite3_changes(db.sqliteConnection))
                        sqlite3_reset(handle)
                        guard code == SQLITE_DONE else {
                            let objects = count == 1
                                ? "\(batch.layout.entityName)/\(batch.id(at: row))"
                                : "\(batch.layout.entityName)/\(batch.id(at: row))…\(batch.id(at: row + count - 1))"
                            throw DecantError(
                                .malformedInput, "cannot insert: \(String(cString: sqlite3_errmsg(db.sqliteConnection)))",
                                at: Location(path: writer.displayPath, entity: batch.layout.entityName, object: objects))
                        }
                        if !memberTargets.isEmpty {
                            for offset in 0..<count {
                                try writeMembers(
                                    row: row + offset, key: keys[offset], batch: batch, arena: arena,
                                    references: references, db: db)
                            }
                        }
                        row += count
                    }
                }
            }
            writer.noteKey(maxKey, table: table)
        }

        private func bind(
            _ cell: RecordBatch.Cell, _ binding: AttributeBinding, first: Int32, to handle: OpaquePointer,
            arena: UnsafeRawBufferPointer
        ) {
            let parameter = first + binding.parameter
            switch cell.kind {
            case .integer:
                if binding.asReal {
                    sqlite3_bind_double(handle, parameter, Double(cell.integer))
                } else {
                    sqlite3_bind_int64(handle, parameter, cell.integer)
                }
            case .real:
                sqlite3_bind_double(handle, parameter, Double(bitPattern: UInt64(bitPattern: cell.integer)))
            case .text:
                let start = arena.baseAddress.map { $0 + Int(cell.integer) }
                sqlite3_bind_text(handle, parameter, start?.assumingMemoryBound(to: CChar.self), cell.length, nil)
            case .blob where binding.external:
                // Stored inline with the 0x01 tag, as Core Data does for values it keeps in the database.
                let bytes = UnsafeRawBufferPointer(
                    rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
                let tagged = ExternalBinaryValue.inlineValue(bytes)
                sqlite3_bind_blob(handle, parameter, tagged, Int32(tagged.count), sqliteTransient)
            case .externalDataReference where binding.external:
                // A missing external file kept as a reference (--missing-external-data keep): the same reference.
                let name = String(
                    decoding: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)], as: UTF8.self)
                let tagged = ExternalBinaryValue.fileValue(name)
                sqlite3_bind_blob(handle, parameter, tagged, Int32(tagged.count), sqliteTransient)
            case .blob:
                let start = arena.baseAddress.map { $0 + Int(cell.integer) }
                sqlite3_bind_blob(handle, parameter, start, cell.length, nil)
            default:
                sqlite3_bind_null(handle, parameter)
            }
        }

        /// Binds a composite's elements to their columns: each element's value from the cell's dictionary, null
        /// for an element it lacks, and every element null for a nil composite.
        private func bindComposite(
            _ cell: RecordBatch.Cell, _ binding: CompositeBinding, first: Int32, to handle: OpaquePointer,
            arena: UnsafeRawBufferPointer
        ) {
            var elements: [String: Value] = [:]
            if cell.kind == .blob {
                let bytes = UnsafeRawBufferPointer(rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
                elements = CompositeValueCoding.decode(bytes) ?? [:]
            }
            for element in binding.elements {
                let parameter = first + element.parameter
                let isReal = [.double, .float, .date].contains(element.type)
                switch elements[element.name] ?? .null {
                case .null, .composite:
                    sqlite3_bind_null(handle, parameter)
                case .integer(let integer):
                    if isReal { sqlite3_bind_double(handle, parameter, Double(integer)) } else {
                        sqlite3_bind_int64(handle, parameter, integer)
                    }
                case .bool(let flag):
                    sqlite3_bind_int64(handle, parameter, flag ? 1 : 0)
                case .double(let real):
                    if !isReal, real.rounded() == real, abs(real) < 9.2e18 {
                        sqlite3_bind_int64(handle, parameter, Int64(real))
                    } else {
                        sqlite3_bind_double(handle, parameter, real)
                    }
                case .decimal(let decimal):
                    sqlite3_bind_double(handle, parameter, NSDecimalNumber(decimal: decimal).doubleValue)
                case .date(let date):
                    sqlite3_bind_double(handle, parameter, date.timeIntervalSinceReferenceDate)
                case .string(let text), .uri(let text), .externalDataReference(let text):
                    sqlite3_bind_text(handle, parameter, text, -1, sqliteTransient)
                case .data(let data), .transformable(let data):
                    if data.isEmpty {
                        sqlite3_bind_zeroblob(handle, parameter, 0)
                    } else {
                        data.withUnsafeBytes { _ = sqlite3_bind_blob(handle, parameter, $0.baseAddress, Int32($0.count), sqliteTransient) }
                    }
                case .uuid(let uuid):
                    withUnsafeBytes(of: uuid.uuid) {
                        _ = sqlite3_bind_blob(handle, parameter, $0.baseAddress, 16, sqliteTransient)
                    }
                }
            }
        }

        /// Per entity index of a batch: the scope of its external ids and its entity number.
        struct References {
            var scopes: [Int64]
            var numbers: [Int64]
        }

        /// The UTF-8 bytes of a text cell (an external id).
        private static func text(of cell: RecordBatch.Cell, in arena: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: arena[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)])
        }

        /// Where a reference cell points: a key, or an external id to stage (with its scope); and the destination's
        /// entity number. Nil for a cell that holds no reference.
        private func destination(
            of cell: RecordBatch.Cell, arena: UnsafeRawBufferPointer, references: References
        ) -> (key: Int64?, name: UnsafeRawBufferPointer, scope: Int64, entity: Int64)? {
            switch cell.kind {
            case .reference:
                return (cell.integer, UnsafeRawBufferPointer(start: nil, count: 0), 0, references.numbers[Int(cell.length)])
            case .externalReference:
                let name = Self.text(of: cell, in: arena)
                let scope = references.scopes[Int(cell.entity)]
                return (writer.identities.knownKey(name: name, scope: scope), name, scope, references.numbers[Int(cell.entity)])
            default:
                return nil
            }
        }

        private func bindReference(
            _ cell: RecordBatch.Cell, binding: ToOneBinding, owner: Int64, first: Int32, handle: OpaquePointer,
            arena: UnsafeRawBufferPointer, references: References, db: Database
        ) throws {
            guard let destination = destination(of: cell, arena: arena, references: references) else {
                sqlite3_bind_null(handle, first + binding.parameter)
                if let entityParameter = binding.entityParameter { sqlite3_bind_null(handle, first + entityParameter) }
                return
            }
            if let key = destination.key {
                sqlite3_bind_int64(handle, first + binding.parameter, key)
            } else {
                // Filled in finish(), once every id is known.
                sqlite3_bind_null(handle, first + binding.parameter)
                try writer.identities.stageReference(
                    target: binding.target, owner: owner, name: destination.name, scope: destination.scope, entity: 0,
                    position: 0, db: db)
            }
            if let entityParameter = binding.entityParameter {
                sqlite3_bind_int64(handle, first + entityParameter, destination.entity)
            }
        }

        private func writeMembers(
            row: Int, key: Int64, batch: RecordBatch, arena: UnsafeRawBufferPointer, references: References,
            db: Database
        ) throws {
            for (cellIndex, target) in memberTargets {
                let cell = batch.cell(row: row, column: cellIndex)
                guard cell.kind == .referenceList else { continue }
                let members = batch.references[Int(cell.integer)..<Int(cell.integer) + Int(cell.length)]
                for (position, member) in members.enumerated() {
                    guard let destination = destination(of: member, arena: arena, references: references) else {
                        continue
                    }
                    guard let memberKey = destination.key else {
                        let staged: Int
                        switch target {
                        case .joinTable(_, let target): staged = target
                        case .hiddenKey(_, let target): staged = target
                        }
                        try writer.identities.stageReference(
                            target: staged, owner: key, name: destination.name, scope: destination.scope,
                            entity: entityNumber, position: Int64(position + 1), db: db)
                        continue
                    }
                    switch target {
                    case .joinTable(let links, _):
                        try joinRows[links].append(owner: key, member: memberKey, position: position + 1, db: db)
                    case .hiddenKey(let id, _):
                        try writer.stageHiddenKey(
                            id: id, owner: key, ownerEntity: entityNumber, member: memberKey, position: position + 1, db: db)
                    }
                }
            }
        }
    }
}

/// SQLite's SQLITE_TRANSIENT destructor: SQLite copies the bound bytes before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

@available(*, unavailable)
extension SQLiteStoreWriter: Sendable {}
