internal import CSQLite
import DecantCore
import GRDB

/// The external ids of the objects a ``SQLiteStoreWriter`` writes (an XML store's `z102`, a CSV key, a JSON id) and
/// the references that name them, resolved set-wise inside SQLite rather than through a map per object, so that
/// memory does not grow with the input and the cost stays linear in it.
///
/// An object with an external id gets the next free key of its table when it is written; its id and key go to
/// `temp.decant_ids` (an append, no index, ``chunk`` rows a statement). A reference naming an id is resolved at once
/// when the id is among the first `memoryBound` ids seen (the ones a small destination entity has, typically); any other goes to
/// `temp.decant_refs` with the row and column it belongs to. ``resolve(_:entityOfTable:highestKey:noteKey:)`` (from the writer's `finish()`)
/// builds one unique index on the ids, which also finds an id two objects share, then fills every staged
/// reference with one statement per target (a to-one column, a join table, a staged hidden key). A reference to
/// an id no object has receives a key of its own, as a key allocated on first sight did: it points to no row.
///
/// ```swift
/// let key = try identities.stageObject(name: bytes, scope: scope, key: next, db: db)
/// try identities.resolve(db, entityOfTable: { $0 }, highestKey: { _ in 0 }, noteKey: { _, _ in })
/// ```
final class ExternalIdentities {
    /// Where a staged reference's key goes.
    enum Target {
        /// The key column of `table` in the row whose `Z_PK` is the reference's owner.
        case toOne(table: String, column: String)
        /// A row of a many-to-many join table: owner, member and, when ordered, the member's position.
        case joinTable(StoreSchema.JoinLink)
        /// A link staged in `temp.decant_hidden_keys` under this key id (owner entity in the reference's entity).
        case hiddenKey(id: Int)
    }

    /// Ids kept in memory to resolve references at once.
    private let memoryBound: Int
    /// Per scope: the keys of its ids kept in memory, by the ids' UTF-8 bytes (compared as SQLite compares the
    /// staged ids, byte for byte, and looked up without a copy of the bytes).
    private var memory: [ByteStringTable<Int64>] = []
    /// The ids kept in memory, in all scopes.
    private var remembered = 0
    private var scopes: [String: Int64] = [:]
    private var scopeNames: [String] = []
    private var targets: [Target] = []
    private var insertID: Statement?
    private var insertIDs: Statement?
    private var insertReference: Statement?
    /// Ids waiting to go into `temp.decant_ids`: their scopes and keys, and their names' UTF-8 bytes in `pendingNames`
    /// (each ending where `pendingEnds` says).
    private var pendingScopes: [Int64] = []
    private var pendingKeys: [Int64] = []
    private var pendingEnds: [Int] = []
    private var pendingNames: [UInt8] = []
    /// Ids staged by one statement (one step for many rows costs far less than a step per id).
    static let chunk = 64
    /// Whether ids with no key in memory were staged (nothing to check or resolve otherwise).
    private var idsStaged = false
    private var referencesStaged = false

    /// Identities resolving references to the first `memoryBound` ids in memory.
    init(memoryBound: Int) {
        self.memoryBound = max(0, memoryBound)
    }

    /// The number of `table` (a scope of ids).
    func scope(of table: String) -> Int64 {
        if let known = scopes[table] { return known }
        let number = Int64(scopeNames.count)
        scopes[table] = number
        scopeNames.append(table)
        memory.append(ByteStringTable())
        return number
    }

    /// Registers where staged references of one relationship go; returns its number.
    func register(_ target: Target) -> Int {
        targets.append(target)
        return targets.count - 1
    }

    /// Notes that the object named `name` (UTF-8) in `scope` received `key`.
    func stageObject(name: UnsafeRawBufferPointer, scope: Int64, key: Int64, db: Database) throws {
        if remembered < memoryBound {
            memory[Int(scope)].insert(key, for: name)
            remembered += 1
        }
        idsStaged = true
        pendingScopes.append(scope)
        pendingKeys.append(key)
        pendingNames.append(contentsOf: name)
        pendingEnds.append(pendingNames.count)
        if pendingKeys.count == Self.chunk { try flushIDs(db) }
    }

    /// Inserts the ids waiting, in the order they came (a whole chunk in one statement, the rest one by one).
    private func flushIDs(_ db: Database) throws {
        guard !pendingKeys.isEmpty else { return }
        defer {
            pendingScopes.removeAll(keepingCapacity: true)
            pendingKeys.removeAll(keepingCapacity: true)
            pendingEnds.removeAll(keepingCapacity: true)
            pendingNames.removeAll(keepingCapacity: true)
        }
        let whole = pendingKeys.count == Self.chunk
        let statement: Statement
        if whole {
            statement = try insertIDs
                ?? prepare(db, Self.idsSchema, "INSERT INTO temp.decant_ids VALUES "
                    + Array(repeating: "(?, ?, ?)", count: Self.chunk).joined(separator: ", "))
            insertIDs = statement
        } else {
            statement = try insertID ?? prepare(db, Self.idsSchema, "INSERT INTO temp.decant_ids VALUES (?, ?, ?)")
            insertID = statement
        }
        let handle = statement.sqliteStatement
        try pendingNames.withUnsafeBufferPointer { names in
            var start = 0
            for (row, end) in pendingEnds.enumerated() {
                let first = whole ? Int32(row) * 3 : 0
                sqlite3_bind_int64(handle, first + 1, pendingScopes[row])
                if let base = names.baseAddress, end > start {
                    let text = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
                    sqlite3_bind_text(handle, first + 2, text, Int32(end - start), nil)
                } else {
                    sqlite3_bind_text(handle, first + 2, "", 0, sqliteTransient)  // an empty id is text, not NULL
                }
                sqlite3_bind_int64(handle, first + 3, pendingKeys[row])
                start = end
                if !whole { try step(handle, db) }
            }
            if whole { try step(handle, db) }
        }
    }

    /// The key of the object named `name` in `scope`, when it is known in memory.
    func knownKey(name: UnsafeRawBufferPointer, scope: Int64) -> Int64? {
        guard remembered > 0 else { return nil }
        return memory[Int(scope)].value(for: name)
    }

    /// Stages a reference from the row `owner` through `target` to the object named `name` in `scope`; `entity`
    /// and `position` are what the target needs besides the key (a hidden key's owner entity, a member's order).
    func stageReference(
        target: Int, owner: Int64, name: UnsafeRawBufferPointer, scope: Int64, entity: Int64, position: Int64,
        db: Database
    ) throws {
        let statement =
            try insertReference
            ?? prepare(db, Self.referencesSchema, "INSERT INTO temp.decant_refs VALUES (?, ?, ?, ?, ?, ?)")
        insertReference = statement
        referencesStaged = true
        let handle = statement.sqliteStatement
        sqlite3_bind_int64(handle, 1, Int64(target))
        sqlite3_bind_int64(handle, 2, owner)
        sqlite3_bind_int64(handle, 3, scope)
        sqlite3_bind_text(handle, 4, name.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(name.count), nil)
        sqlite3_bind_int64(handle, 5, entity)
        sqlite3_bind_int64(handle, 6, position)
        try step(handle, db)
    }

    /// Finalizes the prepared statements (before the connection closes); nothing can be staged afterwards, and ids
    /// not yet inserted are dropped (the writer is abandoned, or resolved them first).
    func close() {
        insertID = nil
        insertIDs = nil
        insertReference = nil
    }

    /// Checks that no two objects share an id and fills every staged reference; a reference to an id no object has
    /// gets the next key past `highestKey(table)`, noted with `noteKey`. Hidden keys staged here must be applied afterwards.
    /// - Throws: `.malformedInput` naming the entity and the id two objects share.
    func resolve(
        _ db: Database, entityOfTable: (String) -> String, highestKey: (String) -> Int64,
        noteKey: (Int64, String) -> Void
    ) throws {
        try flushIDs(db)
        close()
        memory = memory.map { _ in ByteStringTable() }
        remembered = 0
        if idsStaged {
            do {
                try db.execute(sql: "CREATE UNIQUE INDEX temp.decant_ids_name ON decant_ids (scope, name)")
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT scope, name FROM temp.decant_ids GROUP BY scope, name HAVING COUNT(*) > 1 "
                        + "ORDER BY MIN(rowid) LIMIT 1")
                let table = row.map { scopeNames[Int($0[0] as Int64)] } ?? ""
                let name: String = row?[1] ?? ""
                let entity = entityOfTable(table)
                throw DecantError(
                    .malformedInput,
                    "two objects of \(entity) have the id \(name.debugDescription): an object's id (its _id, or its "
                        + "key) must be unique in its entity hierarchy",
                    at: Location(entity: entity, object: "\(entity)/\(name)"))
            }
        }
        guard referencesStaged else { return }
        if !idsStaged {
            try db.execute(sql: Self.idsSchema)
            try db.execute(sql: "CREATE UNIQUE INDEX temp.decant_ids_name ON decant_ids (scope, name)")
        }
        // Ids no object has: a key each past the table's highest, in the order they were first named, as keys
        // allocated on first sight were.
        for (number, table) in scopeNames.enumerated() {
            let highest = highestKey(table)
            try db.execute(
                sql: "INSERT INTO temp.decant_ids (scope, name, key) SELECT ?, name, ? + ROW_NUMBER() OVER "
                    + "(ORDER BY MIN(rowid)) FROM temp.decant_refs r WHERE scope = ? AND NOT EXISTS (SELECT 1 FROM "
                    + "temp.decant_ids i WHERE i.scope = r.scope AND i.name = r.name) GROUP BY name",
                arguments: [number, highest, number])
            if db.changesCount > 0 { noteKey(highest + Int64(db.changesCount), table) }
        }
        for (number, target) in targets.enumerated() {
            let staged =
                "SELECT r.owner AS owner, i.key AS key, r.entity AS entity, r.position AS position "
                + "FROM temp.decant_refs r JOIN temp.decant_ids i ON i.scope = r.scope AND i.name = r.name "
                + "WHERE r.target = \(number)"
            switch target {
            case .toOne(let table, let column):
                try db.execute(
                    sql: "UPDATE \(table) SET \(column) = s.key FROM (\(staged)) AS s WHERE \(table).Z_PK = s.owner")
            case .joinTable(let link):
                if let order = link.orderColumn {
                    try db.execute(
                        sql: "INSERT INTO \(link.table) (\(link.sourceColumn), \(link.destinationColumn), \(order)) "
                            + "SELECT owner, key, position FROM (\(staged)) WHERE true "
                            + "ON CONFLICT DO UPDATE SET \(order) = excluded.\(order)")
                } else {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO \(link.table) (\(link.sourceColumn), \(link.destinationColumn)) "
                            + "SELECT owner, key FROM (\(staged))")
                }
            case .hiddenKey(let id):
                try db.execute(
                    sql: "INSERT INTO temp.decant_hidden_keys (key, owner, owner_entity, member, position) "
                        + "SELECT \(id), owner, entity, key, position FROM (\(staged))")
            }
        }
        try db.execute(sql: "DROP TABLE temp.decant_refs")
        try db.execute(sql: "DROP TABLE temp.decant_ids")
    }

    private func prepare(_ db: Database, _ schema: String, _ sql: String) throws -> Statement {
        try db.execute(sql: schema)
        return try db.makeStatement(sql: sql)
    }

    private func step(_ handle: OpaquePointer, _ db: Database) throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    private static let idsSchema = "CREATE TEMP TABLE IF NOT EXISTS decant_ids (scope INTEGER, name TEXT, key INTEGER)"
    private static let referencesSchema =
        "CREATE TEMP TABLE IF NOT EXISTS decant_refs "
        + "(target INTEGER, owner INTEGER, scope INTEGER, name TEXT, entity INTEGER, position INTEGER)"
}

@available(*, unavailable)
extension ExternalIdentities: Sendable {}
