/// Keeps both sides of the relationships a hop's mappings set, as Core Data maintains inverses: setting either side
/// of a relationship sets the other.
///
/// A mapping may set a relationship from either side: `paragraphs: mapped('NoteToParagraph', $source)` on Note, or
/// `note: $source` on the Paragraph a second mapping makes from the same Note. A SQLite store keeps a one-to-many
/// only in the to-one's column, and the validator checks each side as it is, so a link set on one side only was lost
/// (or failed a required relationship on the other). Among the objects one hop makes from one batch of source
/// objects (a split's objects, a policy's extra objects, made from the same source object) every link set on one
/// side is set on the other, where the other side is empty: a nil to-one gets its owner, an empty to-many its members.
/// A side that is already set is left as the mapping set it; a link to an object another batch makes is left to the
/// side the mapping set.
///
/// ```swift
/// var links = InverseLinks(model: hop.destination)
/// links.complete(&batches)     // the hop's output for one source batch
/// ```
struct InverseLinks {
    private let model: ObjectModel
    /// Per entity, per relationship position: the inverse's name (nil: no inverse the model knows).
    private var inverses: [String: [String?]] = [:]

    init(model: ObjectModel) { self.model = model }

    private mutating func inverses(of layout: RecordLayout) -> [String?] {
        if let known = inverses[layout.entityName] { return known }
        let found: [String?] = layout.relationships.map { relationship in
            model.inverse(of: relationship)?.name
        }
        inverses[layout.entityName] = found
        return found
    }

    /// Sets the empty side of every link the objects of `batches` state on one side only, among those objects.
    mutating func complete(_ batches: inout [RecordBatch]) {
        // A hop's output of one entity is the source's objects as they were: their links came with both sides.
        guard batches.count > 1 else { return }
        /// Target object → inverse relationship name → the objects that point at it, in order.
        var claims: [ObjectReference: [String: [ObjectReference]]] = [:]
        // Only links to objects made here can be completed here: a link to any other object (every Note's folder) is
        // not kept.
        let made = Set(batches.map(\.layout.entityName))
        for batch in batches {
            let inverses = inverses(of: batch.layout)
            guard inverses.contains(where: { $0 != nil }) else { continue }
            let attributeCount = batch.layout.attributes.count
            for row in 0..<batch.count {
                let owner = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row))
                for (position, inverse) in inverses.enumerated() {
                    guard let inverse else { continue }
                    let targets = SourceGraph.members(batch, row: row, column: attributeCount + position) ?? []
                    for target in targets where made.contains(target.entity) {
                        claims[target, default: [:]][inverse, default: []].append(owner)
                    }
                }
            }
        }
        guard !claims.isEmpty else { return }
        for index in batches.indices {
            let batch = batches[index]
            let layout = batch.layout
            let attributeCount = layout.attributes.count
            var rebuilt = RecordBatch(layout: layout)
            var rebuilding = false
            for row in 0..<batch.count {
                var links: [Int: RelationshipValue] = [:]
                if let owed = claims[ObjectReference(entity: layout.entityName, id: batch.id(at: row))] {
                    for (position, relationship) in layout.relationships.enumerated() {
                        guard let owners = owed[relationship.name], let first = owners.first else { continue }
                        let cell = batch.cell(row: row, column: attributeCount + position)
                        if relationship.isToMany {
                            let isEmpty = cell.kind == .referenceList && cell.length == 0 || cell.kind == .null
                            guard isEmpty else { continue }
                            links[position] = .toMany(owners)
                        } else if cell.kind == .null {
                            links[position] = .toOne(first)
                        }
                    }
                }
                if !links.isEmpty && !rebuilding {
                    rebuilding = true
                    for earlier in 0..<row { Self.append(row: earlier, of: batch, into: &rebuilt, links: [:]) }
                }
                if rebuilding { Self.append(row: row, of: batch, into: &rebuilt, links: links) }
            }
            if rebuilding { batches[index] = rebuilt }
        }
    }

    /// Sets the nil to-ones of `batches`' objects that `owed` gives an owner for (``OwedLinks``): links a mapping set
    /// from the to-many side, on an object made from another source object, before they are checked.
    static func fill(_ batches: inout [RecordBatch], owed: (any ReferenceMap)?) throws {
        guard let owed, owed.count > 0 else { return }
        let scopes = owed.scopes
        for index in batches.indices {
            let batch = batches[index]
            let layout = batch.layout
            let positions = layout.relationships.enumerated().compactMap { position, relationship in
                !relationship.isToMany && scopes.contains(relationship.name) ? position : nil
            }
            guard !positions.isEmpty else { continue }
            let attributeCount = layout.attributes.count
            var rebuilt = RecordBatch(layout: layout)
            var rebuilding = false
            for row in 0..<batch.count {
                var links: [Int: RelationshipValue] = [:]
                let member = ObjectReference(entity: layout.entityName, id: batch.id(at: row))
                for position in positions where batch.cell(row: row, column: attributeCount + position).kind == .null {
                    if let owner = try owed.value(for: member, in: layout.relationships[position].name) {
                        links[position] = .toOne(owner)
                    }
                }
                if !links.isEmpty && !rebuilding {
                    rebuilding = true
                    for earlier in 0..<row { Self.append(row: earlier, of: batch, into: &rebuilt, links: [:]) }
                }
                if rebuilding { Self.append(row: row, of: batch, into: &rebuilt, links: links) }
            }
            if rebuilding { batches[index] = rebuilt }
        }
    }

    /// Appends record `row` of `batch` to `out` as it is, but for the relationships `links` sets.
    private static func append(
        row: Int, of batch: RecordBatch, into out: inout RecordBatch, links: [Int: RelationshipValue]
    ) {
        let attributeCount = batch.layout.attributes.count
        out.beginRecord(id: batch.id(at: row))
        for column in 0..<attributeCount {
            CompiledHop.copy(batch.cell(row: row, column: column), from: batch, into: &out)
        }
        for position in batch.layout.relationships.indices {
            if let link = links[position] {
                switch link {
                case .toOne(let reference): out.appendReference(reference)
                case .toMany(let members): out.appendReferenceList(members)
                case .viaInverse: out.appendViaInverse()
                }
                continue
            }
            let cell = batch.cell(row: row, column: attributeCount + position)
            switch cell.kind {
            case .reference, .externalReference: out.appendReference(batch.reference(of: cell))
            case .referenceList:
                let start = Int(cell.integer)
                let members = (0..<Int(cell.length)).map { batch.reference(of: batch.references[start + $0]) }
                out.appendReferenceList(members)
            case .viaInverse: out.appendViaInverse()
            default: out.append(cell)
            }
        }
        out.endRecord()
    }
}

/// Counts the links a run's output states only on a to-many side whose inverse is a to-one the member leaves nil:
/// a SQLite store keeps a one-to-many only in the to-one's column, so such a link is not stored there.
///
/// ``InverseLinks`` completes the links among the objects one hop makes from one batch; a to-many set by a mapping
/// across objects made from different source objects (`Folder.pinned: $source.notes`, with `Note.pinnedIn` left nil)
/// is not completed, because the member is written in another batch. Rather than lose those links silently, the run
/// remembers, per relationship, the members listed and the members whose to-one is set (in key sets, which spill to
/// disk as the validator's do) and warns with the count of members owed a to-one that never got it.
///
/// ```swift
/// let links = OneSidedLinks(model: plan.destination, keySets: keySets)
/// try links.note(emitted)                 // each source batch's output, as written
/// output.diagnostics += links.diagnostics()
/// ```
final class OneSidedLinks {
    private enum Side {
        /// A to-one whose inverse is a to-many: its set values are the links the store keeps; scope of its members.
        case toOne(scope: String)
        /// A to-many whose inverse is a to-one `inverse` on the members.
        case toMany(inverse: String)
    }

    private let model: ObjectModel
    /// Per entity, per relationship position: which side of a one-to-many it is (nil: neither).
    private var sides: [String: [Side?]] = [:]
    /// Members whose to-one is set, scoped `Entity.toOne`.
    private let linked: any KeySet
    /// Members a to-many lists whose to-one was not set when the list was seen, scoped `Entity.toOne`.
    private let owed: any KeySet
    /// Per scope `Entity.toOne`: the to-many side that listed the members (`Owner.toMany`), and how many members
    /// are still owed their to-one.
    private var counts: [String: (side: String, count: Int)] = [:]

    /// Per hop: the to-manys (`Owner.toMany`) a mapping sets from a source to-many a SQLite store reads through its
    /// inverse (the link stays in the members' to-one), while a mapping of the members leaves that to-one nil
    /// (`Member.toOne`). Their links are in no column of the output.
    private let throughNilInverse: [[String: String]]
    /// Per `Owner.toMany` of ``throughNilInverse``: the inverse left nil, and how many objects set it so.
    private var throughNilCounts: [String: (inverse: String, count: Int)] = [:]

    init(plan: MigrationPlan, keySets: KeySetFactory) {
        self.model = plan.destination
        self.linked = keySets.makeKeySet()
        self.owed = keySets.makeKeySet()
        self.throughNilInverse = plan.hops.map(Self.throughNilInverse)
    }

    private static func isNil(_ expression: ValueExpression?) -> Bool {
        switch expression {
        case nil, .literal(.null)?: true
        default: false
        }
    }

    /// The to-manys of `hop` a mapping sets while a mapping of the members leaves the inverse to-one nil.
    static func throughNilInverse(_ hop: MigrationPlan.Hop) -> [String: String] {
        guard !hop.isInferred else { return [:] }
        var found: [String: String] = [:]
        for mapping in hop.mapping.entityMappings where mapping.kind != .remove {
            guard let owner = mapping.destinationEntity,
                let layout = RecordLayout(entity: owner, in: hop.destination)
            else { continue }
            for relationship in layout.relationships where relationship.isToMany {
                guard !isNil(mapping.property(relationship.name)?.expression),
                    let inverse = relationship.inverseName,
                    let member = relationship.inverseEntity ?? relationship.destinationEntity,
                    hop.destination.entity(named: member).map({ entity in
                        hop.destination.properties(of: entity).relationships.contains {
                            $0.name == inverse && !$0.isToMany
                        }
                    }) == true,
                    hop.mapping.entityMappings.contains(where: {
                        $0.destinationEntity == member && $0.kind != .remove && isNil($0.property(inverse)?.expression)
                    })
                else { continue }
                found["\(owner).\(relationship.name)"] = "\(member).\(inverse)"
            }
        }
        return found
    }

    /// Notes the objects hop `hop` made (`batches`) whose to-many is kept through an inverse the hop leaves nil.
    func noteHop(_ hop: Int, _ batches: [RecordBatch]) {
        guard hop < throughNilInverse.count, !throughNilInverse[hop].isEmpty else { return }
        for batch in batches {
            let attributeCount = batch.layout.attributes.count
            for (position, relationship) in batch.layout.relationships.enumerated() where relationship.isToMany {
                let name = "\(batch.layout.entityName).\(relationship.name)"
                guard let inverse = throughNilInverse[hop][name] else { continue }
                for row in 0..<batch.count {
                    guard batch.cell(row: row, column: attributeCount + position).kind == .viaInverse else { continue }
                    throughNilCounts[name, default: (inverse, 0)].count += 1
                }
            }
        }
    }

    private func sides(of layout: RecordLayout) -> [Side?] {
        if let known = sides[layout.entityName] { return known }
        let found: [Side?] = layout.relationships.map { relationship in
            guard let inverse = model.inverse(of: relationship), relationship.isToMany != inverse.isToMany else { return nil }
            return relationship.isToMany
                ? .toMany(inverse: inverse.name) : .toOne(scope: "\(layout.entityName).\(relationship.name)")
        }
        sides[layout.entityName] = found
        return found
    }

    /// Notes the links of the objects `batches` hold, as they are written: first every set to-one, then every
    /// to-many's members.
    func note(_ batches: [RecordBatch]) throws {
        for batch in batches {
            let attributeCount = batch.layout.attributes.count
            for (position, side) in sides(of: batch.layout).enumerated() {
                guard case .toOne(let scope) = side else { continue }
                for row in 0..<batch.count {
                    let kind = batch.cell(row: row, column: attributeCount + position).kind
                    guard kind == .reference || kind == .externalReference else { continue }
                    let key = SetKey(batch.id(at: row))
                    if try linked.insert(key, in: scope), try owed.contains(key, in: scope) {
                        counts[scope]?.count -= 1
                    }
                }
            }
        }
        for batch in batches {
            let attributeCount = batch.layout.attributes.count
            for (position, side) in sides(of: batch.layout).enumerated() {
                guard case .toMany(let inverse) = side else { continue }
                let name = "\(batch.layout.entityName).\(batch.layout.relationships[position].name)"
                for row in 0..<batch.count {
                    let cell = batch.cell(row: row, column: attributeCount + position)
                    guard cell.kind == .referenceList else { continue }
                    let start = Int(cell.integer)
                    for offset in 0..<Int(cell.length) {
                        let member = batch.reference(of: batch.references[start + offset])
                        let scope = "\(member.entity).\(inverse)"
                        let key = SetKey(member.id)
                        guard try !linked.contains(key, in: scope), try owed.insert(key, in: scope) else { continue }
                        counts[scope, default: (name, 0)].count += 1
                    }
                }
            }
        }
    }

    /// One warning per to-many side whose members were left without their to-one.
    func diagnostics() -> [Diagnostic] {
        let through: [Diagnostic] = throughNilCounts.keys.sorted().compactMap { name in
            guard let entry = throughNilCounts[name] else { return nil }
            let objects = entry.count == 1 ? "1 object" : "\(entry.count) objects"
            return Diagnostic(
                .oneSidedLink,
                "\(name): set from its to-many side on \(objects), from a source to-many stored through its inverse; "
                    + "the mapping leaves the inverse \(entry.inverse) nil, the to-one a store keeps this relationship "
                    + "in, so \(entry.count == 1 ? "its links are" : "their links are") lost; set "
                    + "\(entry.inverse) in the mapping to keep them")
        }
        return through + counts.keys.sorted().compactMap { scope in
            guard let entry = counts[scope], entry.count > 0 else { return nil }
            let links = entry.count == 1 ? "1 link" : "\(entry.count) links"
            return Diagnostic(
                .oneSidedLink,
                "\(entry.side): \(links) set only on this to-many side, to objects made from other source objects, "
                    + "\(entry.count == 1 ? "was" : "were") not stored in \(scope) (left nil), the to-one a SQLite "
                    + "store keeps this relationship in: a SQLite store loses \(entry.count == 1 ? "it" : "them"); "
                    + "set \(scope) in the mapping to keep \(entry.count == 1 ? "it" : "them")")
        }
    }
}

@available(*, unavailable)
extension OneSidedLinks: Sendable {}
