/// The to-ones owed by links a mapping sets from the to-many side across source objects, as Core Data sets the
/// inverse of every relationship a mapping sets, whatever object made the other side, before it validates.
///
/// `Track: {from: Measurement, relationships: {locations: $source.geoLocations}}`, with each GeoLocation made by its
/// own entry, lists the GeoLocations on the Track; a SQLite store keeps that one-to-many only in `GeoLocation.track`,
/// which the GeoLocation's entry leaves nil. ``InverseLinks`` completes the links among the objects made from one
/// source object; these cross source objects, so a pass over the source before the run runs the hop and notes, per
/// member, the owner that lists it (the first one): the run then sets the member's nil to-one before it checks it.
///
/// The owners are kept in a ``ReferenceMap`` from `keySets`, one entry per member listed this way, scoped by the
/// inverse to-one's name: spilling to a temporary file past a bound when the job's sets spill, so that memory stays
/// flat however many sources list members (only hops whose mappings set such a to-many while the member's mapping
/// leaves the to-one nil make the pass).
enum OwedLinks {
    /// Gives each hop of `plan` that sets such to-manys the owners its members are owed, found in a pass over the
    /// source run through the hops up to it.
    static func collect(
        into hops: inout [CompiledHop], plan: MigrationPlan, keySets: KeySetFactory,
        makeReader: () throws -> any RecordReader
    ) throws {
        for (index, hop) in plan.hops.enumerated() {
            // `Owner.toMany` → `Member.toOne`.
            let scopes = OneSidedLinks.throughNilInverse(hop)
            guard !scopes.isEmpty else { continue }
            let owners = keySets.makeReferenceMap()
            try CompiledHop.forEachInput(of: hops.prefix(index + 1), makeReader: makeReader) { batch in
                let attributeCount = batch.layout.attributes.count
                for (position, relationship) in batch.layout.relationships.enumerated() where relationship.isToMany {
                    guard let scope = scopes["\(batch.layout.entityName).\(relationship.name)"],
                        let inverse = scope.split(separator: ".").last.map(String.init)
                    else { continue }
                    for row in 0..<batch.count {
                        let owner = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row))
                        for member in SourceGraph.members(batch, row: row, column: attributeCount + position) ?? [] {
                            try owners.setIfAbsent(owner, for: member, in: inverse)
                        }
                    }
                }
            }
            hops[index].owedOwners = owners
        }
    }
}
