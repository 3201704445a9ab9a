/// What a Decant mapping file says about one hop, before it is merged with inference: only the entities and
/// properties the file mentions. ``MappingInference`` fills in the rest.
///
/// ```swift
/// var file = ExplicitMapping(source: "Notes 2", destination: "Notes 3", path: "v2-v3.yaml")
/// file.entities.append(ExplicitEntityMapping(destination: "Note", source: .entity("Note"),
///                                            attributes: [.init(name: "title", expression: .literal("Untitled"))]))
/// ```
public struct ExplicitMapping: Sendable, Hashable {
    /// The source version: a version name, or its version checksum.
    public var source: String
    /// The destination version: a version name, or its version checksum.
    public var destination: String
    /// The file the mapping was read from, for messages.
    public var path: String
    /// The entities the file mentions, in file order.
    public var entities: [ExplicitEntityMapping]

    /// Creates an explicit mapping.
    public init(source: String, destination: String, path: String, entities: [ExplicitEntityMapping] = []) {
        self.source = source
        self.destination = destination
        self.path = path
        self.entities = entities
    }
}

/// One entity of a mapping file.
///
/// ```swift
/// ExplicitEntityMapping(destination: "Paragraph", source: .entity("Note"),
///                       relationships: [.init(name: "note", expression: .source(keyPath: []))])
/// ```
public struct ExplicitEntityMapping: Sendable, Hashable {
    /// Where the destination entity's objects come from.
    public enum SourceChoice: Sendable, Hashable {
        /// As inference pairs it (the file did not say `from`).
        case inferred
        /// No source: the entity starts empty (`from: null`).
        case none
        /// This source entity (`from: Note`).
        case entity(String)
    }

    /// One property line.
    public struct Property: Sendable, Hashable {
        /// The destination property.
        public var name: String
        /// Its value; nil for `null` (no value).
        public var expression: ValueExpression?
        /// The line in the file, for messages.
        public var line: Int?

        /// Creates a property line.
        public init(name: String, expression: ValueExpression?, line: Int? = nil) {
            self.name = name
            self.expression = expression
            self.line = line
        }
    }

    /// The destination entity (`to:`, or the entry's key), or (with `remove`) a source entity to drop.
    public var destination: String
    /// The entry's own name, when its key is a name and `to:` names the destination (`MeasurementToEvent: {to:
    /// Event, from: Measurement}`): one more entity mapping into that destination, as Core Data's mapping models have
    /// any number per destination. Nil for an entry keyed by its destination entity.
    public var name: String?
    /// `from`.
    public var source: SourceChoice
    /// `remove: true`: no objects reach this entity.
    public var remove: Bool
    /// `where`.
    public var filter: ValueExpression?
    /// `findOrCreate`: one destination object per distinct value (``EntityMapping/findOrCreate``).
    public var findOrCreate: ValueExpression?
    /// `attributes`.
    public var attributes: [Property]
    /// `relationships`.
    public var relationships: [Property]
    /// The line of the entity key.
    public var line: Int?

    /// Creates an entity line.
    public init(
        destination: String,
        name: String? = nil,
        source: SourceChoice = .inferred,
        remove: Bool = false,
        filter: ValueExpression? = nil,
        attributes: [Property] = [],
        relationships: [Property] = [],
        line: Int? = nil
    ) {
        self.destination = destination
        self.name = name
        self.source = source
        self.remove = remove
        self.filter = filter
        self.attributes = attributes
        self.relationships = relationships
        self.line = line
    }

    /// The entry's key in the file: its name, else its destination entity.
    public var key: String { name ?? destination }
}
