import Foundation

/// What the model answers about its relationships, once for every reader, writer and engine.
extension ObjectModel {
    /// The inverse of `relationship`: the relationship its inverse name names on the entity that holds it (the
    /// relationship's `inverseEntity`, else its destination), inherited properties included; nil when it declares
    /// none or the model lacks it.
    ///
    /// ```swift
    /// let notes = model.properties(of: folder).relationships[0]
    /// model.inverse(of: notes)?.name   // "folder"
    /// ```
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let name = relationship.inverseName,
            let holder = (relationship.inverseEntity ?? relationship.destinationEntity).flatMap({ entity(named: $0) })
        else { return nil }
        return properties(of: holder).relationships.first { $0.name == name }
    }

    /// Whether `relationship` has an inverse that is a to-one: a to-many's members are then told by that inverse
    /// (each member names its one owner), so a store keeps the membership on the members' side.
    public func hasToOneInverse(_ relationship: Relationship) -> Bool {
        inverse(of: relationship).map { !$0.isToMany } ?? false
    }
}
