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
    private struct Insert: Sendable {
        var entity: String
        var origin: String
        var sourceTable: String
        /// Whether it takes every row of its source table (no condition on `Z_ENT`).
        var takesEveryRow: Bool
        var sql: String
    }

    /// A query that returns a row when written rows may break a rule: its first column completes `reason`.
    private struct Check: Sendable, Hashable {
        var sql: String
        var reason: String
    }

    /// The objects of a source entity that a hop drops (no mapping takes them): counted, not written.
    private struct Dropped: Sendable {
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
    private struct HandOver: Error {
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

        /// The rows of each destination entity of `hop`, from the rows of its source entities.
        func apply(_ hop: MigrationPlan.Hop, to rows: [String: Rows], dropped: inout [Rows]) throws
            -> [String: Rows]
        {
            let source = hop.source
            let destination = hop.destination
            let mappings = hop.mapping.entityMappings
            var live: [EntityMapping] = []
            for (entity, previous) in rows.sorted(by: { $0.key < $1.key }) {
                let readers = mappings.filter { $0.sourceEntity == entity }
                let moving = readers.filter(hop.moves)
                guard let mapping = moving.first else {
                    // Objects no mapping takes are dropped; a removal a mapping file states applies delete rules.
                    if let removal = readers.first(where: { $0.kind == .remove && $0.origin != .inferred }) {
                        throw Obstacle("\(removal.name) removes objects, whose delete rules the record stream applies")
                    }
                    dropped.append(previous)
                    continue
                }
                guard moving.count == 1 else { throw Obstacle("\(entity) objects go to \(moving.count) entities") }
                if mapping.filter != nil { throw Obstacle("\(mapping.name) filters objects") }
                if mapping.findOrCreate != nil { throw Obstacle("\(mapping.name) finds or creates its objects by a key") }
                if mapping.policy != nil { throw Obstacle("\(mapping.name) makes its objects with a migration policy") }
                live.append(mapping)
            }
            // Rows go in with their keys: every table written must keep its objects' identities.
            for mapping in mappings where hop.moves(mapping) {
                guard let to = mapping.destinationEntity, !hop.keepsIdentities(of: to) else { continue }
                let table = destination.entity(named: to).map { destination.root(of: $0).name } ?? to
                throw Obstacle("the table of \(table) is fed from several source tables or twice, so its objects get new keys")
            }
            var result: [String: Rows] = [:]
            for mapping in live {
                guard let from = mapping.sourceEntity, let previous = rows[from], let to = mapping.destinationEntity,
                    let sourceLayout = RecordLayout(entity: from, in: source),
                    let layout = RecordLayout(entity: to, in: destination)
                else { continue }
                var next = previous
                next.attributes = [:]
                next.toOnes = [:]
                for attribute in layout.attributes {
                    next.attributes[attribute.name] = try value(
                        of: attribute, in: mapping, from: sourceLayout, previous: previous)
                }
                next.unreadable = [:]
                next.joins = [:]
                next.emptyToManys = []
                next.toManyObstacles = [:]
                for relationship in layout.relationships {
                    if relationship.isToMany {
                        // A to-many a mapping sets is kept by its inverse to-one here: where a mapping of the
                        // members leaves that nil, the record stream says the links are lost.
                        if !hop.isInferred, !Self.isNil(mapping.property(relationship.name)?.expression),
                            let inverse = relationship.inverseName,
                            let member = relationship.inverseEntity ?? relationship.destinationEntity,
                            mappings.contains(where: { members in
                                members.destinationEntity == member && members.kind != .remove
                                    && Self.isNil(members.property(inverse)?.expression)
                            })
                        {
                            throw Obstacle("\(to).\(relationship.name) is set from its to-many side only")
                        }
                        next.unreadable[relationship.name] = "is a to-many"
                        switch members(of: relationship, in: mapping, hop: hop, previous: previous) {
                        case .joined(let side): next.joins[relationship.name] = side
                        case .empty: next.emptyToManys.insert(relationship.name)
                        case .unknown(let reason): next.toManyObstacles[relationship.name] = reason
                        }
                    } else if let link = try link(of: relationship, in: mapping, hop: hop, previous: previous) {
                        next.toOnes[relationship.name] = link
                    }
                }
                result[to] = next
            }
            return result
        }

        /// A destination attribute's value.
        private func value(
            of attribute: Attribute, in mapping: EntityMapping, from sourceLayout: RecordLayout, previous: Rows
        ) throws -> ColumnValue {
            let what = "\(mapping.destinationEntity ?? "?").\(attribute.name)"
            if attribute.derivation != nil { throw Obstacle("\(what) is derived") }
            guard let expression = mapping.property(attribute.name)?.expression else { return .constant("NULL") }
            /// `$source.name` when the source attribute keeps its type or widens.
            func column(_ path: [String]) throws -> ColumnValue? {
                guard path.count == 1, let index = sourceLayout.attributeIndex(path[0]) else { return nil }
                guard MappingInference.Rules.copies(sourceLayout.attributes[index].type, into: attribute.type) else {
                    return nil
                }
                guard let value = previous.attributes[path[0]] else {
                    throw Obstacle("\(what) reads a value the source table has no column for")
                }
                return value
            }
            if let reason = Self.archiveReading(expression, into: attribute, from: sourceLayout) {
                throw Obstacle("\(what) \(reason)")
            }
            switch expression {
            case .source(let path):
                if let value = try column(path) { return value }
            case .binary(.coalesce, .source(let path), let fallback)
            where fallback.isConstant && Self.coalescible.contains(attribute.type):
                if let value = try column(path), let literal = constant(fallback, as: attribute.type) {
                    return .coalesce("COALESCE(\(value.sql), \(literal))")
                }
            case .call("double", let arguments)
            where arguments.count == 1 && [.double, .float].contains(attribute.type):
                // An inferred Integer → Double: SQLite's CAST gives the nearest double, as the record stream does.
                if case .source(let path) = arguments[0], path.count == 1,
                    let index = sourceLayout.attributeIndex(path[0]),
                    [.integer16, .integer32, .integer64].contains(sourceLayout.attributes[index].type),
                    let value = previous.attributes[path[0]]
                {
                    return .column("CAST(\(value.sql) AS REAL)")
                }
            case let expression where expression.isConstant:
                if let literal = constant(expression, as: attribute.type) { return .constant(literal) }
            default:
                break
            }
            throw Obstacle("\(what) is computed by \(expression)")
        }

        /// Why `expression` needs the record stream's reader of keyed archives, which SQL does not have: it reads into
        /// a Transformable or Binary attribute's archived value (`$source.dictionaryData.title`), reads a Transformable
        /// value into a plain type, or archives a plain value for a Transformable `attribute`; nil when it does none.
        static func archiveReading(
            _ expression: ValueExpression, into attribute: Attribute, from sourceLayout: RecordLayout
        ) -> String? {
            func type(_ name: String) -> AttributeType? {
                sourceLayout.attributeIndex(name).map { sourceLayout.attributes[$0].type }
            }
            let holdsArchives: Set<AttributeType> = [.transformable, .binary]
            for path in expression.sourceKeyPaths where path.count > 1 {
                if let first = type(path[0]), holdsArchives.contains(first) {
                    return "reads into the archived value of \(sourceLayout.entityName).\(path[0]) "
                        + "(\(ValueExpression.sourceText(path))): each archive is decoded object by object"
                }
            }
            if case .source(let path) = expression, path.count == 1, let source = type(path[0]) {
                if source == .transformable, !holdsArchives.contains(attribute.type) {
                    return "reads the archived value of Transformable \(sourceLayout.entityName).\(path[0]) as a "
                        + "\(attribute.type.modelName): each archive is decoded object by object"
                }
                if attribute.type == .transformable, !holdsArchives.contains(source) {
                    return "archives \(sourceLayout.entityName).\(path[0]) for a Transformable attribute: each value "
                        + "is archived object by object"
                }
            }
            if expression.callsArchiveFunctions {
                return "is computed by \(expression), which reads or writes keyed archives object by object"
            }
            return nil
        }

        /// Types whose `$source.x ?? constant` SQL's `COALESCE` computes as the record stream does.
        static let coalescible: Set<AttributeType> = [
            .integer16, .integer32, .integer64, .boolean, .double, .float, .date, .string,
        ]

        /// A constant as the SQL literal of the value the record stream would write for `type`, nil when there is
        /// none.
        private func constant(_ expression: ValueExpression, as type: AttributeType) -> String? {
            guard let value = expression.constantValue(as: type, functions: functions) else { return nil }
            let real = [.double, .float, .date].contains(type)
            func realLiteral(_ number: Double) -> String? {
                guard number.isFinite else { return nil }
                return "CAST(\(number.description) AS REAL)"
            }
            switch value {
            case .null: return "NULL"
            case .integer(let integer): return real ? realLiteral(Double(integer)) : String(integer)
            case .bool(let flag): return real ? realLiteral(flag ? 1 : 0) : (flag ? "1" : "0")
            case .double(let number): return realLiteral(number)
            case .date(let date): return realLiteral(date.timeIntervalSinceReferenceDate)
            case .string(let text), .uri(let text):
                return PredicateSQL.textLiteral(text)
            case .data(let data), .transformable(let data):
                return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
            case .uuid(let uuid):
                return "X'" + withUnsafeBytes(of: uuid.uuid) { $0.map { String(format: "%02X", $0) }.joined() } + "'"
            case .decimal, .externalDataReference, .composite:
                return nil
            }
        }

        /// Whether a mapping's expression sets nothing.
        private static func isNil(_ expression: ValueExpression?) -> Bool {
            switch expression {
            case nil, .literal(.null)?: true
            default: false
            }
        }

        /// The key a destination to-one holds: the source key when it points at objects that keep their keys.
        private func link(
            of relationship: Relationship, in mapping: EntityMapping, hop: MigrationPlan.Hop, previous: Rows
        ) throws -> (sql: String, target: String)? {
            let what = "\(mapping.destinationEntity ?? "?").\(relationship.name)"
            guard let target = relationship.destinationEntity else { return nil }
            switch mapping.property(relationship.name)?.expression {
            case nil, .literal(.null)?:
                return nil
            case .source(let path)? where path.count == 1:
                guard let (sql, pointee) = previous.toOnes[path[0]] else {
                    if let reason = previous.unreadable[path[0]] {
                        throw Obstacle("\(what) is read from \(path[0]), which \(reason)")
                    }
                    return nil  // empty in every row
                }
                // Where the record stream sends the reference: the first mapping of the pointee into the target.
                let candidates = hop.mapping.entityMappings.filter { candidate in
                    guard candidate.sourceEntity == pointee, candidate.kind != .remove,
                        let to = candidate.destinationEntity.flatMap({ hop.destination.entity(named: $0) }),
                        !to.isAbstract, hop.source.entity(named: pointee) != nil
                    else { return false }
                    return to.name == target || hop.destination.ancestors(of: to).contains { $0.name == target }
                }
                guard let first = candidates.first else { return nil }
                guard first.destinationEntity == target else {
                    throw Obstacle("\(what) points at objects that become a sub-entity of \(target)")
                }
                return (sql, target)
            default:
                throw Obstacle("\(what) is computed by an expression")
            }
        }

        /// What a to-many's members are after a hop.
        private enum Members {
            /// The rows of a source join table, as they are.
            case joined(JoinSide)
            /// None, in every object.
            case empty
            /// Something SQL does not carry here, for this reason.
            case unknown(String)
        }

        /// The members a destination to-many holds: the source's join rows when it is read from a to-many they keep
        /// and its members go to objects that keep their keys, as ``link(of:in:hop:previous:)`` follows a to-one.
        private func members(
            of relationship: Relationship, in mapping: EntityMapping, hop: MigrationPlan.Hop, previous: Rows
        ) -> Members {
            let what = "\(mapping.destinationEntity ?? "?").\(relationship.name)"
            guard let target = relationship.destinationEntity else { return .empty }
            switch mapping.property(relationship.name)?.expression {
            case nil, .literal(.null)?:
                return .empty
            case .source(let path)? where path.count == 1:
                if previous.emptyToManys.contains(path[0]) { return .empty }
                guard var side = previous.joins[path[0]] else {
                    if let obstacle = previous.toManyObstacles[path[0]] { return .unknown(obstacle) }
                    if previous.toOnes[path[0]] != nil { return .unknown("\(what) is read from \(path[0]), a to-one") }
                    return .unknown("\(what) is read from \(path[0]), whose members SQL does not carry")
                }
                // Where the record stream sends each member: the first mapping of the pointee into the target.
                let candidates = hop.mapping.entityMappings.filter { candidate in
                    guard candidate.sourceEntity == side.pointee, candidate.kind != .remove,
                        let to = candidate.destinationEntity.flatMap({ hop.destination.entity(named: $0) }),
                        !to.isAbstract, hop.source.entity(named: side.pointee) != nil
                    else { return false }
                    return to.name == target || hop.destination.ancestors(of: to).contains { $0.name == target }
                }
                guard let first = candidates.first else { return .empty }
                guard first.destinationEntity == target else {
                    return .unknown("\(what) holds objects that become a sub-entity of \(target)")
                }
                side.pointee = target
                return .joined(side)
            default:
                return .unknown("\(what) is computed by an expression")
            }
        }

        /// The statement writing one destination entity's rows, and the queries finding a written row that may
        /// break a rule of the destination model (the validator's rules, ``ModelValidator/rules(for:in:)``).
        private func statements(_ name: String, _ rows: Rows) throws -> (Insert, [Check]) {
            let model = plan.destination
            guard let layout = RecordLayout(entity: name, in: model), let mapping = destinationSchema.entity(named: name)
            else { throw Obstacle("the destination model has no entity \(name)") }
            let columns = try ColumnPlan(layout: layout, schema: destinationSchema)
            if let unstored = columns.unstored.first {
                throw Obstacle("\(name).\(unstored.attribute.name) has no column in a SQLite store")
            }
            if let composite = columns.composites.first {
                throw Obstacle("\(name).\(composite.attribute.name) is a composite, whose elements the record stream carries")
            }
            let table = mapping.tableName
            let ownRows = "FROM \(table) AS t WHERE t.Z_ENT = \(mapping.number)"
            var names = ["Z_PK", "Z_ENT", "Z_OPT"]
            // A table taken whole: each row whose `Z_ENT` is not its entity's is told to the stray-row tally as it
            // goes in (one comparison a row, the tally called for those rows only), instead of another pass.
            let entityNumber = rows.sourceCondition == nil
                ? "CASE WHEN s.Z_ENT = \(rows.sourceNumber) THEN \(mapping.number) ELSE \(InStoreMigration.strayTally)("
                    + "\(PredicateSQL.textLiteral(rows.sourceTable) ?? "NULL"), s.Z_PK, \(mapping.number)) END"
                : String(mapping.number)
            var values = ["s.Z_PK", entityNumber, "1"]
            /// Conditions on each written row's columns, and on constants (the same for every row).
            var rowConditions: [String] = []
            var constantConditions: [String] = []
            var checks: [Check] = []
            let rules = ModelValidator.rules(for: layout, in: model)
            let checked = Dictionary(rules.attributes.map { ($0.position, $0) }, uniquingKeysWith: { first, _ in first })
            let constrained = Set(rules.constraints.flatMap(\.attributes))
            for stored in columns.attributes {
                let attribute = stored.attribute
                if attribute.allowsExternalBinaryDataStorage {
                    throw Obstacle("\(name).\(attribute.name) may be stored outside the database")
                }
                let written = rows.attributes[attribute.name] ?? .constant("NULL")
                names.append(stored.column)
                values.append(written.sql)
                // A constant is checked once; anything else in the rows written.
                let isConstant = written.isConstant
                let value = isConstant ? written.sql : "t.\(stored.column)"
                var conditions: [String] = []
                let rule = checked[stored.position]
                if rule != nil || constrained.contains(stored.position) || written.isCoalesce {
                    if let conformance = Self.unexpectedType(value, attribute.type) { conditions.append(conformance) }
                }
                if let rule {
                    if rule.pattern != nil { throw Obstacle("\(name).\(attribute.name) has a string pattern") }
                    if !rule.isOptional { conditions.append("\(value) IS NULL") }
                    if attribute.type == .string {
                        if let minimum = rule.minimum {
                            // SQLite counts code points, Core Data UTF-16 units (NSString's length): only plain
                            // ASCII counts the same for certain.
                            conditions.append(
                                "(\(value) IS NOT NULL AND (length(\(value)) < \(minimum) OR "
                                    + "length(CAST(\(value) AS BLOB)) != length(\(value))))")
                        }
                        if let maximum = rule.maximum { conditions.append("length(CAST(\(value) AS BLOB)) > \(maximum)") }
                    } else {
                        if let minimum = rule.minimum { conditions.append("\(value) < \(minimum)") }
                        if let maximum = rule.maximum { conditions.append("\(value) > \(maximum)") }
                    }
                }
                if isConstant { constantConditions += conditions } else { rowConditions += conditions }
            }
            for planned in columns.relationships {
                let relationship = planned.relationship
                switch planned.storage {
                case .toOne(let key)?:
                    guard key.entityColumn == nil, let target = relationship.destinationEntity,
                        let targetMapping = destinationSchema.entity(named: target)
                    else { throw Obstacle("\(name).\(relationship.name) points into a hierarchy") }
                    names.append(key.column)
                    let sql = rows.toOnes[relationship.name]?.sql ?? "NULL"
                    values.append(sql)
                    let what = "\(name).\(relationship.name)"
                    if !relationship.isOptional {
                        // Found through the key's index.
                        checks.append(
                            Check(
                                sql: "SELECT t.Z_PK FROM \(table) AS t WHERE t.\(key.column) IS NULL AND t.Z_ENT = "
                                    + "\(mapping.number) LIMIT 1",
                                reason: "\(what) is required but empty in \(name)/p"))
                    }
                    guard sql != "NULL" else { continue }
                    // Every key must name a row of the target (a text or real key names none). When every entity
                    // of the table that stores this column stores this relationship in it, the distinct keys are
                    // read from the key's index instead of every row.
                    let missing = "NOT EXISTS (SELECT 1 FROM \(targetMapping.tableName) AS u WHERE u.Z_PK = k AND "
                        + "u.Z_ENT = \(targetMapping.number))"
                    let shares = sharesColumn(key, of: relationship, table: table)
                    let keys = shares
                        ? "SELECT DISTINCT \(key.column) AS k FROM \(table) WHERE \(key.column) IS NOT NULL"
                        : "SELECT t.\(key.column) AS k \(ownRows) AND t.\(key.column) IS NOT NULL"
                    let indexed = destinationSchema.indexes.contains {
                        $0.table == table && $0.elements.first?.column == key.column
                    }
                    checks.append(
                        Check(
                            sql: shares && indexed
                                ? Self.missingKeyBySkipScan(key.column, of: table, missing: missing)
                                : "SELECT k FROM (\(keys)) WHERE \(missing) LIMIT 1",
                            reason: "\(what) may point at an object that does not exist: key "))
                case .toManyThroughInverse(let key)? where key.orderColumn == nil:
                    continue  // stored by the inverse's key
                case .manyToMany?:
                    continue  // written with its join table (``joinStatements(_:_:)``)
                default:
                    throw Obstacle("\(name).\(relationship.name) is an ordered, many-to-many or inverse-less to-many")
                }
            }
            if !rowConditions.isEmpty {
                checks.append(
                    Check(
                        sql: "SELECT t.Z_PK \(ownRows) AND (\(rowConditions.joined(separator: " OR "))) LIMIT 1",
                        reason: "a value of \(name) may break a rule of the destination model, which the record stream "
                            + "checks one object at a time: \(name)/p"))
            }
            if !constantConditions.isEmpty {
                checks.append(
                    Check(
                        sql: "SELECT \(PredicateSQL.textLiteral(name) ?? "NULL") WHERE \(constantConditions.joined(separator: " OR "))",
                        reason: "a constant value breaks a rule of the destination model in "))
            }
            for constraint in rules.constraints {
                guard let owner = destinationSchema.entity(named: constraint.owner) else { continue }
                var keyColumns: [String] = []
                for position in constraint.attributes {
                    guard let column = columns.attributes.first(where: { $0.position == position })?.column else { continue }
                    keyColumns.append(column)
                }
                for position in constraint.relationships {
                    guard case .toOne(let key)? = columns.relationships[position].storage else {
                        throw Obstacle("the uniqueness constraint \(constraint.names) of \(name) includes a to-many")
                    }
                    keyColumns.append(key.column)
                }
                let numbers = owner.hierarchyNumbers.map(String.init).joined(separator: ", ")
                checks.append(
                    Check(
                        sql: "SELECT \(keyColumns.joined(separator: " || ',' || ")) FROM \(table) WHERE Z_ENT IN (\(numbers)) "
                            + "GROUP BY \(keyColumns.joined(separator: ", ")) HAVING COUNT(*) > 1 LIMIT 1",
                        reason: "objects of \(constraint.owner) share \(constraint.names.joined(separator: ", ")): "))
            }
            // A whole table is read in key order without asking (its b-tree's order: no index covers `Z_ENT`); an
            // `ORDER BY` would make SQLite run the `SELECT` as a co-routine, copying every value once more (about
            // 3% of the copy).
            let sql = "INSERT INTO \(table) (\(names.joined(separator: ", "))) SELECT "
                + values.joined(separator: ", ")
                + " FROM src.\(rows.sourceTable) AS s WHERE \(rows.sourceCondition ?? "1")"
                + (rows.sourceCondition == nil ? "" : " ORDER BY s.Z_PK")
            let insert = Insert(
                entity: name, origin: rows.origin, sourceTable: rows.sourceTable,
                takesEveryRow: rows.sourceCondition == nil, sql: sql)
            return (insert, checks)
        }

        /// What one side of a destination join table holds.
        private enum JoinSideState {
            /// No objects of its entity are written.
            case absent
            /// Its objects hold no members.
            case empty
            /// Its objects' members are the rows of a source join table, read from this side; `origin` is the
            /// source entity its objects come from.
            case joined(JoinSide, origin: String)
        }

        /// One side of a destination join table: `Entity.relationship` as ``StoreSchema/JoinTable`` names it, with
        /// its link.
        private func joinSide(_ qualified: String, _ rows: [String: Rows]) throws
            -> (entity: String, name: String, link: StoreSchema.JoinLink, state: JoinSideState)
        {
            let parts = qualified.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let mapping = destinationSchema.entity(named: parts[0]),
                case .manyToMany(let link)? = mapping.relationships[parts[1]]
            else { throw Obstacle("the destination's join table of \(qualified) has no relationship") }
            let (entity, name) = (parts[0], parts[1])
            let fed = mapping.hierarchyNumbers.contains { number in
                destinationSchema.entity(number: number).map { rows[$0.name] != nil } ?? false
            }
            guard fed else { return (entity, name, link, .absent) }
            guard mapping.hierarchyNumbers.count == 1, let own = rows[entity] else {
                throw Obstacle("\(qualified) is a many-to-many of a hierarchy of entities")
            }
            if let side = own.joins[name] { return (entity, name, link, .joined(side, origin: own.origin)) }
            if own.emptyToManys.contains(name) { return (entity, name, link, .empty) }
            throw Obstacle(own.toManyObstacles[name] ?? "\(qualified) is a many-to-many whose members SQL does not carry")
        }

        /// The statement writing a destination join table's rows from the source's join table, the same rows in the
        /// same order as the record stream writes them (the members of the side it writes first, owner by owner, in
        /// the order it reads them), and the queries finding a row that may break a rule; nil when no object holds
        /// a member.
        ///
        /// Both sides must read the same source join table (or one side's objects be absent, when every row
        /// dangles), from source entities whose objects keep their keys: a row is then written as it is, and a row
        /// whose owner or member is not written is found by the checks, which hand the run to the record stream.
        private func joinStatements(_ join: StoreSchema.JoinTable, _ rows: [String: Rows]) throws
            -> (sql: String, checks: [Check])?
        {
            let master = try joinSide(join.masterRelationship, rows)
            if join.masterRelationship == join.slaveRelationship {
                if case .absent = master.state { return nil }
                throw Obstacle("\(join.masterRelationship) is a many-to-many that is its own inverse")
            }
            let slave = try joinSide(join.slaveRelationship, rows)
            // The source columns that feed the master and slave columns, and the sides read, in the order the
            // record stream writes them (its reader goes through the source model's entities in order).
            let source: (table: String, master: String, slave: String)
            var read: [(side: JoinSide, origin: String)] = []
            switch (master.state, slave.state) {
            case (.absent, .absent), (.absent, .empty), (.empty, .absent), (.empty, .empty):
                return nil
            case (.joined, .empty), (.empty, .joined):
                throw Obstacle("\(join.masterRelationship) and its inverse \(join.slaveRelationship) are not both set")
            case (.joined(let side, let origin), .absent):
                source = (side.table, side.owner, side.member)
                read = [(side, origin)]
            case (.absent, .joined(let side, let origin)):
                source = (side.table, side.member, side.owner)
                read = [(side, origin)]
            case (.joined(let one, let oneOrigin), .joined(let other, let otherOrigin)):
                guard one.table == other.table, one.owner == other.member, one.member == other.owner else {
                    throw Obstacle(
                        "\(join.masterRelationship) and its inverse \(join.slaveRelationship) are read from different "
                            + "join tables")
                }
                guard oneOrigin != otherOrigin else {
                    throw Obstacle("both sides of \(join.masterRelationship) are read from objects of \(oneOrigin)")
                }
                source = (one.table, one.owner, one.member)
                read = [(one, oneOrigin), (other, otherOrigin)]
            }
            for (side, other) in [(master, slave), (slave, master)] {
                guard case .joined(let held, _) = side.state, held.pointee != other.entity else { continue }
                throw Obstacle("\(side.entity).\(side.name) holds objects of \(held.pointee), not of \(other.entity)")
            }
            let order = reader.model.entities.map(\.name)
            read.sort { (order.firstIndex(of: $0.origin) ?? 0) < (order.firstIndex(of: $1.origin) ?? 0) }
            guard let first = read.first?.side else { return nil }
            var names = [join.masterColumn, join.slaveColumn]
            var values = ["j.\(source.master)", "j.\(source.slave)"]
            // A side's position counts its members from 1 in the order the record stream reads them.
            for (link, state) in [(master.link, master.state), (slave.link, slave.state)] {
                guard let column = link.orderColumn else { continue }
                names.append(column)
                if case .joined(let side, _) = state {
                    let sort = (side.order.map { ["j.\($0)"] } ?? []) + ["j.\(side.member)"]
                    values.append(
                        "ROW_NUMBER() OVER (PARTITION BY j.\(side.owner) ORDER BY \(sort.joined(separator: ", ")))")
                } else {
                    values.append("NULL")
                }
            }
            let sort = ["j.\(first.owner)"] + (first.order.map { ["j.\($0)"] } ?? []) + ["j.\(first.member)"]
            let sql = "INSERT INTO \(join.name) (\(names.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) "
                + "FROM src.\(source.table) AS j ORDER BY \(sort.joined(separator: ", "))"
            var checks: [Check] = []
            // Every owner and member is an object written (a key that names none dangles, or its object was not
            // carried over), and each side holds as many members as the destination model allows.
            for (side, other, column) in [(master, slave, join.slaveColumn), (slave, master, join.masterColumn)] {
                guard let pointee = destinationSchema.entity(named: other.entity) else { continue }
                checks.append(
                    Check(
                        // The distinct keys, read from the primary key's or the join index's order.
                        sql: "SELECT IFNULL(k, 'NULL') FROM (SELECT DISTINCT \(column) AS k FROM \(join.name)) WHERE NOT "
                            + "EXISTS (SELECT 1 FROM \(pointee.tableName) AS u WHERE u.Z_PK = k AND u.Z_ENT = "
                            + "\(pointee.number)) LIMIT 1",
                        reason: "\(side.entity).\(side.name) may hold an object that does not exist: key "))
            }
            for side in [master, slave] {
                if case .absent = side.state { continue }
                checks += try countChecks(side.entity, side.name, owner: side.link.sourceColumn, table: join.name)
            }
            return (sql, checks)
        }

        /// The queries finding an object of `entity` whose `relationship` holds fewer or more members (rows of the
        /// join table `table` whose `owner` column holds its key) than the destination model allows.
        private func countChecks(_ entity: String, _ relationship: String, owner: String, table: String) throws
            -> [Check]
        {
            guard let layout = RecordLayout(entity: entity, in: plan.destination),
                let mapping = destinationSchema.entity(named: entity),
                let rule = ModelValidator.rules(for: layout, in: plan.destination).relationships.first(where: {
                    $0.name == relationship
                })
            else { throw Obstacle("the destination model has no relationship \(entity).\(relationship)") }
            let what = "\(entity).\(relationship)"
            var checks: [Check] = []
            if rule.maxCount > 0 {
                checks.append(
                    Check(
                        sql: "SELECT \(owner) FROM \(table) GROUP BY \(owner) HAVING COUNT(*) > \(rule.maxCount) LIMIT 1",
                        reason: "\(what) may hold more than \(rule.maxCount) objects in \(entity)/p"))
            }
            if rule.minCount > 0 {
                // An optional to-many may be empty whatever its minimum (``ModelValidator``).
                let least = rule.isOptional ? 1 : 0
                checks.append(
                    Check(
                        sql: "SELECT t.Z_PK FROM \(mapping.tableName) AS t WHERE t.Z_ENT = \(mapping.number) AND (SELECT "
                            + "COUNT(*) FROM \(table) AS j WHERE j.\(owner) = t.Z_PK) BETWEEN \(least) AND "
                            + "\(rule.minCount - 1) LIMIT 1",
                        reason: "\(what) may hold fewer than \(rule.minCount) objects in \(entity)/p"))
            }
            return checks
        }

        /// Whether every entity of `table` that has a column `key.column` stores `relationship` (the same
        /// destination) in it, so every key in the column is one of this relationship's.
        private func sharesColumn(_ key: StoreSchema.ForeignKey, of relationship: Relationship, table: String) -> Bool {
            destinationSchema.entities.filter { $0.tableName == table }.allSatisfy { entity in
                entity.relationships.allSatisfy { name, storage in
                    guard case .toOne(let other) = storage, other.column == key.column else { return true }
                    let declared = plan.destination.entity(named: entity.name)
                        .flatMap { plan.destination.properties(of: $0).relationships.first { $0.name == name } }
                    return other.entityColumn == nil && declared?.destinationEntity == relationship.destinationEntity
                }
            }
        }

        /// How many distinct keys ``missingKeyBySkipScan(_:of:missing:)`` finds one index seek at a time before it
        /// reads the rest of the index in order.
        static let skipScanSeeks = 4096

        /// A query that returns a key of `column` (in `table`, whose index leads with it) for which `missing` (on
        /// `k`) holds. The distinct keys are found one seek each (`MIN(column) … > k`), as long as there are at most
        /// ``skipScanSeeks`` of them; past that, the rest of the index is read in order, as `SELECT DISTINCT` reads
        /// it. A million notes in a thousand folders: a thousand seeks, not a million index entries.
        static func missingKeyBySkipScan(_ column: String, of table: String, missing: String) -> String {
            let cap = skipScanSeeks
            return "WITH RECURSIVE d(k, n) AS (SELECT (SELECT MIN(\(column)) FROM \(table)), 1 UNION ALL "
                + "SELECT (SELECT MIN(\(column)) FROM \(table) WHERE \(column) > d.k), d.n + 1 FROM d "
                + "WHERE d.k IS NOT NULL AND d.n < \(cap)) "
                + "SELECT k FROM d WHERE k IS NOT NULL AND \(missing) UNION ALL "
                + "SELECT k FROM (SELECT DISTINCT \(column) AS k FROM \(table) WHERE \(column) > "
                + "(SELECT k FROM d WHERE n = \(cap))) WHERE \(missing) LIMIT 1"
        }

        /// The condition true for a value whose SQLite type the record stream would read differently from `type`.
        static func unexpectedType(_ column: String, _ type: AttributeType) -> String? {
            switch type {
            case .integer16, .integer32, .integer64: "typeof(\(column)) NOT IN ('integer', 'null')"
            case .boolean: "(typeof(\(column)) NOT IN ('integer', 'null') OR \(column) NOT IN (0, 1))"
            case .double, .float, .date, .decimal: "typeof(\(column)) NOT IN ('integer', 'real', 'null')"
            case .string: "typeof(\(column)) NOT IN ('text', 'null')"
            case .binary, .transformable: "typeof(\(column)) NOT IN ('blob', 'null')"
            default: nil
            }
        }
    }
}
