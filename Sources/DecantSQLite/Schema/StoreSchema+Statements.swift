extension StoreSchema {
    /// `CREATE TABLE Z_PRIMARYKEY …`, exactly as Core Data writes it.
    public static let primaryKeyTableStatement =
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    /// `CREATE TABLE Z_METADATA …`, exactly as Core Data writes it.
    public static let metadataTableStatement =
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"
    /// `CREATE TABLE Z_MODELCACHE …`, exactly as Core Data writes it (framework 637 and later).
    public static let modelCacheTableStatement = "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)"

    /// The DDL Core Data runs to create a fresh store: entity tables, join tables, indexes and the bookkeeping
    /// tables (`Z_MODELCACHE` only when the style has it), in the order Core Data runs them.
    public var createStatements: [String] {
        var bookkeeping = [Self.primaryKeyTableStatement, Self.metadataTableStatement]
        if style.hasModelCache { bookkeeping.append(Self.modelCacheTableStatement) }
        let definitions = tables.map(\.createStatement) + joinTables.map(\.createStatement)
        let indexStatements = indexes.map(\.createStatement)
        // Stores of framework 1044 and later list the bookkeeping tables after the indexes; 637 stores before them.
        return style.usesUniqueIndexes
            ? definitions + indexStatements + bookkeeping
            : definitions + bookkeeping + indexStatements
    }
}

extension StoreSchema.Table {
    /// `CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, … )`.
    public var createStatement: String {
        var parts = columns.map { column in
            column.name == "Z_PK" ? "Z_PK INTEGER PRIMARY KEY" : "\(column.name) \(column.type)"
        }
        for constraint in uniqueConstraints {
            parts.append("CONSTRAINT \(constraint.joined(separator: "_")) UNIQUE (\(constraint.joined(separator: ", ")))")
        }
        // Core Data leaves out the space before the closing parenthesis after a constraint clause.
        let closing = uniqueConstraints.isEmpty ? " )" : ")"
        return "CREATE TABLE \(name) ( " + parts.joined(separator: ", ") + closing
    }
}

extension StoreSchema.JoinTable {
    /// The join table's columns in `CREATE TABLE` order.
    public var columns: [StoreSchema.Column] {
        ([masterColumn, slaveColumn] + orderColumns).map { StoreSchema.Column(name: $0, type: "INTEGER") }
    }

    /// `CREATE TABLE Z_1LIKES ( Z_1LIKEDBY INTEGER, Z_1LIKES INTEGER, …, PRIMARY KEY (…) )`.
    public var createStatement: String {
        let parts = columns.map { "\($0.name) \($0.type)" } + ["PRIMARY KEY (\(masterColumn), \(slaveColumn))"]
        return "CREATE TABLE \(name) ( " + parts.joined(separator: ", ") + " )"
    }
}

extension StoreSchema.Index {
    /// `CREATE [UNIQUE ]INDEX name ON table (col [COLLATE BINARY ASC], …)`.
    public var createStatement: String {
        let list = elements.map { element in element.order.map { "\(element.column) \($0)" } ?? element.column }
        return "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(list.joined(separator: ", ")))"
    }
}
