/// An entity of a model (`NSEntityDescription`) with its own properties; inherited ones are reached through
/// the model (``ObjectModel/properties(of:)``).
///
/// ```swift
/// var note = Entity(name: "Note")
/// note.attributes = [Attribute(name: "date", type: .date), Attribute(name: "content", type: .string)]
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity name.
    public var name: String
    /// `representedClassName` (archived as `NSClassNameForEntity`).
    public var className: String?
    /// The parent entity's name.
    public var parentName: String?
    /// `isAbstract="YES"`.
    public var isAbstract: Bool
    /// The renaming identifier (`elementID`); `nil` means the name.
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?
    /// The entity's own attributes, in source order.
    public var attributes: [Attribute]
    /// The entity's own relationships, in source order.
    public var relationships: [Relationship]
    /// The entity's own fetched properties.
    public var fetchedProperties: [FetchedProperty]
    /// Fetch indexes (iOS 11+).
    public var fetchIndexes: [FetchIndex]
    /// Uniqueness constraints: each is a tuple of property names.
    public var uniquenessConstraints: [[String]]
    /// Legacy compound indexes: each is a tuple of property names.
    public var compoundIndexes: [[String]]
    /// User info.
    public var userInfo: [String: UserInfoValue]
    /// `codeGenerationType` (`class`, `category`, or `nil` for manual).
    public var codeGenerationType: String?
    /// `syncable="YES"` (legacy).
    public var isSyncable: Bool

    /// Creates an entity with no properties.
    public init(name: String, parentName: String? = nil, isAbstract: Bool = false) {
        self.name = name
        self.parentName = parentName
        self.isAbstract = isAbstract
        self.attributes = []
        self.relationships = []
        self.fetchedProperties = []
        self.fetchIndexes = []
        self.uniquenessConstraints = []
        self.compoundIndexes = []
        self.userInfo = [:]
        self.isSyncable = false
    }

    /// The identifier migrations pair entities by: the renaming identifier, else the name.
    public var canonicalName: String { renamingIdentifier ?? name }
}

/// A fetch index (`NSFetchIndexDescription`).
public struct FetchIndex: Sendable, Hashable {
    /// One element of a fetch index.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name (or `nil` for an expression element).
        public var property: String?
        /// An expression, for expression elements.
        public var expression: String?
        /// `Binary` or `RTree`.
        public var type: String
        /// Ascending (`true`) or descending.
        public var isAscending: Bool

        /// Creates an element.
        public init(property: String?, expression: String? = nil, type: String = "Binary", isAscending: Bool = true) {
            self.property = property
            self.expression = expression
            self.type = type
            self.isAscending = isAscending
        }
    }

    /// The index name.
    public var name: String
    /// The elements, in order.
    public var elements: [Element]
    /// The partial-index predicate, in predicate format.
    public var partialIndexPredicate: String?

    /// Creates a fetch index.
    public init(name: String, elements: [Element], partialIndexPredicate: String? = nil) {
        self.name = name
        self.elements = elements
        self.partialIndexPredicate = partialIndexPredicate
    }
}

/// A named configuration: a subset of the model's entities.
public struct ModelConfiguration: Sendable, Hashable {
    /// The configuration name.
    public var name: String
    /// The member entities' names.
    public var entityNames: [String]
    /// `usedWithCloudKit="YES"`.
    public var usedWithCloudKit: Bool

    /// Creates a configuration.
    public init(name: String, entityNames: [String], usedWithCloudKit: Bool = false) {
        self.name = name
        self.entityNames = entityNames
        self.usedWithCloudKit = usedWithCloudKit
    }
}

/// A model-level fetch request template.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template name.
    public var name: String
    /// The entity fetched.
    public var entity: String?
    /// The predicate, in predicate format.
    public var predicate: String?
    /// Every other setting as written in the source (`fetchLimit`, `resultType`, …).
    public var settings: [String: String]

    /// Creates a template.
    public init(name: String, entity: String?, predicate: String?, settings: [String: String] = [:]) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
        self.settings = settings
    }
}

/// A composite attribute type (iOS 17+): a named group of attributes.
public struct CompositeType: Sendable, Hashable {
    /// The composite's name.
    public var name: String
    /// Its member attributes.
    public var attributes: [Attribute]

    /// Creates a composite type.
    public init(name: String, attributes: [Attribute]) {
        self.name = name
        self.attributes = attributes
    }
}
