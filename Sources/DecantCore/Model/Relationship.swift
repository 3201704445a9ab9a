/// A relationship of an entity (`NSRelationshipDescription`).
///
/// ```swift
/// var notes = Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)
/// notes.deleteRule = .cascade
/// ```
@dynamicMemberLookup
public struct Relationship: Sendable, Hashable {
    /// Name, flags, identifiers and user info.
    public var common: PropertyCommon
    /// The destination entity's name.
    public var destinationEntity: String?
    /// The inverse relationship's name.
    public var inverseName: String?
    /// The entity that declares the inverse (normally the destination).
    public var inverseEntity: String?
    /// The minimum count, exactly as stored (0 when absent).
    public var minCount: Int
    /// The maximum count, exactly as stored: 1 for to-one, 0 for an unbounded to-many
    /// (a model built in code may store −1).
    public var maxCount: Int
    /// Whether the relationship is to-many.
    public var isToMany: Bool
    /// `ordered="YES"` (NSOrderedSet).
    public var isOrdered: Bool
    /// The delete rule.
    public var deleteRule: DeleteRule

    /// Creates a relationship. A to-one gets `maxCount` 1, a to-many 0 (unbounded).
    public init(name: String, destination: String?, inverse: String? = nil, toMany: Bool = false) {
        self.common = PropertyCommon(name: name, isOptional: true)
        self.destinationEntity = destination
        self.inverseName = inverse
        self.inverseEntity = inverse == nil ? nil : destination
        self.minCount = 0
        self.maxCount = toMany ? 0 : 1
        self.isToMany = toMany
        self.isOrdered = false
        self.deleteRule = .nullify
    }

    /// Reads and writes the common fields directly: `relationship.name`, `relationship.isOptional`.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<PropertyCommon, T>) -> T {
        get { common[keyPath: keyPath] }
        set { common[keyPath: keyPath] = newValue }
    }
}

/// A fetched property: a stored fetch request, never persisted and never hashed.
@dynamicMemberLookup
public struct FetchedProperty: Sendable, Hashable {
    /// Name, flags, identifiers and user info.
    public var common: PropertyCommon
    /// The fetch request's entity.
    public var entity: String?
    /// The fetch request's predicate, in predicate format.
    public var predicate: String?

    /// Creates a fetched property.
    public init(name: String, entity: String?, predicate: String?) {
        self.common = PropertyCommon(name: name, isOptional: true, isTransient: true)
        self.entity = entity
        self.predicate = predicate
    }

    /// Reads and writes the common fields directly.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<PropertyCommon, T>) -> T {
        get { common[keyPath: keyPath] }
        set { common[keyPath: keyPath] = newValue }
    }
}
