public import DecantCore
import Foundation
import GRDB
import Synchronization

/// Runs a migration plan inside SQLite, as Core Data's own lightweight migration does: the source store is attached
/// to the new one and every destination entity's rows go in with one `INSERT … SELECT`, the hops composed into one
/// expression per column. It produces the same store as the record stream (``MigrationTransform``) would, for the
/// plans it takes, and is several times faster.
///
/// It takes a plan when every hop only keeps, renames, widens, defaults or drops columns and entities and keeps its
/// to-one and many-to-many relationships: each source entity feeds one destination entity that keeps its objects' keys
/// (or none: its objects are dropped), every value is `$source.attribute`, a constant, or `$source.attribute ??
/// constant`, and nothing is filtered, removed by a mapping file (delete rules), made by a policy, stored outside the
/// database, derived, checked by a string pattern, an ordered one-to-many, an inverse-less to-many or a many-to-many
/// that is its own inverse or links hierarchies of entities, and no mapping sets a to-many whose inverse to-one a
/// mapping leaves nil (the record stream warns that those links are lost). A join table's rows go in with one
/// `INSERT … SELECT` from the source's join table (whatever the two versions name it and its columns), in the order
/// and with the positions the record stream gives them. Anything else runs in the record stream, and
/// ``prepare(plan:reader:functions:)`` says why.
///
/// The destination model's rules are checked with SQL on the rows written, before the store is finished: when any
/// row may break one (or holds a value of an unexpected type), ``run(into:progress:)`` gives up and the caller runs
/// the record stream, whose validator names the object, property and rule exactly (and lists rejects).
///
/// It is ``SQLiteFormat``'s in-store engine (``InStoreMigratingFormat``): a migration from a SQLite store into a SQLite
/// store asks it first.
///
/// ```swift
/// if case .ready(let migration) = try InStoreMigration.prepare(plan: plan, reader: reader),
///     case .migrated(let counts) = try migration.run(into: writer)
/// {
///     try writer.finish()
/// }
/// ```
public struct InStoreMigration: Sendable {
    /// Whether a plan runs inside the store.
    public enum Preparation: Sendable {
        /// It does.
        case ready(InStoreMigration)
        /// It needs the record stream, for this reason.
        case needsRecordStream(StreamReason)
    }

    /// What a run did.
    public enum Outcome: Sendable {
        /// The rows are in the writer's store; it is ready to finish.
        case migrated(Counts)
        /// A row may break a rule (or the source store does not fit its schema): the writer's store must be abandoned
        /// and the migration run in the record stream, for this reason.
        case needsRecordStream(StreamReason)
    }

    /// The counts of a run, as the record stream reports them.
    public struct Counts: Sendable, Hashable {
        /// Objects read per source entity.
        public var read: [String: Int]
        /// Objects written per destination entity.
        public var written: [String: Int]
        /// Per hop, per entity: read and written.
        public var ledgers: [MigrationLedger]
        /// Per source table a statement took whole: its rows whose `Z_ENT` is not its entity's (counted as they went
        /// in, read as that entity's objects), and the first keys of them.
        public var strayRows: [String: StrayRows] = [:]
    }

    /// The rows of a source table whose `Z_ENT` is not its entity's number.
    public struct StrayRows: Sendable, Hashable {
        /// How many.
        public var count = 0
        /// The first five of their keys, in key order (as many as the warning names).
        public var keys: [Int64] = []
    }

    /// The source tables whose stray rows a run counts as their rows go in (each taken whole by one statement); the
    /// others are the reader's to survey.
    public var tablesCountingStrayRows: Set<String> {
        Set(inserts.filter(\.takesEveryRow).map(\.sourceTable))
    }

    /// An attribute's value in the rows of some version, as SQL over the attached source table `s`.
    enum ColumnValue {
        /// A source column (`s.ZTITLE`).
        case column(String)
        /// `COALESCE` of a value and a constant.
        case coalesce(String)
        /// The same in every row (`NULL` included).
        case constant(String)

        var sql: String {
            switch self {
            case .column(let sql), .coalesce(let sql), .constant(let sql): sql
            }
        }

        var isConstant: Bool {
            if case .constant = self { true } else { false }
        }

        var isCoalesce: Bool {
            if case .coalesce = self { true } else { false }
        }
    }

    /// The rows one entity of some version holds, as SQL over the attached source table `s`.
    struct Rows {
        /// The source entity they come from.
        var origin: String
        var sourceTable: String
        var sourceNumber: Int
        /// The condition on `s` that picks these rows from the source table (nil: every row, the entity having the
        /// table to itself: ``SQLiteStoreReader/ownRowsCondition(_:alias:)``).
        var sourceCondition: String?
        /// Attribute name → its value (none for an attribute the source table has no column for).
        var attributes: [String: ColumnValue]
        /// To-one relationship name → the SQL expression of the key and the entity (of this version) it points at;
        /// a to-one without an entry is empty in every row.
        var toOnes: [String: (sql: String, target: String)]
        /// Relationships whose members SQL does not carry here, and why.
        var unreadable: [String: String] = [:]
        /// To-many relationship name → the source join table rows that hold its members.
        var joins: [String: JoinSide] = [:]
        /// To-many relationships empty in every row (no mapping sets them).
        var emptyToManys: Set<String> = []
        /// To-many relationships whose members no join table holds as they are, and why (a whole sentence).
        var toManyObstacles: [String: String] = [:]
    }

    /// Where a many-to-many's members come from: the rows of the source store's join table, read from one side.
    struct JoinSide: Hashable {
        /// The source join table.
        var table: String
        /// Its column holding the owner's key.
        var owner: String
        /// Its column holding the member's key.
        var member: String
        /// Its column ordering the owner's members, when the source relationship is ordered.
        var order: String?
        /// The entity (of the version at hand) the members are objects of.
        var pointee: String
    }

    /// One `INSERT … SELECT`: the rows of one destination entity, from one source entity.
    struct Insert: Sendable {
        var entity: String
        var origin: String
        var sourceTable: String
        /// Whether it takes every row of its source table (no condition on `Z_ENT`).
        var takesEveryRow: Bool
        var sql: String
    }

    /// A query that returns a row when written rows may break a rule: its first column completes `reason`.
    struct Check: Sendable, Hashable {
        var sql: String
        var reason: String
    }

    /// The objects of a source entity that a hop drops (no mapping takes them): counted, not written.
    struct Dropped: Sendable {
        var origin: String
        var table: String
        /// The condition on `s` that picks its rows (nil: the whole table).
        var condition: String?
    }

    /// One hop's entities as the ledger names them: those its objects moved to and those dropped, each with the
    /// source entity its objects came from.
    struct HopEntities: Sendable {
        var name: String
        var moved: [(entity: String, origin: String)]
        var dropped: [(entity: String, origin: String)]
    }

    private let inserts: [Insert]
    /// One `INSERT … SELECT` per join table with rows, after the objects' rows.
    private let joinInserts: [String]
    private let dropped: [Dropped]
    private let checks: [Check]
    /// Every table of the source model, for proving that each of its rows was taken.
    private let sourceTables: [String]
    private let hops: [HopEntities]
    private let sourceURI: String

    /// Whether `plan` runs inside the store `reader` reads, and if so, its statements.
    /// - Throws: `.ioError` when the disk or the file system fails while the store is surveyed (a store that does not
    ///   fit is a reason for the record stream, not an error).
    public static func prepare(
        plan: MigrationPlan, reader: SQLiteStoreReader, functions: ValueExpressionFunctions = ValueExpressionFunctions()
    ) throws -> Preparation {
        do {
            let builder = try Builder(plan: plan, reader: reader, functions: functions)
            return .ready(try builder.build())
        } catch let obstacle as Obstacle {
            return .needsRecordStream(.planNotSupported(obstacle.reason))
        } catch {
            if let failure = Self.diskFailure(error, "cannot survey the store") { throw failure }
            return .needsRecordStream(.storeDoesNotFit("the store could not be surveyed: \(error)"))
        }
    }

    /// Writes every destination row into `writer`'s store and checks them; `progress` is called after each entity
    /// with the number of objects written so far.
    ///
    /// A source the statements do not fit (a damaged one, one whose tables do not match its model) gives
    /// `.needsRecordStream` with SQLite's reason, as a row that may break a rule does: the writer is then abandoned
    /// (its file removed), and the record stream, run next, reports the problem precisely, located at the object it
    /// concerns. A failure of the disk or the file system (a full disk, an I/O error, a file that cannot be opened) is
    /// not the plan's or the store's: it is thrown as `.ioError`, and the writer abandoned.
    public func run(
        into writer: SQLiteStoreWriter, progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Outcome {
        do {
            let strays = StrayTally()
            return try writer.withAttachedSource(sourceURI) { db -> Outcome in
                let function = strays.function
                db.add(function: function)
                defer { db.remove(function: function) }
                var counts: [String: Int] = [:]
                var taken: [String: Int] = [:]
                var written = 0
                for insert in inserts {
                    try db.execute(sql: insert.sql)
                    counts[insert.origin] = db.changesCount
                    taken[insert.sourceTable, default: 0] += db.changesCount
                    written += db.changesCount
                    progress?(insert.entity, written)
                }
                for sql in joinInserts { try db.execute(sql: sql) }
                for entity in dropped {
                    let count = try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM src.\(entity.table) AS s WHERE \(entity.condition ?? "1")") ?? 0
                    counts[entity.origin] = count
                    taken[entity.table, default: 0] += count
                }
                // The checks read foreign keys through their indexes.
                try writer.createDeferredIndexes(db)
                // Every source row belongs to an entity that was taken (the reader proves the same). A table one
                // statement took whole, and nothing else took from, was counted by that statement, in this
                // transaction: counting it again (a pass over its pages) proves nothing more.
                let takes = Dictionary(grouping: inserts.map(\.sourceTable) + dropped.map(\.table), by: { $0 })
                let takenWhole = Set(
                    inserts.filter { $0.takesEveryRow && takes[$0.sourceTable]?.count == 1 }.map(\.sourceTable))
                for table in sourceTables where !takenWhole.contains(table) {
                    let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM src.\(table)") ?? 0
                    guard rows == taken[table, default: 0] else {
                        throw HandOver(reason: .storeDoesNotFit("\(table) has rows whose Z_ENT names none of its entities"))
                    }
                }
                for check in checks {
                    if let found = try DatabaseValue.fetchOne(db, sql: check.sql) {
                        throw HandOver(reason: .mayBreakRule(check.reason + found.description))
                    }
                }
                var result = tally(counts)
                result.strayRows = strays.rows
                return .migrated(result)
            }
        } catch let handOver as HandOver {
            // Thrown, so that the writer is abandoned at once, without finishing the attached run first.
            return .needsRecordStream(handOver.reason)
        } catch {
            // The disk's or the file system's failure stops the migration: the record stream would meet it too.
            if let failure = Self.diskFailure(error, "SQLite could not run the migration in the store") { throw failure }
            return .needsRecordStream(
                .storeDoesNotFit("SQLite could not run the migration in the store: \(DatabaseFailure.reason(of: error))"))
        }
    }

    /// The SQL function a statement taking a whole table calls for each row whose `Z_ENT` is not its entity's:
    /// `(table, Z_PK, number)`, returning the number written.
    static let strayTally = "decant_stray_row"

    /// The stray rows told to ``strayTally`` during one run, per source table.
    private final class StrayTally: Sendable {
        private let tallied = Mutex<[String: StrayRows]>([:])

        var rows: [String: StrayRows] { tallied.withLock { $0 } }

        var function: DatabaseFunction {
            DatabaseFunction(InStoreMigration.strayTally, argumentCount: 3, pure: false) { [self] values in
                guard values.count == 3, let table = String.fromDatabaseValue(values[0]),
                    let key = Int64.fromDatabaseValue(values[1])
                else { return nil }
                tallied.withLock { tally in
                    var stray = tally[table, default: StrayRows()]
                    stray.count += 1
                    if stray.keys.count < SQLiteStoreReader.strayKeysShown { stray.keys.append(key) }
                    tally[table] = stray
                }
                return values[2]
            }
        }
    }

    /// `error` as an `.ioError` when it is SQLite's (or Decant's) report of a failing disk or file system (full, unreadable,
    /// locked); nil for anything else, which is the store's or the plan's, for the record stream to name.
    static func diskFailure(_ error: any Error, _ what: String) -> DecantError? {
        guard error is DatabaseError || error is DecantError else { return nil }
        let failure = DatabaseFailure.wrap(error, what, at: Location())
        return failure.code == .ioError ? failure : nil
    }

    /// The counts of a run from the rows taken per source entity, as the record stream counts them.
    private func tally(_ counts: [String: Int]) -> Counts {
        var read: [String: Int] = [:]
        for (origin, count) in counts where count > 0 { read[origin] = count }
        var ledgers: [MigrationLedger] = []
        for hop in hops {
            var ledger = MigrationLedger(hop: hop.name)
            for (entity, origin) in hop.moved {
                guard let count = read[origin] else { continue }
                ledger.rows[entity] = MigrationLedger.Row(read: count, written: count)
            }
            for (entity, origin) in hop.dropped {
                guard let count = read[origin] else { continue }
                ledger.rows[entity] = MigrationLedger.Row(read: count, removed: count)
            }
            ledgers.append(ledger)
        }
        var written: [String: Int] = [:]
        for insert in inserts { written[insert.entity] = read[insert.origin] }
        return Counts(read: read, written: written, ledgers: ledgers)
    }

    /// Why a run's rows go to the record stream after all.
    struct HandOver: Error {
        var reason: StreamReason
    }

    /// Why a plan needs the record stream.
    struct Obstacle: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    // MARK: - Building the statements

    struct Builder {
        let plan: MigrationPlan
        let reader: SQLiteStoreReader
        let functions: ValueExpressionFunctions
        let destinationSchema: StoreSchema

        init(plan: MigrationPlan, reader: SQLiteStoreReader, functions: ValueExpressionFunctions) throws {
            self.plan = plan
            self.reader = reader
            self.functions = functions
            self.destinationSchema = try StoreSchema(model: plan.destination)
        }

        /// What the hops make of the source's rows: per version after the source's, the rows of each entity (the
        /// last: the destination's), and per hop the entities its objects moved to and those it dropped.
        struct Composed {
            var versions: [[String: Rows]] = []
            var hops: [HopEntities] = []
            var dropped: [Rows] = []
        }

        /// The source's rows carried through every hop of the plan.
        func composed() throws -> Composed {
            guard !plan.hops.isEmpty else { throw Obstacle("the store is already at the destination version") }
            var rows = try sourceRows()
            var result = Composed()
            for hop in plan.hops {
                var droppedHere: [Rows] = []
                let sources = rows
                rows = try apply(hop, to: rows, dropped: &droppedHere)
                let dropping = Set(droppedHere.map(\.origin))
                result.hops.append(
                    HopEntities(
                        name: hop.name,
                        moved: rows.map { ($0.key, $0.value.origin) }.sorted { $0.0 < $1.0 },
                        dropped: sources.filter { dropping.contains($0.value.origin) }.map { ($0.key, $0.value.origin) }
                            .sorted { $0.0 < $1.0 }))
                result.dropped += droppedHere
                result.versions.append(rows)
            }
            return result
        }

        func build() throws -> InStoreMigration {
            let composed = try composed()
            let rows = composed.versions.last ?? [:]
            let (hops, dropped) = (composed.hops, composed.dropped)
            var inserts: [Insert] = []
            var checks: [Check] = []
            // One statement per destination entity, in the order of the store numbers of the entities the rows come
            // from; each inserts its rows by key.
            for (name, entity) in rows.sorted(by: { ($0.value.sourceNumber, $0.key) < ($1.value.sourceNumber, $1.key) }) {
                let (insert, entityChecks) = try statements(name, entity)
                inserts.append(insert)
                for check in entityChecks where !checks.contains(check) { checks.append(check) }
            }
            // Then the rows of each join table, from the source's, once the objects they link are in.
            var joinInserts: [String] = []
            for join in destinationSchema.joinTables {
                guard let (sql, joinChecks) = try joinStatements(join, rows) else { continue }
                joinInserts.append(sql)
                for check in joinChecks where !checks.contains(check) { checks.append(check) }
            }
            return InStoreMigration(
                inserts: inserts, joinInserts: joinInserts,
                dropped: dropped.map { Dropped(origin: $0.origin, table: $0.sourceTable, condition: $0.sourceCondition) },
                checks: checks, sourceTables: Set(reader.schema.entities.map(\.tableName)).sorted(), hops: hops,
                sourceURI: reader.store.uri)
        }

        /// The source store's entities that have rows, each as its own columns.
        func sourceRows() throws -> [String: Rows] {
            let schema = reader.schema
            var rows: [String: Rows] = [:]
            for entity in reader.model.entities {
                guard let mapping = schema.entity(named: entity.name),
                    let layout = RecordLayout(entity: entity.name, in: reader.model)
                else { continue }
                let number = reader.entityNumbers[entity.name] ?? mapping.number
                let condition = reader.ownRowsCondition(entity.name, alias: "s")
                let exists = try reader.store.connection.inDatabase { db in
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM \(mapping.tableName) AS s WHERE \(condition ?? "1"))")
                }
                guard exists == true else { continue }
                let columns = try ColumnPlan(layout: layout, schema: schema)
                // A table that lacks a column its model names does not fit the store's model: SQL that never reads
                // that column would not notice, so ask for every one, and leave the store to the record stream,
                // which names what is missing.
                let named = columns.attributes.map { "s.\($0.column)" }
                    + columns.relationships.compactMap { relationship -> String? in
                        guard case .toOne(let key)? = relationship.storage else { return nil }
                        return "s.\(key.column)"
                    }
                if !named.isEmpty {
                    try reader.store.connection.inDatabase { db in
                        try db.execute(sql: "SELECT \(named.joined(separator: ", ")) FROM \(mapping.tableName) AS s LIMIT 0")
                    }
                }
                var attributes: [String: ColumnValue] = [:]
                for stored in columns.attributes {
                    if stored.attribute.allowsExternalBinaryDataStorage {
                        throw Obstacle("\(entity.name).\(stored.attribute.name) may be stored outside the database")
                    }
                    attributes[stored.attribute.name] = .column("s.\(stored.column)")
                }
                var toOnes: [String: (String, String)] = [:]
                var unreadable: [String: String] = [:]
                var joins: [String: JoinSide] = [:]
                var obstacles: [String: String] = [:]
                for relationship in columns.relationships {
                    let name = relationship.relationship.name
                    let what = "\(entity.name).\(name)"
                    switch relationship.storage {
                    case .toOne(let key)? where key.entityColumn == nil:
                        if let destination = relationship.relationship.destinationEntity {
                            toOnes[name] = ("s.\(key.column)", destination)
                        }
                    case .toOne?:
                        unreadable[name] = "points into a hierarchy of entities (its key carries the entity)"
                    case .manyToMany(let link)?:
                        unreadable[name] = "is a to-many"
                        let pointee = relationship.relationship.destinationEntity
                        if link.isReflexive {
                            obstacles[name] = "\(what) is a many-to-many that is its own inverse"
                        } else if let pointee, Self.isLeaf(entity.name, declaring: name, in: schema, reader.model),
                            Self.isLeaf(pointee, in: schema)
                        {
                            joins[name] = JoinSide(
                                table: link.table, owner: link.sourceColumn, member: link.destinationColumn,
                                order: link.orderColumn, pointee: pointee)
                        } else {
                            obstacles[name] = "\(what) is a many-to-many between hierarchies of entities"
                        }
                    case .toManyThroughInverse?:
                        unreadable[name] = "is a to-many"
                        obstacles[name] = "\(what) is a to-many kept by its inverse's key, not by a join table"
                    default:
                        unreadable[name] = "is a to-many"
                        obstacles[name] = "\(what) is an inverse-less to-many"
                    }
                }
                rows[entity.name] = Rows(
                    origin: entity.name, sourceTable: mapping.tableName, sourceNumber: number, sourceCondition: condition,
                    attributes: attributes,
                    toOnes: toOnes, unreadable: unreadable, joins: joins, toManyObstacles: obstacles)
            }
            return rows
        }

        /// Whether `entity` has no sub-entities in `schema` (so every row of its join tables' columns is one of its
        /// objects), and, given `declaring`, declares that relationship itself rather than inheriting it.
        private static func isLeaf(
            _ entity: String, declaring relationship: String? = nil, in schema: StoreSchema, _ model: ObjectModel? = nil
        ) -> Bool {
            guard let mapping = schema.entity(named: entity), mapping.hierarchyNumbers.count == 1 else { return false }
            guard let relationship, let model else { return true }
            return model.entity(named: entity)?.relationships.contains { $0.name == relationship } == true
        }

    }
}
