/// One version of a managed object model (`NSManagedObjectModel`).
///
/// ```swift
/// let model = bundle.currentVersion
/// for entity in model.entities { print(entity.name, model.versionHash(of: entity.name)?.base64EncodedString() ?? "") }
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// The version name (`Notes 2` for `Notes 2.xcdatamodel` or `Notes 2.mom`), when known.
    public var versionName: String?
    /// The entities, in source order.
    public var entities: [Entity]
    /// `userDefinedModelVersionIdentifier`, as the model's version identifiers (usually zero or one).
    public var versionIdentifiers: [String]
    /// Named configurations.
    public var configurations: [ModelConfiguration]
    /// Model-level fetch request templates.
    public var fetchRequests: [FetchRequestTemplate]
    /// Composite attribute types.
    public var composites: [CompositeType]
    /// Model-level user info.
    public var userInfo: [String: UserInfoValue]
    /// Source-level facts that do not affect the compiled model (`lastSavedToolsVersion`, `sourceLanguage`, …).
    public var sourceInfo: [String: String]

    /// Creates a model.
    public init(versionName: String? = nil, entities: [Entity], versionIdentifiers: [String] = []) {
        self.versionName = versionName
        self.entities = entities
        self.versionIdentifiers = versionIdentifiers
        self.configurations = []
        self.fetchRequests = []
        self.composites = []
        self.userInfo = [:]
        self.sourceInfo = [:]
    }

    /// The entity with this name.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The entity's parent.
    public func parent(of entity: Entity) -> Entity? {
        entity.parentName.flatMap { self.entity(named: $0) }
    }

    /// The entity's direct sub-entities, in model order.
    public func subentities(of entity: Entity) -> [Entity] {
        entities.filter { $0.parentName == entity.name }
    }

    /// The root of the entity's inheritance hierarchy (the entity itself when it has no parent).
    ///
    /// A cycle in `parentEntity` stops at the entity where it closes.
    public func root(of entity: Entity) -> Entity {
        var current = entity
        var seen: Set<String> = [entity.name]
        while let parent = parent(of: current), seen.insert(parent.name).inserted { current = parent }
        return current
    }

    /// The entity's ancestors, nearest first.
    public func ancestors(of entity: Entity) -> [Entity] {
        ancestors(of: entity, parent: parent(of:))
    }

    /// The entity's ancestors, nearest first, with `parent` finding each one's parent (a lookup by name that callers
    /// walking many entities index once).
    func ancestors(of entity: Entity, parent: (Entity) -> Entity?) -> [Entity] {
        var result: [Entity] = []
        var seen: Set<String> = [entity.name]
        var current = entity
        while let parent = parent(current), seen.insert(parent.name).inserted {
            result.append(parent)
            current = parent
        }
        return result
    }

    /// The entity's attributes and relationships including inherited ones: the nearest declaration of each
    /// name wins. Fetched properties are not included.
    public func properties(of entity: Entity) -> (attributes: [Attribute], relationships: [Relationship]) {
        properties(of: entity, ancestors: ancestors(of: entity))
    }

    /// ``properties(of:)`` with the entity's ancestors (nearest first) already found.
    func properties(of entity: Entity, ancestors: [Entity]) -> (attributes: [Attribute], relationships: [Relationship]) {
        var attributes: [String: Attribute] = [:]
        var relationships: [String: Relationship] = [:]
        var order: [String] = []
        for declaring in ([entity] + ancestors).reversed() {
            for attribute in declaring.attributes {
                if attributes[attribute.name] == nil && relationships[attribute.name] == nil { order.append(attribute.name) }
                relationships[attribute.name] = nil
                attributes[attribute.name] = attribute
            }
            for relationship in declaring.relationships {
                if attributes[relationship.name] == nil && relationships[relationship.name] == nil {
                    order.append(relationship.name)
                }
                attributes[relationship.name] = nil
                relationships[relationship.name] = relationship
            }
        }
        return (order.compactMap { attributes[$0] }, order.compactMap { relationships[$0] })
    }
}
