public import DecantCore
import DecantCodecs
internal import CSQLite
import DecantFormats
import Foundation
import GRDB

/// Streams the objects of a Core Data SQLite store as record batches, one concrete entity at a time, in
/// `Z_PK` order.
///
/// To-one relationships come from their foreign-key (and entity-key) columns; many-to-many and to-many-without-
/// inverse members are merged in from the join table or hidden key with a second cursor ordered the same way, so
/// nothing but the current batch is held in memory. To-many relationships with a to-one inverse are
/// ``RelationshipValue/viaInverse``.
///
/// ```swift
/// let store = try SQLiteStore(contentsOf: url)
/// var reader = try SQLiteStoreReader(store: store, model: try store.resolveModel(bundle: nil))
/// var batch = RecordBatch(layout: RecordLayout(entity: "Note", in: reader.model)!)
/// while try reader.nextBatch(into: &batch) { print(batch.count) }
/// ```
public final class SQLiteStoreReader: SelectingRecordReader, PartedRecordReader {
    /// The model the store was written with.
    public let model: ObjectModel
    /// The store schema derived from the model, in the store's framework style.
    public let schema: StoreSchema
    /// Records per batch.
    public var batchSize: Int
    /// The to-many members past which a batch takes no further record, so that a batch of records with huge
    /// to-many relationships holds one such record rather than ``batchSize`` of them.
    public var membersPerBatch = 1 << 16
    /// When set, the most members of one to-many list a record carries: a longer list is cut there and its further
    /// members follow in continuation batches (``RecordBatch/Continuation``); nil: records come whole.
    public var memberPartSize: Int?
    /// What happens to externally stored values whose file is missing.
    public let missingExternalData: MissingExternalDataPolicy
    /// Externally stored values read under a `keep` or `null` policy whose file was missing, one per value.
    public internal(set) var diagnostics: [Diagnostic] = []

    let store: SQLiteStore
    private let entityNames: [String]
    let entityIndexByNumber: [Int: Int32]
    /// Each entity's number in this store (``SQLiteStore/entityNumbers(for:)``).
    let entityNumbers: [String: Int]
    private var pending: [Int]
    private var current: EntityCursor?
    /// Rows read or left out by the selection per table, to prove at the end that every row belongs to an entity
    /// of the model.
    var rowsRead: [String: Int] = [:]
    /// The selection applied here: the entities taken, a SQL condition and order per entity.
    private var taken: Set<String>?
    var conditions: [String: String] = [:]
    var orders: [String: String] = [:]
    /// Objects the selection left out, per entity.
    public internal(set) var filteredOut: [String: Int] = [:]
    private var verified = false

    /// Creates a reader of `store` whose records follow `model` (see ``SQLiteStore/resolveModel(bundle:)``).
    public init(
        store: SQLiteStore, model: ObjectModel, batchSize: Int = 1024,
        missingExternalData: MissingExternalDataPolicy = .fail
    ) throws {
        self.store = store
        self.model = model
        self.batchSize = max(1, batchSize)
        self.missingExternalData = missingExternalData
        self.schema = try StoreSchema(
            model: model, style: SchemaStyle(frameworkVersion: store.metadata.frameworkVersion ?? 1344))
        self.entityNames = model.entities.map(\.name)
        var indexByNumber: [Int: Int32] = [:]
        let numbers = store.entityNumbers(for: schema)
        for (index, name) in entityNames.enumerated() {
            if let number = numbers[name] { indexByNumber[number] = Int32(index) }
        }
        self.entityNumbers = numbers
        self.entityIndexByNumber = indexByNumber
        self.pending = Array(model.entities.indices).reversed()
        if let problem = store.modelCacheProblem {
            diagnostics.append(
                Diagnostic(
                    .unreadableModelCache,
                    "the store's Z_MODELCACHE cannot be decoded (\(problem.message)); the model given is used",
                    at: problem.location ?? Location(path: store.displayPath)))
        }
    }

    /// Applies at the source what SQLite can evaluate exactly: the entities taken, each `AND` term of the predicate
    /// that translates to SQL for every taken entity, and the sort when every key does; returns the rest.
    public func apply(_ selection: RecordSelection) throws -> RecordSelection {
        try selection.validate(against: model)
        taken = selection.entities
        let entities = model.entities.map(\.name).filter { selection.takes($0) }
        var residual: [ObjectPredicate] = []
        var pushed: [String: [String]] = [:]
        for term in selection.predicate?.conjuncts ?? [] {
            var translated: [String: String] = [:]
            for entity in entities {
                var sql = PredicateSQL(schema: schema, model: model)
                guard let condition = sql.condition(term, entity: entity) else { break }
                translated[entity] = condition
            }
            if translated.count == entities.count {
                for (entity, condition) in translated { pushed[entity, default: []].append(condition) }
            } else {
                residual.append(term)
            }
        }
        conditions = pushed.mapValues { PredicateSQL.balanced($0[...], " AND ") }
        var sortsHere: [String: String] = [:]
        for entity in entities where !selection.sort.isEmpty {
            var sql = PredicateSQL(schema: schema, model: model)
            let keys = selection.sort.compactMap { sql.sortExpression($0, entity: entity) }
            guard keys.count == selection.sort.count else { break }
            sortsHere[entity] = keys.joined(separator: ", ")
        }
        let sortedHere = sortsHere.count == entities.count
        orders = sortedHere ? sortsHere : [:]
        return RecordSelection(
            entities: nil, predicate: residual.isEmpty ? nil : ObjectPredicate.all(residual),
            sort: sortedHere ? [] : selection.sort)
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        while true {
            if current == nil {
                guard let next = pending.popLast() else {
                    try verifyEveryRowRead()
                    return false
                }
                let entity = model.entities[next]
                guard taken?.contains(entity.name) ?? true else {
                    try leaveOut(entity)
                    continue
                }
                current = try EntityCursor(reader: self, entity: entity)
            }
            guard let cursor = current else { return false }
            batch.removeAll(newLayout: cursor.layout)
            batch.entityNames = entityNames
            let more = try store.connection.inDatabase { db in
                try cursor.fill(&batch, limit: batchSize, partSize: memberPartSize, db: db)
            }
            rowsRead[cursor.table, default: 0] += batch.count
            if !more { current = nil }
            if batch.count > 0 || batch.continuation != nil { return true }
        }
    }

    /// Counts the rows of an entity the selection does not take.
    private func leaveOut(_ entity: Entity) throws {
        guard let mapping = schema.entity(named: entity.name) else { return }
        let count = try count(
            "SELECT COUNT(*) FROM \(mapping.tableName) AS t\(ownRowsCondition(entity.name).map { " WHERE \($0)" } ?? "")",
            entity: entity.name)
        if count > 0 { filteredOut[entity.name, default: 0] += count }
        rowsRead[mapping.tableName, default: 0] += count
    }

    /// The condition on the table alias `t` that picks `entityName`'s own rows from its table (`t.Z_ENT = 3`), or
    /// nil when the entity has the table to itself: Core Data's fetch of an entity without sub-entities selects
    /// every row of its table and never reads `Z_ENT` there (section 1.9), so neither does Decant.
    public func ownRowsCondition(_ entityName: String, alias: String = "t") -> String? {
        guard let mapping = schema.entity(named: entityName) else { return nil }
        if ownsTable(entityName) { return nil }
        return "\(alias).Z_ENT = \(entityNumbers[entityName] ?? mapping.number)"
    }

    /// Whether `entityName` is the only entity stored in its table.
    public func ownsTable(_ entityName: String) -> Bool {
        guard let table = schema.entity(named: entityName)?.tableName else { return false }
        return schema.entities.allSatisfy { $0.name == entityName || $0.tableName != table }
    }

    /// Runs a `SELECT COUNT(*)`.
    func count(_ sql: String, entity: String) throws -> Int {
        do {
            return try store.connection.inDatabase { db in try Int.fetchOne(db, sql: sql) ?? 0 }
        } catch {
            throw DatabaseFailure.wrap(error, "cannot count objects", at: Location(path: store.displayPath, entity: entity))
        }
    }

    /// How many primary keys a ``Diagnostic/Kind/strayEntityNumber`` warning names.
    static let strayKeysShown = 5

    /// What one entity table holds: its rows, its entities, and the rows whose `Z_ENT` Core Data does not fetch by
    /// (none of its entities' numbers), with the first of their primary keys.
    private struct TableSurvey {
        var table: String
        var members: [String]
        var numbers: [Int]
        var total: Int
        var strayRows: Int
        var strayKeys: [Int64]
    }

    private func survey(_ table: String) throws -> TableSurvey {
        let members = schema.entities.filter { $0.tableName == table }.map(\.name)
        let numbers = members.compactMap { entityNumbers[$0] }.sorted()
        let stray = "Z_ENT IS NULL OR Z_ENT NOT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        do {
            return try store.connection.inDatabase { db in
                // One pass over the table counts both (a table of a million rows takes tens of milliseconds a pass);
                // the keys are looked for only when there are stray rows.
                let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COUNT(*) FILTER (WHERE \(stray)) FROM \(table)")
                let strayRows: Int = row?[1] ?? 0
                return TableSurvey(
                    table: table, members: members, numbers: numbers, total: row?[0] ?? 0, strayRows: strayRows,
                    strayKeys: strayRows == 0
                        ? []
                        : try Int64.fetchAll(
                            db, sql: "SELECT Z_PK FROM \(table) WHERE \(stray) ORDER BY Z_PK LIMIT \(Self.strayKeysShown)"))
            }
        } catch {
            throw DatabaseFailure.wrap(error, "cannot count the rows of \(table)", at: Location(path: store.displayPath))
        }
    }

    /// The warning for a table's stray rows (nil when it has none): in a table an entity has to itself they are read
    /// as that entity, in a table shared by a hierarchy they are left out, as Core Data's fetches do either.
    private func strayDiagnostic(_ survey: TableSurvey) -> Diagnostic? {
        guard survey.strayRows > 0 else { return nil }
        let keys = survey.strayKeys.map(String.init).joined(separator: ", ")
            + (survey.strayRows > survey.strayKeys.count ? ", …" : "")
        let rows = survey.strayRows == 1 ? "1 row of \(survey.table) (Z_PK \(keys)) has" : "\(survey.strayRows) rows of "
            + "\(survey.table) (Z_PK \(keys)) have"
        if survey.members.count == 1, let entity = survey.members.first {
            return Diagnostic(
                .strayEntityNumber,
                "\(rows) a Z_ENT other than \(entity)'s \(survey.numbers.first ?? 0): read as \(entity) objects, as Core "
                    + "Data reads a table whose entity has no sub-entities",
                at: Location(path: store.displayPath, entity: entity))
        }
        return Diagnostic(
            .strayEntityNumber,
            "\(rows) a Z_ENT that is none of its entities' (\(survey.numbers.map(String.init).joined(separator: ", "))): "
                + "left out, as Core Data's fetches never return them",
            at: Location(path: store.displayPath))
    }

    /// The warnings for every entity table's stray rows (``Diagnostic/Kind/strayEntityNumber``), for a run that does
    /// not read the rows through this reader (a migration inside SQLite).
    public func strayRowDiagnostics() throws -> [Diagnostic] {
        try strayRowDiagnostics(surveying: Set(schema.entities.map(\.tableName))).sorted { $0.key < $1.key }.map(\.value)
    }

    /// The warning for the stray rows of each table in `tables` that has any, surveyed (a pass over the table), and
    /// of each table in `counted`, whose stray rows were counted as they were copied (their count and first keys):
    /// by table name.
    public func strayRowDiagnostics(
        surveying tables: Set<String>, counted: [String: (count: Int, keys: [Int64])] = [:]
    ) throws -> [String: Diagnostic] {
        var result: [String: Diagnostic] = [:]
        for table in tables.sorted() { result[table] = strayDiagnostic(try survey(table)) }
        for (table, stray) in counted {
            let members = schema.entities.filter { $0.tableName == table }.map(\.name)
            result[table] = strayDiagnostic(
                TableSurvey(
                    table: table, members: members, numbers: members.compactMap { entityNumbers[$0] }.sorted(),
                    total: 0, strayRows: stray.count, strayKeys: stray.keys))
        }
        return result
    }

    /// Checks, once all entities are read, that each entity table had no rows besides those read, and warns of the
    /// rows whose `Z_ENT` Core Data does not fetch by (``strayDiagnostic(_:)``): neither passes without a word.
    private func verifyEveryRowRead() throws {
        guard !verified else { return }
        verified = true
        for table in Set(schema.entities.map(\.tableName)).sorted() {
            let found = try survey(table)
            let read = rowsRead[table, default: 0]
            // An entity alone in its table reads every row; a hierarchy's table every row but the stray ones.
            guard found.total == read + (found.members.count == 1 ? 0 : found.strayRows) else {
                throw DecantError(
                    .internalError,
                    "\(table) has \(found.total) rows but \(read) were read and \(found.strayRows) have a Z_ENT that is "
                        + "not one of " + found.numbers.map(String.init).joined(separator: ", "),
                    at: Location(path: store.displayPath))
            }
            if let diagnostic = strayDiagnostic(found) { diagnostics.append(diagnostic) }
        }
    }

    /// Reads every record of one entity (for tests and small stores).
    public func records(of entityName: String) throws -> [DecantCore.Record] {
        guard let entity = model.entity(named: entityName) else { return [] }
        let cursor = try EntityCursor(reader: self, entity: entity)
        var batch = RecordBatch(layout: cursor.layout, entityNames: entityNames)
        var result: [DecantCore.Record] = []
        var more = true
        while more {
            batch.removeAll()
            batch.entityNames = entityNames
            more = try store.connection.inDatabase { db in
                try cursor.fill(&batch, limit: batchSize, partSize: nil, db: db)
            }
            result += (0..<batch.count).map { batch.record(at: $0) }
        }
        return result
    }

    /// The queries of `entityName`'s to-many members read here, in layout order (for tests).
    func memberQueries(of entityName: String) throws -> [String] {
        guard let entity = model.entity(named: entityName) else { return [] }
        return try EntityCursor(reader: self, entity: entity).sources.compactMap { source in
            guard case .members(let cursor) = source else { return nil }
            return cursor.mergedSQL
        }
    }

    /// For tests: many-to-many members' entities always come from a join with the destination's table, as for a
    /// destination with sub-entities, so that the two queries can be compared on one store.
    var forceMemberEntityJoin = false
}

@available(*, unavailable)
extension SQLiteStoreReader: Sendable {}
