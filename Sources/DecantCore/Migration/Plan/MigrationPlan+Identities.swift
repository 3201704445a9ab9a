extension MigrationPlan {
    /// What becomes of a source entity's objects through every hop of the plan, for records that name objects by
    /// entity and key (the persistent-history changes of a SQLite store).
    public enum Lineage: Sendable, Hashable {
        /// They become objects of this destination entity, with the same keys.
        case kept(String)
        /// They do not keep their identity, for this reason (removed, split, or given new keys).
        case lost(String)
    }

    /// For each concrete entity of the source version: the destination entity its objects become with the same keys
    /// through every hop, or why they do not. A plan already at its destination keeps every entity as it is.
    public var lineages: [String: Lineage] {
        var result: [String: Lineage] = [:]
        for entity in source.entities where !entity.isAbstract {
            var current = entity.name
            var lost: String?
            for hop in hops {
                let moving = hop.mapping.entityMappings.filter { hop.moves($0) && $0.sourceEntity == current }
                let targets = moving.compactMap(\.destinationEntity)
                guard let target = targets.first else {
                    lost = "\(current) is removed in \(hop.name)"
                    break
                }
                guard targets.count == 1 else {
                    lost = "\(current) becomes \(targets.joined(separator: " and ")) in \(hop.name)"
                    break
                }
                guard hop.keepsIdentities(of: target) else {
                    lost = "its objects get new keys as \(target) in \(hop.name)"
                    break
                }
                current = target
            }
            result[entity.name] = lost.map(Lineage.lost) ?? .kept(current)
        }
        return result
    }
}
