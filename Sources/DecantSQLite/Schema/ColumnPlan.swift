public import DecantCore

/// How the positions of one entity's ``RecordLayout`` map onto its table: the column of each stored attribute,
/// the attributes the table has no column for, and how each relationship is stored. The reader and the writer
/// both follow it, so they agree on every position.
///
/// ```swift
/// let plan = try ColumnPlan(layout: layout, schema: schema)
/// plan.attributes.map(\.column)    // ["ZDATE", "ZTEXT"]
/// ```
public struct ColumnPlan: Sendable, Hashable {
    /// One stored attribute: its position in the layout and its column.
    public struct AttributeColumn: Sendable, Hashable {
        /// The position in ``RecordLayout/attributes``.
        public var position: Int
        /// The attribute.
        public var attribute: Attribute
        /// The column holding it.
        public var column: String
    }

    /// One composite attribute: its position in the layout and the columns of its elements (12.5). Its value is a
    /// ``Value/composite(_:)`` keyed by element name; a row whose element columns are all NULL reads as null.
    public struct CompositeColumns: Sendable, Hashable {
        /// The position in ``RecordLayout/attributes``.
        public var position: Int
        /// The composite attribute.
        public var attribute: Attribute
        /// Its elements' columns, in element order.
        public var elements: [StoreSchema.ElementColumn]
    }

    /// One relationship: its position in ``RecordLayout/relationships`` and its storage (`nil`: none, for a
    /// relationship the schema does not store).
    public struct RelationshipColumn: Sendable, Hashable {
        /// The position in ``RecordLayout/relationships``.
        public var position: Int
        /// The relationship.
        public var relationship: Relationship
        /// Where its values live.
        public var storage: StoreSchema.RelationshipStorage?
    }

    /// The entity's table, number and columns.
    public let mapping: StoreSchema.EntityMapping
    /// Attributes with a column, in layout order.
    public let attributes: [AttributeColumn]
    /// Composite attributes, in layout order, each stored across its element columns.
    public let composites: [CompositeColumns]
    /// Attributes of the layout that have no column (types with no SQLite layout): the reader
    /// yields nil for them and the writer reports values it cannot store.
    public let unstored: [AttributeColumn]
    /// Every relationship of the layout, in layout order.
    public let relationships: [RelationshipColumn]

    /// The plan of `layout` in `schema`.
    /// - Throws: `.modelMismatch` when the schema has no entity of that name.
    public init(layout: RecordLayout, schema: StoreSchema, path: String? = nil) throws {
        guard let mapping = schema.entity(named: layout.entityName) else {
            throw DecantError(
                .modelMismatch, "the store's model has no entity \(layout.entityName)",
                at: Location(path: path, entity: layout.entityName))
        }
        self.mapping = mapping
        var stored: [AttributeColumn] = []
        var unstored: [AttributeColumn] = []
        var composites: [CompositeColumns] = []
        for (position, attribute) in layout.attributes.enumerated() {
            if let elements = mapping.compositeColumns[attribute.name] {
                composites.append(CompositeColumns(position: position, attribute: attribute, elements: elements))
            } else if let column = mapping.attributeColumns[attribute.name] {
                stored.append(AttributeColumn(position: position, attribute: attribute, column: column))
            } else {
                unstored.append(AttributeColumn(position: position, attribute: attribute, column: ""))
            }
        }
        self.attributes = stored
        self.unstored = unstored
        self.composites = composites
        self.relationships = layout.relationships.enumerated().map { position, relationship in
            RelationshipColumn(
                position: position, relationship: relationship, storage: mapping.relationships[relationship.name])
        }
    }
}
