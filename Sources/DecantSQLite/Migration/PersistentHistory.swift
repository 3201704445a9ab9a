public import DecantCore
public import Foundation
import GRDB

/// A SQLite store's persistent-history tables (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, written when
/// `NSPersistentHistoryTrackingKey` is on, and by SwiftData always): what a store holds, and their carrying into a
/// migrated store, as Core Data's lightweight migration keeps them.
///
/// A migration into a SQLite store copies the three tables with their own DDL and indexes, and their `Z_PRIMARYKEY`
/// rows (`CHANGE`, `TRANSACTION`, `TRANSACTIONSTRING`); each change's entity number (`ACHANGE.ZENTITY`) becomes the
/// destination's number of the entity its object became (``MigrationPlan/lineages``). The changes of an entity whose
/// objects do not keep their identity (removed, split, given new keys) are not copied, and said so. The migration
/// reaches it through ``SQLiteFormat``'s ``PersistentHistoryFormat`` (`SQLiteFormat+PersistentHistory.swift`).
///
/// ```swift
/// if let history = try PersistentHistory.survey(storeAt: store) { print(history.changes) }
/// let carried = try PersistentHistory.carry(from: store, into: migrated, plan: plan)
/// carried.diagnostics.forEach { print($0) }
/// ```
public enum PersistentHistory: Sendable {
    /// The history tables.
    public static let tables = ["ATRANSACTIONSTRING", "ATRANSACTION", "ACHANGE"]
    /// Their `Z_PRIMARYKEY` names.
    static let primaryKeyNames = ["TRANSACTIONSTRING", "TRANSACTION", "CHANGE"]
    /// The columns of `ACHANGE` that hold an entity number.
    static let entityColumns = ["ZENTITY", "ZCHANGEDENTITY"]

    /// The history tables as messages name them.
    static let tableNames = ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]

    /// What carrying the history into a migrated store did.
    public struct Outcome: Sendable, Hashable {
        /// Changes not copied for one source entity, and why.
        public struct Dropped: Sendable, Hashable {
            /// How many.
            public var count: Int
            /// Why its objects lose their identity.
            public var reason: String
        }

        /// Changes copied.
        public var keptChanges: Int
        /// Changes not copied, per source entity.
        public var dropped: [String: Dropped]
        /// What is not kept, as warnings for the migration's report.
        public var diagnostics: [Diagnostic]
    }

    /// The history the store at `url` holds; nil when it has none of the three tables.
    /// - Throws: `.malformedInput` when the store has some of the tables but not all, or their rows are not readable.
    public static func survey(storeAt url: URL) throws -> PersistentHistorySurvey? {
        let store = try SQLiteStore(contentsOf: url)
        let location = Location(path: url.displayPath)
        let names = Dictionary(
            store.primaryKeys.map { ($0.entityNumber, $0.name) }, uniquingKeysWith: { first, _ in first })
        do {
            return try store.connection.read { db -> PersistentHistorySurvey? in
                let present = try tables.filter { try db.tableExists($0) }
                guard !present.isEmpty else { return nil }
                guard present.count == tables.count else {
                    throw DecantError(
                        .malformedInput,
                        "the store has the persistent-history tables \(present.joined(separator: ", ")) but not "
                            + tables.filter { !present.contains($0) }.joined(separator: ", "),
                        at: location)
                }
                func count(_ table: String) throws -> Int {
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
                }
                var perEntity: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT ZENTITY, COUNT(*) FROM ACHANGE GROUP BY ZENTITY") {
                    perEntity[entityName(row[0], names), default: 0] += Int.fromDatabaseValue(row[1]) ?? 0
                }
                return PersistentHistorySurvey(
                    tables: tableNames, transactions: try count("ATRANSACTION"), changes: try count("ACHANGE"),
                    strings: try count("ATRANSACTIONSTRING"), changesPerEntity: perEntity)
            }
        } catch let error as DecantError {
            throw error
        } catch {
            throw DatabaseFailure.wrap(error, "cannot read the persistent history", at: location)
        }
    }

    /// What `plan` keeps of a history `survey` describes, in words for `decant plan`: kept into a SQLite store (entity
    /// numbers remapped), the changes of entities whose objects lose their identity not, nothing into another format.
    public static func notes(_ survey: PersistentHistorySurvey, plan: MigrationPlan) -> [String] {
        let counts =
            "\(survey.transactions) transactions, \(survey.changes) changes, \(survey.strings) strings"
        var notes = [
            "persistent history (\(survey.tables.joined(separator: ", ")): \(counts)): kept in a SQLite output, as "
                + "Core Data's lightweight migration keeps it, each change's entity number (ACHANGE.ZENTITY) that of "
                + "the entity its object becomes; not carried into another format (data only)"
        ]
        let lineages = plan.lineages
        for (entity, count) in survey.changesPerEntity.sorted(by: { $0.key < $1.key }) {
            switch lineages[entity] {
            case .kept?: continue
            case .lost(let reason)?:
                notes.append("persistent history: the \(count) changes of \(entity) are not kept: \(reason)")
            case nil:
                notes.append(
                    "persistent history: the \(count) changes of \(entity) are not kept: it is not an entity of "
                        + "\(plan.sourceVersion)")
            }
        }
        if !plan.hops.isEmpty {
            notes.append(
                "persistent history: ACHANGE.ZCOLUMNS (the updated columns of an update, a layout Apple does not "
                    + "document) is kept as it is")
        }
        let sourceAttributes = Set(plan.source.entities.flatMap { entity in
            entity.attributes.filter(\.preservesValueInHistoryOnDeletion).map { "\(entity.name).\($0.name)" }
        })
        for entity in plan.destination.entities {
            for attribute in entity.attributes where attribute.preservesValueInHistoryOnDeletion {
                let name = "\(entity.name).\(attribute.name)"
                guard !sourceAttributes.contains(name) else { continue }
                notes.append(
                    "persistent history: \(name) is preserved after deletion in \(plan.destinationVersion); Core Data "
                        + "adds a tombstone column to ACHANGE for it, whose name Apple does not document: Decant adds "
                        + "none (changes recorded before the migration have no tombstone value either way)")
            }
        }
        return notes
    }

    /// The entity a change's `ZENTITY` names by the store's `Z_PRIMARYKEY`; a number no row has as `#<number>`, and
    /// any other value (untrusted: a text, a real, NULL) as `#` and SQLite's rendering of it.
    static func entityName(_ value: DatabaseValue, _ names: [Int: String]) -> String {
        if case .int64(let number) = value.storage {
            return names[Int(number)] ?? "#\(number)"
        }
        return "#\(value.description)"
    }

    /// Copies the history of the store at `source` into the finished, not yet published store at `destination` that
    /// `plan` migrated it into (its tables and indexes as the source declares them, its rows, its `Z_PRIMARYKEY`
    /// rows), each change's entity numbers remapped to the destination's; changes of entities whose objects do not
    /// keep their identity are left out and named in the outcome. Nothing is done when the source has no history.
    /// - Throws: `.malformedInput` for a source whose history tables are incomplete; `.ioError` when the disk fails.
    public static func carry(from source: URL, into destination: URL, plan: MigrationPlan) throws -> Outcome? {
        guard try survey(storeAt: source) != nil else { return nil }
        let store = try SQLiteStore(contentsOf: source)
        let sourceNumbers = Dictionary(
            store.primaryKeys.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { first, _ in first })
        let sourceNames = Dictionary(
            store.primaryKeys.map { ($0.entityNumber, $0.name) }, uniquingKeysWith: { first, _ in first })
        let lineages = plan.lineages
        // A history table SQLite cannot read as declared is the store's: located at the store.
        let location = Location(path: source.displayPath)
        do {
            let queue = try DatabaseQueue(path: destination.path)
            defer { try? queue.close() }
            let outcome = try queue.writeWithoutTransaction { db -> Outcome in
                try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [store.uri])
                defer { try? db.execute(sql: "DETACH DATABASE src") }
                var outcome = Outcome(keptChanges: 0, dropped: [:], diagnostics: [])
                try db.inTransaction {
                    var destinationNumbers: [String: Int] = [:]
                    for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM main.Z_PRIMARYKEY") {
                        if let number = Int.fromDatabaseValue(row[0]), let name = String.fromDatabaseValue(row[1]) {
                            destinationNumbers[name] = number
                        }
                    }
                    // The tables first, then their indexes, as the source declares them.
                    let list = tables.map { "'\($0)'" }.joined(separator: ", ")
                    for sql in try String.fetchAll(
                        db,
                        sql: "SELECT sql FROM src.sqlite_master WHERE tbl_name IN (\(list)) AND sql IS NOT NULL "
                            + "ORDER BY type = 'index', rowid")
                    {
                        try db.execute(sql: sql)
                    }
                    try db.execute(sql: "INSERT INTO main.ATRANSACTIONSTRING SELECT * FROM src.ATRANSACTIONSTRING")
                    try db.execute(sql: "INSERT INTO main.ATRANSACTION SELECT * FROM src.ATRANSACTION")
                    // Source entity number → destination entity number, for the entities whose objects keep their
                    // keys.
                    var map: [Int: Int] = [:]
                    for (entity, lineage) in lineages {
                        guard case .kept(let target) = lineage, let from = sourceNumbers[entity],
                            let to = destinationNumbers[target]
                        else { continue }
                        map[from] = to
                    }
                    let columns = try Row.fetchAll(db, sql: "PRAGMA src.table_info(ACHANGE)").compactMap {
                        String.fromDatabaseValue($0["name"])
                    }
                    let cases = map.keys.sorted().map { "WHEN \($0) THEN \(map[$0] ?? 0)" }.joined(separator: " ")
                    // Column names come from the file: quoted as identifiers.
                    func quoted(_ name: String) -> String {
                        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                    }
                    let selected = columns.map { column in
                        guard entityColumns.contains(column), !map.isEmpty else { return quoted(column) }
                        return "CASE \(quoted(column)) \(cases) ELSE \(quoted(column)) END"
                    }
                    let kept = map.keys.sorted().map(String.init).joined(separator: ", ")
                    try db.execute(
                        sql: "INSERT INTO main.ACHANGE (\(columns.map(quoted).joined(separator: ", "))) SELECT "
                            + "\(selected.joined(separator: ", ")) FROM src.ACHANGE WHERE ZENTITY IN (\(kept))")
                    outcome.keptChanges = db.changesCount
                    for row in try Row.fetchAll(
                        db,
                        sql: "SELECT ZENTITY, COUNT(*) FROM src.ACHANGE "
                            + "WHERE ZENTITY IS NULL OR ZENTITY NOT IN (\(kept)) "
                            + "GROUP BY ZENTITY")
                    {
                        let name = entityName(row[0], sourceNames)
                        let reason: String
                        switch lineages[name] {
                        case .lost(let why)?: reason = why
                        case .kept(let target)?: reason = "\(target) has no entity number in the migrated store"
                        case nil: reason = "it is not an entity of \(plan.sourceVersion)"
                        }
                        let count = Int.fromDatabaseValue(row[1]) ?? 0
                        outcome.dropped[name] = Outcome.Dropped(count: count, reason: reason)
                    }
                    let names = primaryKeyNames.map { "'\($0)'" }.joined(separator: ", ")
                    try db.execute(
                        sql: "INSERT INTO main.Z_PRIMARYKEY SELECT * FROM src.Z_PRIMARYKEY WHERE Z_NAME IN (\(names)) "
                            + "AND Z_ENT NOT IN (SELECT Z_ENT FROM main.Z_PRIMARYKEY)")
                    return .commit
                }
                if try String.fetchOne(db, sql: "PRAGMA main.journal_mode") == "wal" {
                    try db.execute(sql: "PRAGMA main.wal_checkpoint(TRUNCATE)")
                }
                outcome.diagnostics = outcome.dropped.keys.sorted().map { entity in
                    let dropped = outcome.dropped[entity] ?? Outcome.Dropped(count: 0, reason: "")
                    return Diagnostic(
                        .persistentHistory,
                        "persistent history: the \(dropped.count) changes of \(entity) are not kept: \(dropped.reason)",
                        at: Location(path: source.displayPath, entity: entity))
                }
                return outcome
            }
            return withExtendedLifetime(store) { outcome }
        } catch let error as DecantError {
            throw error
        } catch {
            throw DatabaseFailure.wrap(
                error, "cannot carry the persistent history into the migrated store", at: location)
        }
    }
}
