internal import CSQLite
import DecantCore

/// The schema of a SQLite database as SQLite itself reports it: tables with their columns and declared types,
/// indexes with their table, uniqueness and column list. Two snapshots compare as sets (column order ignored).
///
/// ```swift
/// let expected = try SQLiteSchemaSnapshot(schema: StoreSchema(model: model, style: .init(frameworkVersion: 637)))
/// let actual = try SQLiteSchemaSnapshot(contentsOf: storePath)
/// print(expected.differences(from: actual).joined(separator: "\n"))
/// ```
public struct SQLiteSchemaSnapshot: Sendable, Hashable {
    /// A table: its columns as a set.
    public struct Table: Sendable, Hashable {
        /// The table name.
        public var name: String
        /// Column name → declared type (as written, e.g. `INTEGER`, `VARCHAR(255)`).
        public var columns: [String: String]
    }

    /// An index.
    public struct Index: Sendable, Hashable {
        /// The index name (`sqlite_autoindex_…` for PRIMARY KEY and UNIQUE clauses).
        public var name: String
        /// The indexed table.
        public var table: String
        /// Whether it enforces uniqueness.
        public var isUnique: Bool
        /// The key columns in order, each followed by ` DESC` when descending.
        public var columns: [String]
    }

    /// Tables by name.
    public var tables: [String: Table]
    /// Indexes by name.
    public var indexes: [String: Index]

    /// Creates a snapshot from parts.
    public init(tables: [Table], indexes: [Index]) {
        self.tables = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.indexes = Dictionary(indexes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Reads the schema of the database file at `path`, opened read-only. Open only a copy of a WAL store: even a
    /// read-only open may write its `-shm` file.
    public init(contentsOf path: String) throws {
        let connection = try RawDatabase(path: path, flags: SQLITE_OPEN_READONLY)
        try self.init(connection: connection)
    }

    /// The schema `StoreSchema.createStatements` produces, read back from an in-memory database they were run in.
    public init(schema: StoreSchema) throws {
        let connection = try RawDatabase(path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        for statement in schema.createStatements { try connection.execute(statement) }
        try self.init(connection: connection)
    }

    init(connection: RawDatabase) throws {
        var tables: [Table] = []
        var indexes: [Index] = []
        let tableNames = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            .compactMap { $0.first ?? nil }
        for table in tableNames {
            var columns: [String: String] = [:]
            for row in try connection.rows("PRAGMA table_info(\(Self.quoted(table)))") where row.count >= 3 {
                if let name = row[1] { columns[name] = row[2] ?? "" }
            }
            tables.append(Table(name: table, columns: columns))
            for row in try connection.rows("PRAGMA index_list(\(Self.quoted(table)))") where row.count >= 3 {
                guard let name = row[1] else { continue }
                var keyColumns: [String] = []
                // index_xinfo: seqno, cid, name, desc, coll, key
                for info in try connection.rows("PRAGMA index_xinfo(\(Self.quoted(name)))") where info.count >= 6 {
                    guard info[5] == "1" else { continue }
                    let column = info[2] ?? "<expression>"
                    keyColumns.append(info[3] == "1" ? column + " DESC" : column)
                }
                indexes.append(Index(name: name, table: table, isUnique: row[2] == "1", columns: keyColumns))
            }
        }
        self.init(tables: tables, indexes: indexes)
    }

    private static func quoted(_ name: String) -> String {
        "\"" + String(name.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
    }

    /// A copy without the tables `isExcluded` selects and without their indexes (e.g. history tables `A…`).
    public func removingTables(where isExcluded: (String) -> Bool) -> SQLiteSchemaSnapshot {
        var copy = self
        copy.tables = tables.filter { !isExcluded($0.key) }
        copy.indexes = indexes.filter { !isExcluded($0.value.table) }
        return copy
    }

    /// Readable differences, one line each: `-` only in `self`, `+` only in `other`, `~` present in both but
    /// different. Empty when the snapshots are equal.
    public func differences(from other: SQLiteSchemaSnapshot) -> [String] {
        var lines: [String] = []
        for name in Set(tables.keys).union(other.tables.keys).sorted() {
            switch (tables[name], other.tables[name]) {
            case let (mine?, theirs?) where mine != theirs:
                for column in Set(mine.columns.keys).union(theirs.columns.keys).sorted() {
                    switch (mine.columns[column], theirs.columns[column]) {
                    case let (left?, right?) where left != right:
                        lines.append("~ table \(name): column \(column) \(left) vs \(right)")
                    case let (left?, nil): lines.append("- table \(name): column \(column) \(left)")
                    case let (nil, right?): lines.append("+ table \(name): column \(column) \(right)")
                    default: break
                    }
                }
            case let (mine?, nil): lines.append("- table \(name) (\(mine.columns.keys.sorted().joined(separator: ", ")))")
            case let (nil, theirs?): lines.append("+ table \(name) (\(theirs.columns.keys.sorted().joined(separator: ", ")))")
            default: break
            }
        }
        for name in Set(indexes.keys).union(other.indexes.keys).sorted() {
            switch (indexes[name], other.indexes[name]) {
            case let (mine?, theirs?) where mine != theirs:
                lines.append("~ index \(name): \(Self.describe(mine)) vs \(Self.describe(theirs))")
            case let (mine?, nil): lines.append("- index \(name): \(Self.describe(mine))")
            case let (nil, theirs?): lines.append("+ index \(name): \(Self.describe(theirs))")
            default: break
            }
        }
        return lines
    }

    private static func describe(_ index: Index) -> String {
        "\(index.isUnique ? "UNIQUE " : "")ON \(index.table) (\(index.columns.joined(separator: ", ")))"
    }
}
