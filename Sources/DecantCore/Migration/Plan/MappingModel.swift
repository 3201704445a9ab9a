/// How the objects of one model version become the objects of the next: one entity mapping per destination entity
/// (and one per removed source entity). An inferred hop and one a user wrote have this same form, so
/// `decant infer-mapping` can print an inferred hop as an editable file.
///
/// ```swift
/// let mapping = try MappingInference.infer(from: v1, to: v2).mapping
/// for entity in mapping.entityMappings { print(entity.name, entity.kind) }   // NoteToNote transform
/// ```
public struct MappingModel: Sendable, Hashable {
    /// The source version's name.
    public var sourceVersion: String
    /// The destination version's name.
    public var destinationVersion: String
    /// Entity mappings in order: destination entities in model order, then removed source entities.
    public var entityMappings: [EntityMapping]

    /// Creates a mapping.
    public init(sourceVersion: String, destinationVersion: String, entityMappings: [EntityMapping]) {
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.entityMappings = entityMappings
    }

    /// Whether every entity mapping was inferred (none came from a mapping file).
    public var isInferred: Bool { entityMappings.allSatisfy { $0.origin == .inferred } }

    /// The entity mapping producing `destination`, if any.
    public func mapping(producing destination: String) -> EntityMapping? {
        entityMappings.first { $0.destinationEntity == destination }
    }

    /// The entity mappings reading `source`, in order.
    public func mappings(reading source: String) -> [EntityMapping] {
        entityMappings.filter { $0.sourceEntity == source }
    }
}

/// What happens to one destination entity (or to one removed source entity) in a hop.
///
/// ```swift
/// let memo = EntityMapping(
///     kind: .transform, source: "Note", destination: "Memo",
///     attributes: [
///         PropertyMapping(name: "text", expression: .sourceProperty("content"), change: .renamed(from: "content"))
///     ])
/// ```
public struct EntityMapping: Sendable, Hashable {
    /// Core Data's mapping types (`NSEntityMappingType`) that a hop uses.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Source and destination hashes equal: every object is copied as it is.
        case copy
        /// The entity changed: every object is rebuilt through the property mappings.
        case transform
        /// A destination entity with no source: no objects come to it from the source.
        case add
        /// A source entity with no destination: its objects are dropped.
        case remove
    }

    /// Where a mapping came from.
    public enum Origin: Sendable, Hashable {
        /// Computed by Core Data's inference rules.
        case inferred
        /// Written in a mapping file (its path).
        case file(String)
    }

    /// The mapping's name: `<Source>To<Destination>`, or the entity's name for an added or removed entity.
    public var name: String
    /// What the mapping does.
    public var kind: Kind
    /// The source entity (nil: added).
    public var sourceEntity: String?
    /// The destination entity (nil: removed).
    public var destinationEntity: String?
    /// Only source objects for which this is true are mapped (the others count as removed).
    public var filter: ValueExpression?
    /// Find or create: one destination object per distinct value of this expression over the source objects the
    /// mapping takes (Core Data's `findOrInsertObject` in a policy); source objects with the same value share it, and
    /// one whose value is nil makes none. Nil: one object per source object.
    public var findOrCreate: ValueExpression?
    /// Per destination attribute, in destination layout order.
    public var attributes: [PropertyMapping]
    /// Per destination relationship, in destination layout order.
    public var relationships: [PropertyMapping]
    /// Inferred, or from a file.
    public var origin: Origin
    /// The class name of the ``EntityMigrationPolicy`` that creates this mapping's objects (an Xcode mapping model's
    /// custom policy); nil for none.
    public var policy: String?

    /// Creates a mapping named after its entities.
    public init(
        name: String? = nil,
        kind: Kind,
        source: String?,
        destination: String?,
        filter: ValueExpression? = nil,
        attributes: [PropertyMapping] = [],
        relationships: [PropertyMapping] = [],
        origin: Origin = .inferred,
        policy: String? = nil
    ) {
        switch (source, destination) {
        case (let source?, let destination?): self.name = name ?? "\(source)To\(destination)"
        default: self.name = name ?? destination ?? source ?? "?"
        }
        self.kind = kind
        self.sourceEntity = source
        self.destinationEntity = destination
        self.filter = filter
        self.attributes = attributes
        self.relationships = relationships
        self.origin = origin
        self.policy = policy
    }

    /// The mapping of the destination property `name`.
    public func property(_ name: String) -> PropertyMapping? {
        attributes.first { $0.name == name } ?? relationships.first { $0.name == name }
    }
}

/// How one destination property gets its value: an expression over the source object (nil: no value, the
/// property starts empty), and what changed, for the plan.
///
/// For a relationship the expression is `$source.<relationship>` (the related objects, followed through their own
/// entity mappings) or `$source` (the object this source object became under another mapping of the same hop).
/// ```swift
/// PropertyMapping(name: "title", expression: .literal(nil), change: .added(default: nil))
/// ```
public struct PropertyMapping: Sendable, Hashable {
    /// What happened to the property between the two versions, as the plan explains it.
    public enum Change: Sendable, Hashable, CustomStringConvertible {
        /// Same property, same values.
        case copied
        /// Paired through a renaming identifier with the source property `from`.
        case renamed(from: String)
        /// New in the destination: starts nil, or at `default`.
        case added(default: String?)
        /// A numeric type widened (`Integer 16 → Integer 32`, `Float → Double`, `Boolean → Integer`).
        case widened(from: AttributeType, to: AttributeType)
        /// A type change Core Data infers with the value converted (`Integer 64 → Double`).
        case converted(from: AttributeType, to: AttributeType)
        /// Optional in the source, required in the destination: nil values take the default.
        case madeRequired(default: String)
        /// A to-one became a to-many (the one object becomes the only member), or back (the first member stays).
        case cardinality(toMany: Bool)
        /// Ordered ⇄ unordered to-many.
        case ordering(ordered: Bool)
        /// Written in a mapping file.
        case explicit
        /// Starts empty in Core Data's single step: the relationship's links are dropped, for `reason`.
        case emptied(reason: String)

        public var description: String {
            switch self {
            case .copied: "copied"
            case .renamed(let from): "renamed from \(from)"
            case .added(let value): value.map { "added (default \($0))" } ?? "added (nil)"
            case .widened(let from, let to): "widened \(from.modelName) → \(to.modelName)"
            case .converted(let from, let to): "converted \(from.modelName) → \(to.modelName)"
            case .madeRequired(let value): "now required: nil becomes \(value)"
            case .cardinality(let toMany): toMany ? "to-one → to-many" : "to-many → to-one (first member kept)"
            case .ordering(let ordered): ordered ? "unordered → ordered" : "ordered → unordered"
            case .explicit: "from the mapping file"
            case .emptied(let reason): "starts empty (\(reason))"
            }
        }
    }

    /// The destination property.
    public var name: String
    /// Its value (nil: none).
    public var expression: ValueExpression?
    /// What changed, for the plan.
    public var change: Change

    /// Creates a property mapping.
    public init(name: String, expression: ValueExpression?, change: Change) {
        self.name = name
        self.expression = expression
        self.change = change
    }
}
