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
    /// The composite type of each composite attribute, by attribute name: its elements, which a composite's value
    /// (``Value/composite(_:)``) is keyed by.
    public let composites: [String: CompositeType]

    /// The layout of an entity of `model`; `nil` if the model has no such entity.
    public init?(entity name: String, in model: ObjectModel) {
        guard let entity = model.entity(named: name) else { return nil }
        let (attributes, relationships) = model.properties(of: entity)
        self.entityName = name
        self.attributes = attributes.filter { !$0.isTransient }.sorted { $0.name < $1.name }
        self.relationships = relationships.filter { !$0.isTransient }.sorted { $0.name < $1.name }
        var composites: [String: CompositeType] = [:]
        for attribute in self.attributes where attribute.type == .composite {
            if let type = model.composites.first(where: { $0.name == attribute.compositeName }) {
                composites[attribute.name] = type
            }
        }
        self.composites = composites
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
