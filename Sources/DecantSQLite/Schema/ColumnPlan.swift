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
    /// Attributes of the layout that have no column (types with no SQLite layout, such as composites): the reader
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
        for (position, attribute) in layout.attributes.enumerated() {
            if let column = mapping.attributeColumns[attribute.name] {
                stored.append(AttributeColumn(position: position, attribute: attribute, column: column))
            } else {
                unstored.append(AttributeColumn(position: position, attribute: attribute, column: ""))
            }
        }
        self.attributes = stored
        self.unstored = unstored
        self.relationships = layout.relationships.enumerated().map { position, relationship in
            RelationshipColumn(
                position: position, relationship: relationship, storage: mapping.relationships[relationship.name])
        }
    }
}
