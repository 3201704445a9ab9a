/// The positional order in which records of one entity carry their values: every persistent attribute
/// (inherited ones included) sorted by name, then every persistent relationship sorted by name.
///
/// ```swift
/// let layout = RecordLayout(entity: "Note", in: model)!
/// layout.attributes.map(\.name)     // ["date", "text", "title"]
/// ```
public struct RecordLayout: Sendable, Hashable {
    /// The concrete entity.
    public let entityName: String
    /// Persistent attributes, inherited ones included, sorted by name.
    public let attributes: [Attribute]
    /// Persistent relationships, inherited ones included, sorted by name.
    public let relationships: [Relationship]

    /// The layout of an entity of `model`; `nil` if the model has no such entity.
    public init?(entity name: String, in model: ObjectModel) {
        guard let entity = model.entity(named: name) else { return nil }
        let (attributes, relationships) = model.properties(of: entity)
        self.entityName = name
        self.attributes = attributes.filter { !$0.isTransient }.sorted { $0.name < $1.name }
        self.relationships = relationships.filter { !$0.isTransient }.sorted { $0.name < $1.name }
    }

    /// The position of an attribute in ``attributes``.
    public func attributeIndex(_ name: String) -> Int? {
        attributes.firstIndex { $0.name == name }
    }

    /// The position of a relationship in ``relationships``.
    public func relationshipIndex(_ name: String) -> Int? {
        relationships.firstIndex { $0.name == name }
    }
}

extension RecordLayout {
    /// An empty batch for records of this layout.
    public func emptyBatch() -> RecordBatch { RecordBatch(layout: self) }
}
