import Foundation
import Synchronization

/// A hop prepared for execution: per source entity the mappings that read it, with column plans.
struct CompiledHop {
    /// Where a destination object's identity comes from.
    struct Target {
        var entity: String
        var mapping: String
        var keepsIdentity: Bool
        /// The mapping finds or creates its objects by a key (``EntityMapping/findOrCreate``): an object's identity
        /// is its key's, which only the source object's own values give.
        var findsByKey = false

        func identity(of id: RecordID) -> RecordID { keepsIdentity ? id : .external("\(mapping):\(id)") }
    }

    enum AttributePlan {
        /// Copy the source cell at this attribute position as it is.
        case copy(Int)
        /// Evaluate.
        case expression(ValueExpression)
        /// No value.
        case null
        /// A value computed once: an expression that reads no source property and calls no function.
        case constant(Value)
    }

    enum RelationshipPlan {
        /// No value.
        case none
        /// The source relationship at this position, followed to the destination entity `target`.
        case source(Int, target: String)
        /// The source object itself, as the object it became under the mapping into `target`.
        case sourceObject(target: String)
        /// Objects an expression reaches (a key path through relationships, `mapped(…)`), followed to `target`.
        case expression(ValueExpression, target: String)
    }

    struct Mapping {
        var name: String
        var destination: String
        var target: Target
        var layout: RecordLayout
        var filter: ValueExpression?
        var findOrCreate: ValueExpression?
        var attributes: [AttributePlan]
        var relationships: [RelationshipPlan]
        /// Positions of destination attributes that must not be nil.
        var required: [Bool]
        /// The destination attributes' types and names, and whether each relationship is to-many (layout order).
        var attributeTypes: [AttributeType]
        var attributeNames: [String]
        var relationshipIsToMany: [Bool]
        var isPrimary: Bool
        /// The mapping as planned, and the policy that makes its objects (an Xcode mapping model's custom policy).
        var entityMapping: EntityMapping
        var policy: (any EntityMigrationPolicy)?
    }

    let name: String
    /// The functions, with this hop's own notes of values read as nil from archives (``ArchiveReads``).
    private(set) var functions: ValueExpressionFunctions
    /// Source entity → the mappings reading it (primary first).
    var mappingsBySource: [String: [Mapping]] = [:]
    /// Source attribute position by name, per source entity.
    var sourceAttributeIndex: [String: [String: Int]] = [:]
    /// `sourceEntity|destinationEntity` → where a reference to a source object of that entity goes.
    private let targetCache = TargetCache()
    private let layouts = LayoutCache()
    private let sourceLayouts = LayoutCache()
    /// Whether a nil copied as it is into a required attribute is left to the validator, which excuses it when the
    /// source object was already missing that value (``MigrationTransform``'s carried violations).
    var leavesCopiedNilsToValidator = false
    /// The keys policies found or inserted objects by, in this hop.
    private var keys = KeyRegistry()
    /// Source objects removed on purpose (``DeleteRules``): not mapped, and references to them become nil.
    var removedObjects: RemovedObjects = []
    /// The owners the members of to-manys set across source objects are owed as their to-one (``OwedLinks``).
    var owedOwners: (any ReferenceMap)?
    private let destination: ObjectModel
    /// The hop's source version, for key paths through relationships.
    let sourceModel: ObjectModel
    private var targetsBySource: [String: [Target]] = [:]
    /// Mapping name → where its objects go (`mapped('CountryToCountry', …)`).
    private(set) var targetsByName: [String: Target] = [:]
    /// Key paths of this hop that leave the mapped object, from their source entity.
    private(set) var navigatedPaths: [(entity: String, path: [String])] = []
    /// The fetches of source objects this hop's expressions make.
    private(set) var fetchRequests: [FetchRequest] = []
    /// What those key paths read from other source objects, and what the fetches found (collected before the hop
    /// runs; see ``SourceGraph``). Setting it turns `fetchCount(…)` into the number found, where the fetch's
    /// predicate does not read `$source` (one that does is counted per object: ``value(of:row:of:in:)``).
    var graph: SourceGraph {
        didSet {
            guard !fetchRequests.isEmpty else { return }
            let graph = self.graph
            countsPerObject = fetchRequests.contains(where: graph.readsSource)
            let counted: (String, [ValueExpression]) -> ValueExpression? = { name, arguments in
                guard name == "fetchCount", let request = FetchRequest(arguments), !graph.readsSource(request) else {
                    return nil
                }
                return .literal(.integer(Int64(graph.objects(fetchedBy: request).count)))
            }
            for (source, mappings) in mappingsBySource {
                mappingsBySource[source] = mappings.map { mapping in
                    var mapping = mapping
                    mapping.attributes = mapping.attributes.map { plan in
                        guard case .expression(let expression) = plan else { return plan }
                        return .expression(expression.replacingCalls(counted))
                    }
                    mapping.filter = mapping.filter?.replacingCalls(counted)
                    mapping.findOrCreate = mapping.findOrCreate?.replacingCalls(counted)
                    return mapping
                }
            }
        }
    }
    /// Whether a `fetchCount(…)` of this hop reads `$source`, so that each object counts its own.
    var countsPerObject = false

    init(hop: MigrationPlan.Hop, functions: ValueExpressionFunctions) {
        HopCompilations.current?.record(hop.name)
        self.name = hop.name
        var functions = functions
        functions.archiveReads = ArchiveReads()
        self.functions = functions
        self.destination = hop.destination
        self.sourceModel = hop.source
        self.graph = SourceGraph(needs: [:], model: hop.source)
        let source = hop.source
        // A source's first mapping is its primary, whose ledger row counts the source's objects read: the mapping into
        // the entity of the source's own name when there is one (`Measurement` read 2, not `Event`, when Measurements
        // feed both), and never one that finds or creates (it merges objects, so it cannot count each one once).
        let moving = hop.mapping.entityMappings.filter(hop.moves)
        let own = moving.filter { $0.findOrCreate == nil && $0.sourceEntity == $0.destinationEntity }
        let live = own + moving.filter { $0.findOrCreate == nil && $0.sourceEntity != $0.destinationEntity }
            + moving.filter { $0.findOrCreate != nil }
        var seenSources: Set<String> = []
        for mapping in live {
            guard let from = mapping.sourceEntity, let to = mapping.destinationEntity,
                let sourceLayout = RecordLayout(entity: from, in: source),
                let layout = RecordLayout(entity: to, in: destination)
            else { continue }
            let target = Target(
                entity: to, mapping: mapping.name, keepsIdentity: hop.keepsIdentities(of: to),
                findsByKey: mapping.findOrCreate != nil)
            targetsBySource[from, default: []].append(target)
            targetsByName[mapping.name] = target
            for path in (mapping.filter?.sourceKeyPaths ?? []) + (mapping.findOrCreate?.sourceKeyPaths ?? []) {
                navigatedPaths.append((from, path))
            }
            let expressions = (mapping.attributes + mapping.relationships).compactMap(\.expression)
                + [mapping.filter, mapping.findOrCreate].compactMap { $0 }
            for request in expressions.flatMap(\.fetchRequests) {
                fetchRequests.append(request)
                // What a fetch predicate reads of the object being mapped ($source.folder.name) beyond it.
                let predicate = try? ObjectPredicate(parsing: request.predicate, source: "FETCH predicate", isFetch: true)
                for path in predicate?.sourceKeyPaths ?? [] { navigatedPaths.append((from, path)) }
            }
            var attributes: [AttributePlan] = []
            var required: [Bool] = []
            for attribute in layout.attributes {
                let expression = mapping.property(attribute.name)?.expression
                required.append(!attribute.isOptional)
                switch expression {
                case .source(let path)? where path.count == 1:
                    if let index = sourceLayout.attributeIndex(path[0]),
                        MappingInference.Rules.copies(sourceLayout.attributes[index].type, into: attribute.type)
                    {
                        attributes.append(.copy(index))
                    } else {
                        attributes.append(.expression(.source(keyPath: path)))
                    }
                case let expression?:
                    if let converted = expression.constantValue(as: attribute.type, functions: functions) {
                        attributes.append(.constant(converted))
                    } else {
                        attributes.append(.expression(expression))
                        for path in expression.sourceKeyPaths { navigatedPaths.append((from, path)) }
                    }
                case nil: attributes.append(.null)
                }
            }
            var relationships: [RelationshipPlan] = []
            for relationship in layout.relationships {
                let targetEntity = relationship.destinationEntity ?? ""
                switch mapping.property(relationship.name)?.expression {
                case .source(let path)? where path.isEmpty:
                    relationships.append(.sourceObject(target: targetEntity))
                case .source(let path)? where path.count == 1 && sourceLayout.relationshipIndex(path[0]) != nil:
                    relationships.append(.source(sourceLayout.relationshipIndex(path[0]) ?? 0, target: targetEntity))
                case .source(let path)? where path.count == 1:
                    relationships.append(.none)
                case .literal(.null)?, nil:
                    relationships.append(.none)
                case let expression?:
                    relationships.append(.expression(expression, target: targetEntity))
                    for path in expression.sourceKeyPaths { navigatedPaths.append((from, path)) }
                }
            }
            mappingsBySource[from, default: []].append(
                Mapping(
                    name: mapping.name,
                    destination: to,
                    target: target,
                    layout: layout,
                    filter: mapping.filter,
                    findOrCreate: mapping.findOrCreate,
                    attributes: attributes,
                    relationships: relationships,
                    required: required,
                    attributeTypes: layout.attributes.map(\.type),
                    attributeNames: layout.attributes.map(\.name),
                    relationshipIsToMany: layout.relationships.map(\.isToMany),
                    isPrimary: seenSources.insert(from).inserted,
                    entityMapping: mapping,
                    policy: mapping.policy.flatMap { functions.policy(named: $0) }
                )
            )
            if sourceAttributeIndex[from] == nil {
                sourceAttributeIndex[from] = Dictionary(
                    sourceLayout.attributes.enumerated().map { ($1.name, $0) },
                    uniquingKeysWith: { first, _ in first }
                )
            }
        }
    }

    /// The hop compiled as it is, with the keys policies find or insert objects by empty: for a pass over the source
    /// before the run (``SourceGraph``, ``DeleteRules``), which must leave the run's keys as they were.
    func forAnotherPass() -> CompiledHop {
        var hop = self
        hop.keys = KeyRegistry()
        hop.functions.archiveReads = ArchiveReads()
        return hop
    }

    /// The object a source object becomes in this hop under its mapping into `entity` (nil: its primary mapping).
    func object(madeFrom reference: ObjectReference, into entity: String?) -> ObjectReference? {
        let mappings = mappingsBySource[reference.entity] ?? []
        guard let mapping = entity == nil ? mappings.first : mappings.first(where: { $0.destination == entity })
        else { return nil }
        return ObjectReference(entity: mapping.destination, id: mapping.target.identity(of: reference.id))
    }

    /// Where a source object and one of its properties went in this hop: the object its entity's primary mapping
    /// made, and the destination property that mapping fills from that property alone (`$source.name`, renamed or
    /// not); nil when the property reaches no destination property as it is.
    func carried(_ reference: ObjectReference, property: String) -> (ObjectReference, String)? {
        guard let mapping = mappingsBySource[reference.entity]?.first else { return nil }
        let destination = ObjectReference(entity: mapping.destination, id: mapping.target.identity(of: reference.id))
        if let index = sourceAttributeIndex[reference.entity]?[property] {
            for (position, plan) in mapping.attributes.enumerated() {
                switch plan {
                case .copy(let column) where column == index:
                    return (destination, mapping.attributeNames[position])
                case .expression(.source(let path)) where path == [property]:
                    return (destination, mapping.attributeNames[position])
                default:
                    continue
                }
            }
            return nil
        }
        guard let layout = sourceLayouts.layout(reference.entity, in: sourceModel),
            let index = layout.relationshipIndex(property)
        else { return nil }
        for (position, plan) in mapping.relationships.enumerated() {
            if case .source(let column, _) = plan, column == index {
                return (destination, mapping.layout.relationships[position].name)
            }
        }
        return nil
    }

    /// Where a reference to a `sourceEntity` object goes when it is a member of a relationship to `target`: the
    /// object it became under the one mapping into `target` or below; the first such mapping when there are several.
    func referenceTarget(sourceEntity: String, target: String) -> Target? {
        let cache = targetCache
        // Most references of a relationship go to one entity: the last answer is checked before the table.
        if let last = cache.last, last.source == sourceEntity, last.target == target { return last.found }
        let key = sourceEntity + "|" + target
        if let known = cache.targets[key] {
            cache.last = (sourceEntity, target, known)
            return known
        }
        let found = (targetsBySource[sourceEntity] ?? []).first { candidate in
            guard let entity = destination.entity(named: candidate.entity) else { return false }
            return entity.name == target || destination.ancestors(of: entity).contains { $0.name == target }
        }
        cache.targets[key] = .some(found)
        cache.last = (sourceEntity, target, found)
        return found
    }

    /// Destination layouts by entity, for the objects policies make.
    final class LayoutCache {
        private var layouts: [String: RecordLayout] = [:]
        func layout(_ entity: String, in model: ObjectModel) -> RecordLayout? {
            if let known = layouts[entity] { return known }
            let made = RecordLayout(entity: entity, in: model)
            layouts[entity] = made
            return made
        }
    }

    /// Runs `policy` for the object at `row`: what it made, in order.
    private func runPolicy(
        _ policy: any EntityMigrationPolicy, mapping: Mapping, batch: RecordBatch, row: Int
    ) throws -> [DestinationObject] {
        let reference = ObjectReference(entity: batch.layout.entityName, id: batch.id(at: row))
        let manager = MigrationManager(
            source: reference,
            mappingName: mapping.name,
            read: { try self.navigate($0, batch: batch, row: row) },
            makeDefault: { try self.defaultObject(mapping, batch: batch, row: row) },
            lookUp: { name, source in
                guard let target = self.targetsByName[name],
                    self.removedObjects.isEmpty || !self.removedObjects.contains(source)
                else { return nil }
                return ObjectReference(entity: target.entity, id: target.identity(of: source.id))
            },
            keys: keys,
            defaults: { [destination] entity in
                guard let found = destination.entity(named: entity) else { return [:] }
                var values: [String: Value] = [:]
                for attribute in destination.properties(of: found).attributes {
                    if let value = attribute.defaultLiteral { values[attribute.name] = value }
                }
                return values
            }
        )
        try policy.createDestinationInstances(forSource: reference, in: mapping.entityMapping, manager: manager)
        return manager.created
    }

    /// The object `mapping`'s own expressions make from the object at `row` (what a policy's `super` makes).
    private func defaultObject(_ mapping: Mapping, batch: RecordBatch, row: Int) throws -> DestinationObject {
        let id = batch.id(at: row)
        let object = DestinationObject(
            entity: mapping.destination,
            reference: ObjectReference(entity: mapping.destination, id: mapping.target.identity(of: id)),
            isNew: true
        )
        let attributeIndex = sourceAttributeIndex[batch.layout.entityName] ?? [:]
        for (position, plan) in mapping.attributes.enumerated() {
            let value: Value
            switch plan {
            case .copy(let column): value = batch.value(row: row, attribute: column)
            case .null: value = .null
            case .constant(let constant): value = constant
            case .expression(let expression):
                value = try self.value(of: expression, row: row, of: batch, in: attributeIndex)
            }
            let name = mapping.attributeNames[position]
            object[name] = try functions.converted(value, to: mapping.attributeTypes[position], reading: name) ?? .null
        }
        let sourceReference = ObjectReference(entity: batch.layout.entityName, id: id)
        for (position, plan) in mapping.relationships.enumerated() {
            let name = mapping.layout.relationships[position].name
            switch plan {
            case .none: break
            case .sourceObject(let target):
                object.setRelationship(name, to: mapped(sourceReference, target: target).map { [$0] } ?? [])
            case .source(let column, let target):
                if let members = SourceGraph.members(
                    batch, row: row, column: batch.layout.attributes.count + column)
                {
                    object.setRelationship(name, to: members.compactMap { mapped($0, target: target) })
                }
            case .expression(let expression, let target):
                object.setRelationship(
                    name, to: try destinationObjects(expression, batch: batch, row: row, target: target))
            }
        }
        return object
    }

    /// Appends a policy's object as a record of `layout`: unset attributes nil, unset to-many relationships told by
    /// their inverse when it is a to-one (as a store's reader gives them), else empty.
    private static func emit(
        _ object: DestinationObject, layout: RecordLayout, into batch: inout RecordBatch, model: ObjectModel
    ) {
        batch.beginRecord(id: object.reference.id)
        for attribute in layout.attributes {
            batch.append(object.values[attribute.name] ?? .null, as: attribute.type)
        }
        for relationship in layout.relationships {
            let members = object.links[relationship.name]
            if relationship.isToMany {
                if let members {
                    batch.appendReferenceList(members)
                } else if model.hasToOneInverse(relationship) {
                    batch.appendViaInverse()
                } else {
                    batch.appendReferenceList([])
                }
            } else {
                batch.appendReference(members?.first)
            }
        }
        batch.endRecord()
    }

    /// Answers of ``referenceTarget(sourceEntity:target:)`` (`source|target` → target), and the last one.
    final class TargetCache {
        var targets: [String: Target?] = [:]
        var last: (source: String, target: String, found: Target?)?
    }

    func mapped(_ reference: ObjectReference, target: String) -> ObjectReference? {
        if !removedObjects.isEmpty && removedObjects.contains(reference) { return nil }
        guard let destination = referenceTarget(sourceEntity: reference.entity, target: target) else { return nil }
        return ObjectReference(entity: destination.entity, id: destination.identity(of: reference.id))
    }

    /// One value a destination attribute will get: a source cell, or an evaluated value.
    enum Pending {
        case cell(RecordBatch.Cell)
        case value(Value)
    }

    /// Runs one batch of a source entity through the hop: per mapping that reads the entity, each object is removed
    /// (``removedObjects``, the mapping's filter), made by the mapping's policy, refused (a value it cannot take), or
    /// written with its values and relationships; `ledger` counts each outcome.
    mutating func apply(
        _ batch: RecordBatch,
        into output: inout [RecordBatch],
        ledger: inout MigrationLedger,
        rejects: inout [Reject],
        collectsRejects: Bool
    ) throws {
        let sourceEntity = batch.layout.entityName
        guard let mappings = mappingsBySource[sourceEntity], !mappings.isEmpty else {
            ledger.rows[sourceEntity, default: MigrationLedger.Row()].read += batch.count
            ledger.rows[sourceEntity, default: MigrationLedger.Row()].removed += batch.count
            return
        }
        let attributeIndex = sourceAttributeIndex[sourceEntity] ?? [:]
        var pending: [Pending] = []
        var extras: [String: RecordBatch] = [:]
        defer { for (_, extra) in extras.sorted(by: { $0.key < $1.key }) where extra.count > 0 { output.append(extra) } }
        for mapping in mappings {
            var out = RecordBatch(layout: mapping.layout)
            var row = ledger.rows[mapping.destination, default: MigrationLedger.Row()]
            if mapping.isPrimary { row.read += batch.count }
            for index in 0..<batch.count {
                let id = batch.id(at: index)
                if !mapping.isPrimary { row.created += 1 }
                if try isRemoved(row: index, of: batch, under: mapping) {
                    row.removed += 1
                    continue
                }
                var identity = mapping.target.identity(of: id)
                if mapping.findOrCreate != nil {
                    // One object per key: a source object whose key has an object already (or is nil) makes none.
                    guard let keyed = try keyedIdentity(row: index, of: batch, under: mapping), keys.insert(keyed) else {
                        if mapping.isPrimary { row.removed += 1 } else { row.created -= 1 }
                        continue
                    }
                    identity = .external(keyed)
                }
                if let policy = mapping.policy {
                    try applyPolicy(
                        policy, row: index, of: batch, under: mapping, into: &out, counts: &row, extras: &extras,
                        ledger: &ledger)
                    continue
                }
                pending.removeAll(keepingCapacity: true)
                let failure = try attributeValues(
                    row: index, of: batch, under: mapping, in: attributeIndex, into: &pending,
                    collectsRejects: collectsRejects)
                if let failure {
                    try refuse(failure, under: mapping, rejects: &rejects, collectsRejects: collectsRejects)
                    row.rejected += 1
                    continue
                }
                out.beginRecord(id: identity)
                for (position, value) in pending.enumerated() {
                    switch value {
                    case .cell(let cell): Self.copy(cell, from: batch, into: &out)
                    case .value(let value): out.append(value, as: mapping.attributeTypes[position])
                    }
                }
                try appendRelationships(row: index, of: batch, under: mapping, into: &out)
                out.endRecord()
                row.written += 1
            }
            ledger.rows[mapping.destination] = row
            if out.count > 0 { output.append(out) }
        }
    }

    /// Whether the source object at `row` is removed rather than mapped: removed on purpose (``removedObjects``), or
    /// dropped by `mapping`'s filter.
    private func isRemoved(row index: Int, of batch: RecordBatch, under mapping: Mapping) throws -> Bool {
        if !removedObjects.isEmpty
            && removedObjects.contains(ObjectReference(entity: batch.layout.entityName, id: batch.id(at: index)))
        {
            return true
        }
        guard mapping.filter != nil else { return false }
        return !(try keeps(row: index, of: batch, under: mapping))
    }

    /// Runs `mapping`'s policy for the object at `row`: the object the mapping makes goes to `out`, others of its
    /// entity too (counted as created), objects of other entities to `extras`; the source object counts as removed
    /// when the policy did not make the mapping's own object.
    private func applyPolicy(
        _ policy: any EntityMigrationPolicy,
        row index: Int,
        of batch: RecordBatch,
        under mapping: Mapping,
        into out: inout RecordBatch,
        counts row: inout MigrationLedger.Row,
        extras: inout [String: RecordBatch],
        ledger: inout MigrationLedger
    ) throws {
        let sourceEntity = batch.layout.entityName
        let id = batch.id(at: index)
        let made = try located("\(sourceEntity)/\(id)", mapping) {
            try runPolicy(policy, mapping: mapping, batch: batch, row: index)
        }
        var madeDefault = false
        for object in made {
            if object.entity == mapping.destination && object.reference.id == mapping.target.identity(of: id) {
                madeDefault = true
                Self.emit(object, layout: mapping.layout, into: &out, model: destination)
                row.written += 1
                continue
            }
            if object.entity == mapping.destination {
                Self.emit(object, layout: mapping.layout, into: &out, model: destination)
                row.created += 1
                row.written += 1
                continue
            }
            guard let layout = layouts.layout(object.entity, in: destination) else {
                throw DecantError(
                    .malformedInput,
                    "the policy of \(mapping.name) made a \(object.entity), which \(name)'s destination "
                        + "does not have",
                    at: Location(entity: mapping.destination, object: "\(sourceEntity)/\(id)")
                )
            }
            var extra = extras[object.entity] ?? RecordBatch(layout: layout)
            Self.emit(object, layout: layout, into: &extra, model: destination)
            extras[object.entity] = extra
            ledger.rows[object.entity, default: MigrationLedger.Row()].created += 1
            ledger.rows[object.entity, default: MigrationLedger.Row()].written += 1
        }
        if !madeDefault { row.removed += 1 }
    }

    /// Appends a source cell unchanged (text and bytes copied from the source batch's buffer).
    static func copy(_ cell: RecordBatch.Cell, from batch: RecordBatch, into out: inout RecordBatch) {
        switch cell.kind {
        case .text: batch.withBytes(of: cell) { out.appendText(utf8: $0) }
        case .blob: batch.withBytes(of: cell) { out.appendBlob(raw: $0) }
        case .externalDataReference:
            out.appendExternalDataReference(batch.withBytes(of: cell) { String(decoding: $0, as: UTF8.self) })
        case .integer, .real, .null: out.append(cell)
        default: out.appendNull()
        }
    }
}

/// The hops compiled (for a run, a dry run or a pass) in the task that binds ``current``, for tests of how often a run
/// compiles each hop; nothing is counted where it is not bound. The record stream compiles a hop once per run, never
/// per object, so the look-up is once per hop.
package final class HopCompilations: Sendable {
    /// The record of the current task, when a test bound one.
    @TaskLocal package static var current: HopCompilations?

    private let names = Mutex<[String]>([])

    package init() {}

    /// The names of the hops compiled so far, one per compilation, in order.
    package var hops: [String] { names.withLock { $0 } }

    func record(_ hop: String) {
        names.withLock { $0.append(hop) }
    }
}
