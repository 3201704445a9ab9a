/// One object, format-independent: its entity, identity, attribute values in ``RecordLayout`` order and
/// relationships as references to other objects.
///
/// Records are the convenient, allocating view; bulk paths move ``RecordBatch``es instead.
/// ```swift
/// let note = Record(entity: "Note", id: .primaryKey(1), values: [.null, "milk", nil], relationships: [.toOne(nil)])
/// ```
public struct Record: Sendable, Hashable {
    /// The object's concrete entity.
    public var entity: String
    /// The object's identity in its source.
    public var id: RecordID
    /// Attribute values, positional against the layout's attributes.
    public var values: [Value]
    /// Relationship values, positional against the layout's relationships.
    public var relationships: [RelationshipValue]

    /// Creates a record.
    public init(entity: String, id: RecordID, values: [Value], relationships: [RelationshipValue] = []) {
        self.entity = entity
        self.id = id
        self.values = values
        self.relationships = relationships
    }

    /// This object as a reference.
    public var reference: ObjectReference { ObjectReference(entity: entity, id: id) }
}

/// What a record says about one relationship.
public enum RelationshipValue: Sendable, Hashable {
    /// A to-one relationship: the destination, or `nil`.
    case toOne(ObjectReference?)
    /// A to-many relationship whose members the source lists on this side (join tables, to-many without
    /// inverse), in order for ordered relationships.
    case toMany([ObjectReference])
    /// A to-many relationship whose membership is carried by the inverse to-one on the other objects.
    case viaInverse
}
