/// The objects a hop removes on purpose, with their delete rules applied: a mapping file's `remove: true` and the
/// objects its `where` filter drops, plus every object a Cascade rule takes with them. References to removed
/// objects become nil (Nullify). A Deny rule with related objects stops the migration and names them.
///
/// Removals Core Data infers (an entity the destination no longer has) drop their objects without delete rules, as
/// Core Data's lightweight migration does.
///
/// Finding the objects takes passes over the source before the migration writes anything (one, and one more per
/// level of cascade that only the other side of a relationship records); the removed identities are kept in key sets
/// `keySets` makes, which may spill to disk (``KeySetFactory``).
/// ```swift
/// let removals = try DeleteRules.removals(plan: plan, keySets: .spilling()) {
///     try format.makeReader(at: url, options: options)
/// }
/// var transform = try MigrationTransform(plan: plan, removals: removals)
/// ```
public enum DeleteRules: Sendable {
    /// The most passes spent following cascades before giving up.
    public static let maximumPasses = 16

    /// Per hop, the source objects it removes (empty for hops without removals a mapping file asked for).
    /// - Throws: `.planNotExecutable` naming the objects a Deny rule protects; the reader's errors; the key sets'
    ///   errors (`.ioError`).
    public static func removals(
        plan: MigrationPlan,
        functions: ValueExpressionFunctions = ValueExpressionFunctions(),
        keySets: KeySetFactory = .inMemory,
        graphs: [SourceGraph] = [],
        makeReader: () throws -> any RecordReader
    ) throws -> [RemovedObjects] {
        var hops = plan.hops.enumerated().map { index, hop in
            var compiled = CompiledHop(hop: hop, functions: functions)
            if index < graphs.count { compiled.graph = graphs[index] }
            return compiled
        }
        try removals(into: &hops, plan: plan, keySets: keySets, makeReader: makeReader)
        return hops.map(\.removedObjects)
    }

    /// Gives each of `hops` (compiled from `plan`'s, with their graphs) the source objects it removes, each found in
    /// passes over the source run through the hops before it (which have their removals by then).
    static func removals(
        into hops: inout [CompiledHop],
        plan: MigrationPlan,
        keySets: KeySetFactory,
        makeReader: () throws -> any RecordReader
    ) throws {
        for (index, hop) in plan.hops.enumerated() {
            let explicitRemovals = Set(
                hop.mapping.entityMappings.compactMap { mapping -> String? in
                    guard mapping.kind == .remove, case .file = mapping.origin else { return nil }
                    return mapping.sourceEntity
                }
            )
            let compiled = hops[index]
            let filtered = compiled.mappingsBySource.values.contains { $0.allSatisfy { $0.filter != nil } }
            guard !explicitRemovals.isEmpty || filtered else { continue }
            let removed = keySets.makeKeySet()
            var denials: [String] = []
            var passes = 0
            var changed = true
            while changed {
                passes += 1
                guard passes <= maximumPasses else {
                    throw DecantError(
                        .planNotExecutable,
                        "\(hop.name): cascading removals did not settle after \(maximumPasses) passes over the store"
                    )
                }
                changed = false
                denials = []
                try CompiledHop.forEachInput(of: hops.prefix(index), makeReader: makeReader) { batch in
                    try visit(
                        batch,
                        hop: compiled,
                        model: hop.source,
                        explicitRemovals: explicitRemovals,
                        removed: removed,
                        changed: &changed,
                        denials: &denials
                    )
                }
                for earlier in hops.prefix(index) { try earlier.removedObjects.checkLookups() }
            }
            if !denials.isEmpty {
                let shown = denials.prefix(10).joined(separator: "; ")
                let more = denials.count > 10 ? " (and \(denials.count - 10) more)" : ""
                throw DecantError(
                    .planNotExecutable,
                    "\(hop.name): a Deny rule protects objects the mapping removes: \(shown)\(more)"
                )
            }
            hops[index].removedObjects = RemovedObjects(removed)
        }
    }

    /// One batch of a pass: marks removed objects and follows their Cascade and Deny rules.
    private static func visit(
        _ batch: RecordBatch,
        hop: CompiledHop,
        model: ObjectModel,
        explicitRemovals: Set<String>,
        removed: any KeySet,
        changed: inout Bool,
        denials: inout [String]
    ) throws {
        let layout = batch.layout
        let entity = layout.entityName
        // A `where` filters one entity mapping (as in Core Data): an object is removed only when every mapping that
        // reads its entity filters it out; one that another mapping takes lives on.
        let mappings = hop.mappingsBySource[entity] ?? []
        let filtersAll = !mappings.isEmpty && mappings.allSatisfy { $0.filter != nil }
        let attributeCount = layout.attributes.count
        for row in 0..<batch.count {
            let reference = ObjectReference(entity: entity, id: batch.id(at: row))
            var isRemoved = try removed.contains(reference)
            if !isRemoved {
                if explicitRemovals.contains(entity) {
                    isRemoved = true
                } else if filtersAll, try mappings.allSatisfy({ !(try hop.keeps(row: row, of: batch, under: $0)) }) {
                    isRemoved = true
                }
            }
            // A related object removed with a Cascade (or Deny) rule on its side of this relationship.
            for (position, relationship) in layout.relationships.enumerated() {
                let targets = references(in: batch, row: row, column: attributeCount + position)
                guard !targets.isEmpty, let inverse = model.inverse(of: relationship) else { continue }
                for target in targets where try removed.contains(target) {
                    switch inverse.deleteRule {
                    case .cascade: isRemoved = true
                    case .deny:
                        denials.append("\(target) (\(inverse.name), Deny) still has \(reference)")
                    default: break
                    }
                }
            }
            guard isRemoved else { continue }
            if try removed.insert(reference) { changed = true }
            for (position, relationship) in layout.relationships.enumerated() {
                let targets = references(in: batch, row: row, column: attributeCount + position)
                guard !targets.isEmpty else { continue }
                switch relationship.deleteRule {
                case .cascade:
                    for target in targets where try removed.insert(target) { changed = true }
                case .deny:
                    denials.append(
                        "\(reference) (\(relationship.name), Deny) still has "
                            + targets.prefix(5).map(\.description).joined(separator: ", ")
                    )
                default:
                    break
                }
            }
        }
    }

    private static func references(in batch: RecordBatch, row: Int, column: Int) -> [ObjectReference] {
        SourceGraph.members(batch, row: row, column: column) ?? []
    }
}
