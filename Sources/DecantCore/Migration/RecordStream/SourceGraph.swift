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
        return try fetch.positions(for: predicate).lazy.map { fetch.candidates[$0] }
            .filter { try matches(predicate, $0, request) }
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

/// What a key path gives: one value, or objects.
enum KeyPathResult {
    case value(Value)
    case values([Value])
    case objects([ObjectReference], toOne: Bool)
}

extension CompiledHop {
    /// The properties key paths of this hop read beyond the mapped object, per source entity; and the mapped objects'
    /// own to-many relationships they start with (rebuilt from inverses when a reader gives `viaInverse`).
    static func keyPathNeeds(
        of paths: [(entity: String, path: [String])],
        in model: ObjectModel
    ) -> (needs: [String: Set<String>], inverseNeeds: [String: Set<String>]) {
        var needs: [String: Set<String>] = [:]
        var inverseNeeds: [String: Set<String>] = [:]
        for (start, path) in paths {
            guard let entity = model.entity(named: start) else { continue }
            var current = [entity] + model.descendants(of: entity)
            for (position, segment) in path.enumerated() {
                if segment.hasPrefix("@") {
                    if segment == "@count" { break }
                    continue
                }
                var next: [Entity] = []
                for entity in current {
                    let (attributes, relationships) = model.properties(of: entity)
                    if position > 0, attributes.contains(where: { $0.name == segment })
                        || relationships.contains(where: { $0.name == segment })
                    {
                        needs[entity.name, default: []].insert(segment)
                    }
                    if let relationship = relationships.first(where: { $0.name == segment }) {
                        if position == 0, relationship.isToMany { inverseNeeds[entity.name, default: []].insert(segment) }
                        if let target = relationship.destinationEntity.flatMap({ model.entity(named: $0) }) {
                            next += [target] + model.descendants(of: target)
                        }
                    }
                }
                current = next
                if current.isEmpty { break }
            }
        }
        return (needs, inverseNeeds)
    }

    /// Follows `path` from the object at `row` of `batch`: its own properties from the batch, others' from the graph.
    /// - Throws: `.malformedInput` naming the key path and the entity that has no such property.
    func navigate(_ path: [String], batch: RecordBatch, row: Int) throws -> KeyPathResult {
        let layout = batch.layout
        let selfReference = ObjectReference(entity: layout.entityName, id: batch.id(at: row))
        var current = KeyPathResult.objects([selfReference], toOne: true)
        // The entity the path is at, to tell an attribute from a relationship when no object is there.
        var entityName: String? = layout.entityName
        var index = 0
        // Whether the last step read a Transformable or Binary attribute: the rest of the path reads into its archive.
        var readsArchive = false
        func failure(_ message: String) -> DecantError {
            DecantError(.malformedInput, "\(ValueExpression.sourceText(path)): \(message)")
        }
        while index < path.count {
            if readsArchive {
                current = try readArchives(current, at: Array(path[index...]), of: path)
                break
            }
            let segment = path[index]
            index += 1
            if segment.hasPrefix("@") {
                let rest = Array(path[index...])
                index = path.count
                let items: [KeyPathResult]
                switch current {
                case .objects(let objects, _):
                    items = try objects.map { try follow(rest, from: .objects([$0], toOne: true), failure) }
                case .values(let values): items = values.map { .value($0) }
                case .value(let value): items = [.value(value)]
                }
                current = try Self.apply(segment, to: items, failure)
                continue
            }
            guard case .objects(let objects, let toOne) = current else {
                throw failure("\(segment) is read from a value, not from an object")
            }
            var values: [Value] = []
            var members: [ObjectReference] = []
            var isToOne = toOne
            var isAttribute = false
            for object in objects {
                let entry: SourceGraph.Entry
                if object == selfReference, index == 1 {
                    if let position = layout.attributeIndex(segment) {
                        entry = .value(batch.value(row: row, attribute: position))
                    } else if let position = layout.relationshipIndex(segment) {
                        let found = SourceGraph.members(batch, row: row, column: layout.attributes.count + position)
                        entry = .objects(found ?? graph.derivedMembers(of: object, segment) ?? [])
                        if layout.relationships[position].isToMany { isToOne = false }
                    } else {
                        throw failure("\(layout.entityName) has no property \(segment)")
                    }
                } else if let found = graph.entry(object, segment) {
                    entry = found
                    if case .objects = found, sourceModel.isToMany(segment, of: object.entity) { isToOne = false }
                } else if sourceModel.hasProperty(segment, of: object.entity) {
                    entry = .objects([])
                } else {
                    throw failure("\(object.entity) has no property \(segment)")
                }
                switch entry {
                case .value(let value):
                    isAttribute = true
                    values.append(value)
                case .objects(let found): members += found
                }
            }
            let kind = entityName.flatMap { sourceModel.propertyKind(segment, of: $0) }
            readsArchive = entityName.flatMap { sourceModel.holdsArchives(segment, of: $0) } ?? false
            entityName = kind?.destination
            if isAttribute || (objects.isEmpty && kind?.isAttribute == true) {
                current = isToOne && values.count <= 1 ? .value(values.first ?? .null) : .values(values)
            } else {
                current = .objects(members, toOne: isToOne)
            }
        }
        return current
    }

    /// What `rest` reaches inside the archived value (or values) `result` holds
    /// (``ValueExpressionFunctions/readArchive(_:at:reading:)``).
    private func readArchives(_ result: KeyPathResult, at rest: [String], of path: [String]) throws -> KeyPathResult {
        let text = ValueExpression.sourceText(path)
        switch result {
        case .value(let value): return .value(try functions.readArchive(value, at: rest, reading: text))
        case .values(let values):
            return .values(try values.map { try functions.readArchive($0, at: rest, reading: text) })
        case .objects(let objects, _) where objects.isEmpty: return .values([])
        case .objects: throw DecantError(.malformedInput, "\(text): objects hold no archived value")
        }
    }

    private func follow(
        _ path: [String], from start: KeyPathResult, _ failure: (String) -> DecantError
    ) throws -> KeyPathResult {
        guard !path.isEmpty else { return start }
        guard case .objects(let objects, _) = start else { throw failure("a collection operator needs objects") }
        var values: [Value] = []
        var members: [ObjectReference] = []
        var isAttribute = false
        for object in objects {
            var current = KeyPathResult.objects([object], toOne: true)
            var readsArchive = false
            for (position, segment) in path.enumerated() {
                if readsArchive {
                    // `$source.notes.@max.meta.year`: the rest reads into each member's archived value.
                    current = try readArchives(current, at: Array(path[position...]), of: path)
                    break
                }
                guard case .objects(let now, _) = current else { break }
                var nextValues: [Value] = []
                var nextMembers: [ObjectReference] = []
                var attribute = false
                readsArchive = now.contains { sourceModel.holdsArchives(segment, of: $0.entity) }
                for item in now {
                    switch graph.entry(item, segment) {
                    case .value(let value)?:
                        attribute = true
                        nextValues.append(value)
                    case .objects(let found)?: nextMembers += found
                    case nil:
                        guard sourceModel.hasProperty(segment, of: item.entity) else {
                            throw failure("\(item.entity) has no property \(segment)")
                        }
                    }
                }
                current = attribute ? .values(nextValues) : .objects(nextMembers, toOne: false)
            }
            switch current {
            case .values(let found):
                isAttribute = true
                values += found
            case .value(let value):
                isAttribute = true
                values.append(value)
            case .objects(let found, _): members += found
            }
        }
        return isAttribute ? .values(values) : .objects(members, toOne: false)
    }

    /// A collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`, `@distinctUnionOf…`, `@unionOf…`) applied to
    /// what the rest of the key path gave for each member.
    private static func apply(
        _ operation: String, to items: [KeyPathResult], _ failure: (String) -> DecantError
    ) throws -> KeyPathResult {
        var values: [Value] = []
        var objects: [ObjectReference] = []
        for item in items {
            switch item {
            case .value(let value): values.append(value)
            case .values(let found): values += found
            case .objects(let found, _): objects += found
            }
        }
        switch operation {
        case "@count": return .value(.integer(Int64(objects.count + values.count)))
        case "@sum", "@avg":
            let numbers = values.compactMap(\.number)
            let sum = numbers.reduce(0, +)
            if operation == "@avg" { return .value(numbers.isEmpty ? .null : .double(sum / Double(numbers.count))) }
            if values.allSatisfy({ if case .integer = $0 { true } else { false } }) {
                var total: Int64 = 0
                for case .integer(let integer) in values {
                    let (next, overflow) = total.addingReportingOverflow(integer)
                    guard !overflow else { throw ValueOverflow.error("@sum of \(values.count) integers") }
                    total = next
                }
                return .value(.integer(total))
            }
            return .value(.double(sum))
        case "@min", "@max":
            let present = values.filter { !$0.isNull }
            let best = present.dropFirst().reduce(present.first) { best, next in
                guard let best, let order = ValueExpression.compare(next, best) else { return best }
                return (operation == "@min") == (order == .orderedAscending) ? next : best
            }
            return .value(best ?? .null)
        case "@unionOfSets", "@unionOfObjects", "@unionOfArrays":
            return objects.isEmpty && !values.isEmpty ? .values(values) : .objects(objects, toOne: false)
        case "@distinctUnionOfSets", "@distinctUnionOfObjects", "@distinctUnionOfArrays":
            if objects.isEmpty && !values.isEmpty {
                var seen: Set<Value> = []
                return .values(values.filter { seen.insert($0).inserted })
            }
            var seen: Set<ObjectReference> = []
            return .objects(objects.filter { seen.insert($0).inserted }, toOne: false)
        default:
            throw failure("unknown collection operator \(operation)")
        }
    }
}

extension ObjectModel {
    /// Whether `entityName` (or a parent) has a property `name`.
    func hasProperty(_ name: String, of entityName: String) -> Bool {
        guard let entity = entity(named: entityName) else { return false }
        let (attributes, relationships) = properties(of: entity)
        return attributes.contains { $0.name == name } || relationships.contains { $0.name == name }
    }

    /// Whether `entityName`'s property `name` is an attribute, and where a relationship leads.
    func propertyKind(_ name: String, of entityName: String) -> (isAttribute: Bool, destination: String?)? {
        guard let entity = entity(named: entityName) else { return nil }
        let (attributes, relationships) = properties(of: entity)
        if attributes.contains(where: { $0.name == name }) { return (true, nil) }
        if let relationship = relationships.first(where: { $0.name == name }) {
            return (false, relationship.destinationEntity)
        }
        return nil
    }

    /// Whether `entityName`'s property `name` is an attribute whose values may be keyed archives: a Transformable
    /// attribute, or a Binary one an app archived values into. A key path reads on into them.
    func holdsArchives(_ name: String, of entityName: String) -> Bool {
        guard let entity = entity(named: entityName),
            let attribute = properties(of: entity).attributes.first(where: { $0.name == name })
        else { return false }
        return attribute.type == .transformable || attribute.type == .binary
    }

    /// Whether `entityName`'s relationship `name` is to-many.
    func isToMany(_ name: String, of entityName: String) -> Bool {
        guard let entity = entity(named: entityName) else { return false }
        return properties(of: entity).relationships.first { $0.name == name }?.isToMany ?? false
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

extension ObjectModel {
    /// The collection operators key paths may use.
    static let collectionOperators: Set<String> = [
        "@count", "@sum", "@avg", "@min", "@max", "@unionOfSets", "@unionOfObjects", "@unionOfArrays",
        "@distinctUnionOfSets", "@distinctUnionOfObjects", "@distinctUnionOfArrays",
    ]

    /// What is wrong with `$source.<path>` read from `entity` (nil: nothing): a property no entity on the way has, an
    /// unknown operator, or objects where a value is wanted (`wantsValue`) and the other way round.
    public func keyPathProblem(_ path: [String], from entity: Entity, wantsValue: Bool) -> String? {
        let text = ValueExpression.sourceText(path)
        var current = [entity]
        var givesValue = false
        // The Transformable or Binary attribute the last step read: what follows reads into its archived value.
        var archive: String?
        for (position, segment) in path.enumerated() {
            if let archive {
                let rest = path[position...]
                if let misplaced = rest.dropLast().first(where: { $0.hasPrefix("@") }) ?? rest.last.flatMap({
                    $0.hasPrefix("@") && $0 != "@count" ? $0 : nil
                }) {
                    return "\(text): \(misplaced) in the archived value of \(archive) (only @count, at the end)"
                }
                return wantsValue ? nil : "\(text) gives values, not objects"
            }
            if ValueExpression.index(ofStep: segment) != nil {
                return "\(text): \(segment) indexes an archived value (a Transformable or Binary attribute's), not "
                    + (givesValue ? "a value of another type" : "objects")
            }
            if segment.hasPrefix("@") {
                guard Self.collectionOperators.contains(segment) else { return "\(text): unknown operator \(segment)" }
                if segment == "@count" { return wantsValue ? nil : "\(text) gives a number, not objects" }
                continue
            }
            guard !givesValue else {
                return "\(text): \(segment) is read from a value, not from an object (a key path reads on only into "
                    + "a Transformable or Binary attribute's archived value)"
            }
            var next: [Entity] = []
            var found = false
            for candidate in current {
                let (attributes, relationships) = properties(of: candidate)
                if let attribute = attributes.first(where: { $0.name == segment && !$0.isTransient }) {
                    found = true
                    givesValue = true
                    if attribute.type == .transformable || attribute.type == .binary {
                        archive = "\(candidate.name).\(segment)"
                    }
                } else if let relationship = relationships.first(where: { $0.name == segment && !$0.isTransient }) {
                    found = true
                    if let target = relationship.destinationEntity.flatMap({ self.entity(named: $0) }) { next.append(target) }
                }
            }
            guard found else {
                let names = Set(current.map(\.name)).sorted().joined(separator: ", ")
                return "\(text): \(names) in \(versionName ?? "the source") has no property \(segment)"
            }
            current = next
        }
        if wantsValue && !givesValue { return "\(text) gives objects, not a value" }
        if !wantsValue && givesValue { return "\(text) gives values, not objects" }
        return nil
    }
}
