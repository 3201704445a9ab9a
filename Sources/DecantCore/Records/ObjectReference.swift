/// The identity of an object inside its source: a primary key, or the source's own id (an XML store's `z102`).
public enum RecordID: Sendable, Hashable, CustomStringConvertible {
    /// A Core Data primary key (`Z_PK`).
    case primaryKey(Int64)
    /// An identifier the source gave the object.
    case external(String)

    public var description: String {
        switch self {
        case .primaryKey(let key): "p\(key)"
        case .external(let name): name
        }
    }
}

/// A reference to an object: its entity and identity, written `Entity/p12`.
///
/// ```swift
/// let ref = ObjectReference(entity: "Note", id: .primaryKey(12))
/// print(ref)  // Note/p12
/// ```
public struct ObjectReference: Sendable, Hashable, CustomStringConvertible {
    /// The object's concrete entity.
    public var entity: String
    /// The object's identity in its source.
    public var id: RecordID

    /// Creates a reference.
    public init(entity: String, id: RecordID) {
        self.entity = entity
        self.id = id
    }

    public var description: String { "\(entity)/\(id)" }
}
