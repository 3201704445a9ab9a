public import DecantCore

/// The exact SQLite schema Core Data creates for a model (coredata-formats.md 4.2–4.9, 4.14): entity numbers,
/// `Z_PRIMARYKEY` rows, tables, columns, join tables and indexes, with a lookup of where each property is stored.
///
/// ```swift
/// let schema = try StoreSchema(model: model)
/// let column = schema.entity(named: "Car")?.attributeColumns["nickname"]   // "ZNICKNAME"
/// for sql in schema.createStatements { try db.execute(sql: sql) }
/// ```
public struct StoreSchema: Sendable, Hashable {
    /// The framework-version rules the schema follows.
    public var style: SchemaStyle
    /// Every entity, in entity-number order.
    public var entities: [EntityMapping]
    /// One table per inheritance hierarchy, roots in case-insensitive name order.
    public var tables: [Table]
    /// Many-to-many join tables, in the order the relationship pass created them.
    public var joinTables: [JoinTable]
    /// Every index, in creation order.
    public var indexes: [Index]

    /// Builds the schema Core Data would create for `model` under `style`.
    ///
    /// - Throws: ``DecantError`` (`.malformedInput`) when a relationship names an entity the model lacks.
    public init(model: ObjectModel, style: SchemaStyle = .current) throws {
        var builder = try SchemaBuilder(model: model, style: style)
        try builder.build()
        self.style = style
        self.entities = builder.makeEntityMappings()
        self.tables = builder.tables
        self.joinTables = builder.joinTables
        self.indexes = builder.makeIndexes()
    }

    /// The entity with this name.
    public func entity(named name: String) -> EntityMapping? {
        entities.first { $0.name == name }
    }

    /// The entity with this number (`Z_ENT`).
    public func entity(number: Int) -> EntityMapping? {
        entities.first { $0.number == number }
    }

    /// The table with this name (entity or join table).
    public func table(named name: String) -> Table? {
        tables.first { $0.name == name }
    }

    /// The `Z_PRIMARYKEY` rows of a fresh store (`Z_MAX` = 0).
    public var primaryKeyRows: [PrimaryKeyRow] {
        entities.map { PrimaryKeyRow(entityNumber: $0.number, name: $0.name, superNumber: $0.superNumber, max: 0) }
    }
}

extension StoreSchema {
    /// How one entity is stored.
    public struct EntityMapping: Sendable, Hashable {
        /// The entity name.
        public var name: String
        /// The entity number (`Z_ENT`).
        public var number: Int
        /// The parent's number, 0 for a root.
        public var superNumber: Int
        /// The hierarchy table holding its rows.
        public var tableName: String
        /// The numbers of this entity and all its sub-entities (the `Z_ENT` values its fetches match).
        public var hierarchyNumbers: [Int]
        /// Column of each non-transient attribute, inherited ones included, by attribute name.
        public var attributeColumns: [String: String]
        /// The element columns of each non-transient composite attribute, inherited ones included, by attribute
        /// name (such an attribute has no entry in ``attributeColumns``).
        public var compositeColumns: [String: [ElementColumn]]
        /// Storage of each non-transient relationship, inherited ones included, by relationship name.
        public var relationships: [String: RelationshipStorage]
    }

    /// The column of one element of a composite attribute (12.5).
    public struct ElementColumn: Sendable, Hashable {
        /// The element (an attribute of the composite type).
        public var element: Attribute
        /// The column holding it.
        public var column: String
    }

    /// Where a relationship's values live.
    public enum RelationshipStorage: Sendable, Hashable {
        /// A to-one: a foreign key in the entity's own table.
        case toOne(ForeignKey)
        /// A to-many whose inverse is a to-one: the inverse's foreign key in the destination table.
        case toManyThroughInverse(ForeignKey)
        /// A to-many without inverse: a hidden foreign key Core Data adds to the destination table.
        case toManyThroughHiddenKey(ForeignKey)
        /// A many-to-many: rows of a join table.
        case manyToMany(JoinLink)
    }

    /// A foreign key column with its optional entity-key and order-key columns, all in one table.
    public struct ForeignKey: Sendable, Hashable {
        /// The table holding the key.
        public var table: String
        /// The column holding the destination's `Z_PK`.
        public var column: String
        /// The column holding the destination's `Z_ENT` (`Z<d>_<NAME>`), when the destination has sub-entities.
        public var entityColumn: String?
        /// The `Z_FOK_…` column ordering the rows of an ordered to-many that uses this key.
        public var orderColumn: String?
    }

    /// One side's view of a join table.
    public struct JoinLink: Sendable, Hashable {
        /// The join table.
        public var table: String
        /// The column holding this side's `Z_PK`.
        public var sourceColumn: String
        /// The column holding the other side's `Z_PK`.
        public var destinationColumn: String
        /// The column ordering this relationship's destinations, when it is ordered.
        public var orderColumn: String?
        /// Whether this relationship is its own inverse (`REFLEXIVE`).
        public var isReflexive: Bool
    }

    /// A column: name and declared SQL type.
    public struct Column: Sendable, Hashable {
        /// The column name.
        public var name: String
        /// The declared type (`INTEGER`, `FLOAT`, `TIMESTAMP`, `DECIMAL`, `VARCHAR`, `BLOB`).
        public var type: String
    }

    /// An entity table (one per hierarchy).
    public struct Table: Sendable, Hashable {
        /// The table name (`Z` + upper-cased root entity name).
        public var name: String
        /// The root entity's name.
        public var rootEntity: String
        /// Every column in `CREATE TABLE` order, `Z_PK`, `Z_ENT`, `Z_OPT` first.
        public var columns: [Column]
        /// Pre-1044 uniqueness constraints, as column lists (`CONSTRAINT … UNIQUE (…)` clauses).
        public var uniqueConstraints: [[String]]
    }

    /// A many-to-many join table.
    public struct JoinTable: Sendable, Hashable {
        /// The table name (`Z_<m><MASTER NAME>`).
        public var name: String
        /// The master column (holds the master side's `Z_PK`).
        public var masterColumn: String
        /// The slave column (holds the slave side's `Z_PK`), or `REFLEXIVE`.
        public var slaveColumn: String
        /// Order columns, master side's first.
        public var orderColumns: [String]
        /// `Entity.relationship` of the master side.
        public var masterRelationship: String
        /// `Entity.relationship` of the slave side.
        public var slaveRelationship: String
    }

    /// An index.
    public struct Index: Sendable, Hashable {
        /// One indexed column with its optional collation clause.
        public struct Element: Sendable, Hashable {
            /// The column name.
            public var column: String
            /// `COLLATE BINARY ASC|DESC` for modern index descriptions, `nil` for plain key indexes.
            public var order: String?
        }

        /// The index name.
        public var name: String
        /// The indexed table.
        public var table: String
        /// Whether it is `UNIQUE`.
        public var isUnique: Bool
        /// The indexed columns, in order.
        public var elements: [Element]
    }

    /// One `Z_PRIMARYKEY` row.
    public struct PrimaryKeyRow: Sendable, Hashable {
        /// `Z_ENT`.
        public var entityNumber: Int
        /// `Z_NAME`.
        public var name: String
        /// `Z_SUPER`: parent number or 0.
        public var superNumber: Int
        /// `Z_MAX`: highest primary key handed out.
        public var max: Int
    }
}
