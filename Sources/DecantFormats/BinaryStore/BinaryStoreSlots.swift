import DecantCore
import DecantCodecs

/// The order of the slots in a node's `NSAttributeValues` (section 6.3 of the formats spec). The slot *lengths* were
/// verified on Apple's files; the *order* comes from reverse engineering (`-[NSEntityDescription
/// _createCachesAndOptimizeState]`) and no file with a known model has confirmed it yet. This is the one place that
/// decides it: a store that contradicts it changes this function only.
enum BinaryStoreSlots {
    /// What one slot holds.
    enum Slot: Equatable {
        /// A persistent attribute: its value, or `NSNull` for nil.
        case attribute(Attribute)
        /// A persistent relationship: always `NSNull`, its members live in `NSRelatedNodes`.
        case relationship(Relationship)
        /// A transient attribute or relationship, or a fetched property, by name: always `NSNull`.
        case unfilled(String)
    }

    /// One slot per property of `entity`: all properties sorted by name (the version hash's comparator), grouped
    /// as non-transient attributes, transient attributes, to-ones, unordered to-manys, ordered to-manys, then the
    /// transient relationships in the same three groups, then fetched properties. A sub-entity's group is its
    /// parent's group (in the parent's order) followed by its own members of that group.
    static func slots(of entity: Entity, in model: ObjectModel) -> [Slot] {
        var groups = Array(repeating: [Slot](), count: 9)
        var seen: Set<String> = []
        for declaring in model.ancestors(of: entity).reversed() + [entity] {
            var own = Array(repeating: [(name: String, slot: Slot)](), count: 9)
            for attribute in declaring.attributes where seen.insert(attribute.name).inserted {
                own[attribute.isTransient ? 1 : 0].append(
                    (attribute.name, attribute.isTransient ? .unfilled(attribute.name) : .attribute(attribute)))
            }
            for relationship in declaring.relationships where seen.insert(relationship.name).inserted {
                let kind = !relationship.isToMany ? 0 : relationship.isOrdered ? 2 : 1
                own[(relationship.isTransient ? 5 : 2) + kind].append(
                    (relationship.name,
                     relationship.isTransient ? .unfilled(relationship.name) : .relationship(relationship)))
            }
            for fetched in declaring.fetchedProperties where seen.insert(fetched.name).inserted {
                own[8].append((fetched.name, .unfilled(fetched.name)))
            }
            for group in own.indices {
                groups[group] += own[group].sorted { VersionHashing.precedes($0.name, $1.name) }.map(\.slot)
            }
        }
        return groups.flatMap { $0 }
    }
}
