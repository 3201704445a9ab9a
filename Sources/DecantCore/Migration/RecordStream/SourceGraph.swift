import Foundation

/// What key paths through relationships reach in a hop's source: for the source objects a key path passes through
/// (not the one being mapped, which is in the current batch), the properties it reads there.
///
/// A hop whose expressions only read the mapped object's own properties needs none of this and streams as before.
/// One that reads `$source.country.continent` or `$source.countries.@distinctUnionOfSets.moods` gets a graph
/// collected in one pass over the hop's source before it runs, holding only the properties those key paths read
/// (here `Country.continent` and `Country.moods`), so memory grows with those objects and properties alone.
///
/// ```swift
/// var graph = SourceGraph(needs: ["Country": ["continent"]], model: v2)
/// try graph.collect(batch)      // for every batch of the hop's source
/// graph.entry(ObjectReference(entity: "Country", id: .primaryKey(3)), "continent")   // .objects([Continent/1])
/// ```
public struct SourceGraph: Sendable {
    /// One property of one object.
    public enum Entry: Sendable, Hashable {
        /// An attribute's value.
        case value(Value)
        /// A relationship's members (one at most for a to-one).
        case objects([ObjectReference])
    }

    /// Per source entity (concrete), the properties to keep.
    public private(set) var needs: [String: Set<String>] = [:]
    /// Per source entity, to-many relationships whose members are told by their inverse to-one (a reader may give
    /// `viaInverse` for them): `(destination entities, inverse name)`.
    private var inverses: [String: [String: (entities: Set<String>, inverse: String)]] = [:]
    /// Per destination entity and inverse to-one: which `(owner entity, relationship)` to add members to.
    private var inverseFeeds: [String: [(inverse: String, relationship: String)]] = [:]
    private var entries: [ObjectReference: [String: Entry]] = [:]
    private var derived: [ObjectReference: [String: [ObjectReference]]] = [:]
    /// Per concrete entity, the fetches it answers, with their parsed predicates (ready for many objects: an `IN`
    /// list is looked up, not scanned).
    private var fetchesByEntity: [String: [(request: FetchRequest, predicate: ObjectPredicateMatcher)]] = [:]
    private var fetched: [FetchRequest: [ObjectReference]] = [:]
    /// Fetches answered after the pass (see ``DeferredFetch``), and the objects each may find, in reading order.
    private var deferred: [FetchRequest: DeferredFetch] = [:]
    private var deferredByEntity: [String: [FetchRequest]] = [:]

    /// Whether any key path leaves the mapped object, or any fetch is made.
    public var isEmpty: Bool {
        needs.isEmpty && inverseFeeds.isEmpty && fetchesByEntity.isEmpty && deferred.isEmpty
    }

    /// The source objects `request` found (empty when the graph was not asked for it, or when its predicate reads
    /// `$source`: see ``objects(fetchedBy:source:)``).
    public func objects(fetchedBy request: FetchRequest) -> [ObjectReference] { fetched[request] ?? [] }

    /// Whether `request`'s predicate reads the object being mapped (`$source`), so that each object finds its own.
    public func readsSource(_ request: FetchRequest) -> Bool { deferred[request]?.readsSource ?? false }

    /// Adds `requests` to what the graph collects; requests whose predicate does not parse are left out (the plan
    /// reports them).
    ///
    /// A predicate on the fetched objects' own attributes is tested as each batch is read. One that follows a
    /// relationship, puts `ANY`/`ALL`/`NONE` before a to-many key path, or reads `$source` keeps its entity's
    /// objects (and the properties its key paths read) and is answered after the pass: at once by
    /// ``finishFetches()``, or per mapped object by ``objects(fetchedBy:source:)`` when it reads `$source`.
    public mutating func fetch(_ requests: [FetchRequest], in model: ObjectModel) {
        for request in Set(requests) {
            guard let entity = model.entity(named: request.entity),
                let predicate = try? ObjectPredicate(parsing: request.predicate, source: "FETCH predicate", isFetch: true)
            else { continue }
            let concrete = [entity] + model.descendants(of: entity)
            let readsOwnAttributes = predicate.keyPaths.allSatisfy { path in
                path.count == 1 && concrete.allSatisfy { model.propertyKind(path[0], of: $0.name)?.isAttribute != false }
            }
            guard !readsOwnAttributes || !predicate.sourceKeyPaths.isEmpty || predicate.isQuantified else {
                fetched[request] = []
                for entity in concrete {
                    fetchesByEntity[entity.name, default: []].append((request, ObjectPredicateMatcher(predicate)))
                }
                continue
            }
            deferred[request] = DeferredFetch(predicate: predicate, entity: entity, in: model)
            for entity in concrete { deferredByEntity[entity.name, default: []].append(request) }
            // The fetched objects' own properties its key paths read, and those of the objects they lead to.
            let paths = predicate.keyPaths.map { (entity: entity.name, path: $0) }
            var (further, inverseNeeds) = CompiledHop.keyPathNeeds(of: paths, in: model)
            for path in predicate.keyPaths {
                for entity in concrete where model.hasProperty(path[0], of: entity.name) {
                    further[entity.name, default: []].insert(path[0])
                }
            }
            for (entity, names) in inverseNeeds { further[entity, default: []].formUnion(names) }
            keep(further, model: model)
        }
    }

    /// Answers the fetches that do not read `$source` from the objects kept, and makes those that do ready to look
    /// their objects up by key: after the pass over the source.
    /// - Throws: `.malformedInput` for a key path through a to-many relationship compared without `ANY`/`ALL`/`NONE`.
    public mutating func finishFetches() throws {
        for (request, fetch) in deferred {
            if fetch.readsSource {
                var indexed = fetch
                indexed.index(using: self)
                deferred[request] = indexed
            } else {
                fetched[request] = try fetch.candidates.filter { try matches(fetch.predicate, $0, request) }
            }
        }
    }

    /// The source objects `request` finds for the object being mapped, whose `$source` key paths `source` answers.
    /// - Throws: what `source` throws, and `.malformedInput` for a key path through a to-many relationship compared
    ///   without `ANY`/`ALL`/`NONE`.
    public func objects(
        fetchedBy request: FetchRequest, source: ([String]) throws -> Value
    ) throws -> [ObjectReference] {
        guard let fetch = deferred[request], fetch.readsSource else { return fetched[request] ?? [] }
        let predicate = try fetch.predicate.substitutingSource(source)
        // Without a key to look up, every candidate is tested, without a list of their positions per object.
        guard let positions = fetch.positions(for: predicate) else {
            return try fetch.candidates.filter { try matches(predicate, $0, request) }
        }
        return try positions.lazy.map { fetch.candidates[$0] }.filter { try matches(predicate, $0, request) }
    }

    /// Whether `object`, a kept object of `request`'s entity, satisfies `predicate` (its `$source` substituted).
    private func matches(_ predicate: ObjectPredicate, _ object: ObjectReference, _ request: FetchRequest) throws -> Bool {
        try predicate.evaluate(
            { path in
                let found = values(at: path, of: object)
                guard found.count <= 1 else {
                    throw DecantError(
                        .malformedInput,
                        "fetch('\(request.entity)', '\(request.predicate)'): \(path.joined(separator: ".")) gives "
                            + "\(found.count) values for \(object), not one; compare them with ANY, ALL or NONE",
                        at: Location(entity: object.entity, object: object.description))
                }
                return found.first ?? .null
            },
            members: { values(at: $0, of: object) })
    }

    /// The values at `path` from `object` through the kept properties: attributes' values, and for a path that ends
    /// at a relationship a value per member (compared with nil: `folder == nil`).
    func values(at path: [String], of object: ObjectReference) -> [Value] {
        var objects = [object]
        for (position, segment) in path.enumerated() {
            var values: [Value] = []
            var members: [ObjectReference] = []
            for object in objects {
                switch entry(object, segment) {
                case .value(let value)?: values.append(value)
                case .objects(let found)?: members += found
                case nil: break
                }
            }
            if position == path.count - 1 { return values + members.map { .uri($0.description) } }
            // A value has no properties to follow.
            guard values.isEmpty else { return [] }
            objects = members
        }
        return []
    }

    /// A graph keeping `needs` of `model`'s objects; to-many relationships among them (and `inverseNeeds`, the
    /// mapped objects' own to-many relationships that key paths start with) are also rebuilt from their inverses.
    public init(needs: [String: Set<String>], inverseNeeds: [String: Set<String>] = [:], model: ObjectModel) {
        self.needs = needs
        var all = needs
        for (entity, names) in inverseNeeds { all[entity, default: []].formUnion(names) }
        keep(all, addingToNeeds: false, model: model)
    }

    /// Adds `wanted` to the properties kept (`addingToNeeds`), and rebuilds those that are to-many relationships
    /// from their to-one inverses.
    private mutating func keep(_ wanted: [String: Set<String>], addingToNeeds: Bool = true, model: ObjectModel) {
        if addingToNeeds {
            for (entity, names) in wanted { needs[entity, default: []].formUnion(names) }
        }
        for (entityName, names) in wanted {
            guard let entity = model.entity(named: entityName) else { continue }
            let relationships = model.properties(of: entity).relationships
            for relationship in relationships
            where names.contains(relationship.name) && relationship.isToMany
                && inverses[entityName]?[relationship.name] == nil
            {
                guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
                    let target = relationship.destinationEntity.flatMap({ model.entity(named: $0) })
                else { continue }
                let inverseName = inverse.name
                let targets = [target] + model.descendants(of: target)
                for member in targets {
                    inverseFeeds[member.name, default: []].append((inverseName, relationship.name))
                }
                inverses[entityName, default: [:]][relationship.name] = (Set(targets.map(\.name)), inverseName)
            }
        }
    }

    /// Keeps what the graph needs from `batch`.
    public mutating func collect(_ batch: RecordBatch) {
        let layout = batch.layout
        let entity = layout.entityName
        let wanted = needs[entity] ?? []
        let feeds = inverseFeeds[entity] ?? []
        for request in deferredByEntity[entity] ?? [] {
            for row in 0..<batch.count {
                deferred[request]?.candidates.append(ObjectReference(entity: entity, id: batch.id(at: row)))
            }
        }
        for (request, predicate) in fetchesByEntity[entity] ?? [] {
            for row in 0..<batch.count {
                let holds = predicate.evaluate { path in
                    guard path.count == 1, let index = layout.attributeIndex(path[0]) else { return .null }
                    return batch.value(row: row, attribute: index)
                }
                if holds { fetched[request, default: []].append(ObjectReference(entity: entity, id: batch.id(at: row))) }
            }
        }
        guard !wanted.isEmpty || !feeds.isEmpty else { return }
        let attributeCount = layout.attributes.count
        let attributes = layout.attributes.enumerated().filter { wanted.contains($0.element.name) }
        let relationships = layout.relationships.enumerated().filter { wanted.contains($0.element.name) }
        let fed = feeds.compactMap { feed in layout.relationshipIndex(feed.inverse).map { ($0, feed.relationship) } }
        for row in 0..<batch.count {
            let reference = ObjectReference(entity: entity, id: batch.id(at: row))
            var values: [String: Entry] = [:]
            for (index, attribute) in attributes {
                values[attribute.name] = .value(batch.value(row: row, attribute: index))
            }
            for (index, relationship) in relationships {
                if let members = Self.members(batch, row: row, column: attributeCount + index) {
                    values[relationship.name] = .objects(members)
                }
            }
            if !values.isEmpty { entries[reference, default: [:]].merge(values) { _, new in new } }
            for (column, relationship) in fed {
                guard let owner = Self.members(batch, row: row, column: attributeCount + column)?.first else { continue }
                derived[owner, default: [:]][relationship, default: []].append(reference)
            }
        }
    }

    /// The members a relationship cell lists; nil when the cell says they are told by the inverse.
    static func members(_ batch: RecordBatch, row: Int, column: Int) -> [ObjectReference]? {
        let cell = batch.cell(row: row, column: column)
        switch cell.kind {
        case .reference, .externalReference: return [batch.reference(of: cell)]
        case .referenceList:
            let start = Int(cell.integer)
            return (0..<Int(cell.length)).map { batch.reference(of: batch.references[start + $0]) }
        case .viaInverse: return nil
        default: return []
        }
    }

    /// `property` of `object`: nil when the graph did not keep it.
    public func entry(_ object: ObjectReference, _ property: String) -> Entry? {
        if let entry = entries[object]?[property] { return entry }
        if inverses[object.entity]?[property] != nil { return .objects(derived[object]?[property] ?? []) }
        return nil
    }

    /// The members of `object`'s to-many `relationship` rebuilt from the inverse (for a `viaInverse` cell).
    public func derivedMembers(of object: ObjectReference, _ relationship: String) -> [ObjectReference]? {
        guard inverses[object.entity]?[relationship] != nil else { return nil }
        return derived[object]?[relationship] ?? []
    }
}

extension ObjectModel {
    /// Every entity below `entity`, depth first.
    public func descendants(of entity: Entity) -> [Entity] {
        subentities(of: entity).flatMap { [$0] + descendants(of: $0) }
    }
}

extension SourceGraph {
    /// Per hop, the graph its key paths need (empty for hops that only read the mapped object), each collected in one
    /// pass over the source run through the hops before it.
    /// - Throws: the reader's errors, and the earlier hops' evaluation errors.
    public static func collect(
        plan: MigrationPlan,
        functions: ValueExpressionFunctions = ValueExpressionFunctions(),
        makeReader: () throws -> any RecordReader
    ) throws -> [SourceGraph] {
        var hops = plan.hops.map { CompiledHop(hop: $0, functions: functions) }
        try collect(into: &hops, makeReader: makeReader)
        return hops.map(\.graph)
    }

    /// Gives each of `hops` the graph its key paths need, each collected in one pass over the source run through the
    /// hops before it (which have their graphs by then).
    static func collect(into hops: inout [CompiledHop], makeReader: () throws -> any RecordReader) throws {
        for index in hops.indices {
            let (needs, inverseNeeds) = CompiledHop.keyPathNeeds(of: hops[index].navigatedPaths, in: hops[index].sourceModel)
            var graph = SourceGraph(needs: needs, inverseNeeds: inverseNeeds, model: hops[index].sourceModel)
            graph.fetch(hops[index].fetchRequests, in: hops[index].sourceModel)
            if !graph.isEmpty {
                try CompiledHop.forEachInput(of: hops.prefix(index), makeReader: makeReader) { graph.collect($0) }
                try graph.finishFetches()
            }
            hops[index].graph = graph
        }
    }
}

extension CompiledHop {
    /// Reads the source and runs it through `earlier` hops, handing each batch they produce to `body`.
    static func forEachInput(
        of earlier: ArraySlice<CompiledHop>,
        makeReader: () throws -> any RecordReader,
        _ body: (RecordBatch) throws -> Void
    ) throws {
        var reader = try makeReader()
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return }
        // A pass of its own: what policies found or inserted belongs to the run, not to this pass.
        var hops = earlier.map { $0.forAnotherPass() }
        var batch = RecordBatch(layout: layout)
        var ledger = MigrationLedger(hop: "")
        var rejects: [Reject] = []
        while try reader.nextBatch(into: &batch) {
            var current = [batch]
            for hopIndex in hops.indices {
                var next: [RecordBatch] = []
                for input in current {
                    try hops[hopIndex].apply(
                        input, into: &next, ledger: &ledger, rejects: &rejects, collectsRejects: true)
                }
                current = next
            }
            for input in current { try body(input) }
            rejects.removeAll()
        }
    }
}
