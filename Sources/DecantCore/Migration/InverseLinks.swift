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
            guard let name = relationship.inverseName,
                let owner = (relationship.inverseEntity ?? relationship.destinationEntity).flatMap({
                    model.entity(named: $0)
                }),
                model.properties(of: owner).relationships.contains(where: { $0.name == name })
            else { return nil }
            return name
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
        for batch in batches {
            let inverses = inverses(of: batch.layout)
            guard inverses.contains(where: { $0 != nil }) else { continue }
            let attributeCount = batch.layout.attributes.count
            for row in 0..<batch.count {
                let owner = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row))
                for (position, inverse) in inverses.enumerated() {
                    guard let inverse else { continue }
                    let cell = batch.cell(row: row, column: attributeCount + position)
                    var targets: [ObjectReference] = []
                    switch cell.kind {
                    case .reference, .externalReference:
                        targets = [batch.reference(of: cell)]
                    case .referenceList:
                        let start = Int(cell.integer)
                        targets = (0..<Int(cell.length)).map { batch.reference(of: batch.references[start + $0]) }
                    default:
                        continue
                    }
                    for target in targets {
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
