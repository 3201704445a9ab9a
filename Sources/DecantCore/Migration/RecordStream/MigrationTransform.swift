import Foundation

/// Runs a ``MigrationPlan`` as the transform stage of a record transfer: every input batch passes through the hops
/// in order, each hop turning its source version's batches into its destination version's, so the whole chain runs
/// in one streaming pass with nothing but the current batches in memory.
///
/// Identities are mapped by rule, not remembered: an object keeps its identity where its destination table receives
/// objects of one source table only, and otherwise becomes `<mapping>:<identity>`, which the writer turns into a key
/// of its own (its identity map spills to disk). A relationship follows the same rule to the object its member
/// became, so references stay right across entities and hops without a lookup.
///
/// ```swift
/// var transform = try MigrationTransform(plan: plan)
/// let transfer = try RecordTransfer.copy(from: &reader, through: transform, to: &writer)
/// ```
/// To ``RecordTransfer`` a migration consumes every input object (counted as removed under its entity) and
/// creates every output object; ``ledgers`` tell, per hop and entity, what was read, written, rejected, removed
/// and created, and ``MigrationLedger/isReconciled`` proves the numbers add up.
public struct MigrationTransform: RecordTransform {
    private var hops: [CompiledHop]
    /// Per hop, what sets the other side of the links its mappings set on one side.
    private var inverseLinks: [InverseLinks]
    /// Counts the links the output states only on a to-many side whose to-one it leaves nil (nil: every hop is
    /// inferred, so every link comes from the source with the side its store kept).
    private let oneSidedLinks: OneSidedLinks?
    /// The ledgers, shared by every copy of the transform (``RecordTransfer`` runs a copy).
    private let book: LedgerBook
    /// Per hop, what happened to each entity's objects (so far).
    public var ledgers: [MigrationLedger] { book.ledgers }
    /// Whether objects that break a rule are rejected (listed, the run goes on) rather than stopping the run.
    public let collectsRejects: Bool
    /// Checks the final objects against the destination model's rules before they are written (nil: no checks).
    private var validator: ModelValidator?
    /// Checks the source objects against the source version's rules, to tell the violations an object already had
    /// (nil: every violation stops or rejects, as with `strict`).
    private var sourceValidator: ModelValidator?
    /// The violations carried over: what the source objects of the current batch already broke, and what was let
    /// pass (shared by the validator's excuse and every copy of the transform).
    private let carried = CarriedViolations()

    /// Prepares the plan's hops, each removing the objects `removals` lists for it (``DeleteRules``); with
    /// `validates`, every object is checked against the destination version's rules
    /// (``ModelValidator``) before it is written.
    ///
    /// Core Data's lightweight migration runs inside SQLite and never validates the objects it moves. So when every
    /// hop is inferred and `strict` is false, a violation an object already had at the source version (the same
    /// object, property and rule) is carried over: the object is written, and the run's diagnostics count such
    /// violations per entity, property and rule. Only violations the migration makes stop it or reject objects.
    /// With `strict`, or a hop a mapping file or mapping model states, every violation does.
    /// - Throws: `.planNotExecutable` listing the plan's problems when it has any.
    public init(
        plan: MigrationPlan,
        functions: ValueExpressionFunctions = ValueExpressionFunctions(),
        collectsRejects: Bool = false,
        validates: Bool = true,
        removals: [RemovedObjects] = [],
        graphs: [SourceGraph] = [],
        keySets: KeySetFactory = .inMemory,
        strict: Bool = false
    ) throws {
        try Self.requireExecutable(plan)
        let hops = plan.hops.enumerated().map { index, hop in
            var compiled = CompiledHop(hop: hop, functions: functions)
            if index < removals.count { compiled.removedObjects = removals[index] }
            if index < graphs.count { compiled.graph = graphs[index] }
            return compiled
        }
        self.init(
            plan: plan, compiled: hops, collectsRejects: collectsRejects, validates: validates, keySets: keySets,
            strict: strict)
    }

    /// The transform of `plan`, whose hops are compiled already (``RecordStreamEngine``), with their graphs and
    /// removals.
    init(
        plan: MigrationPlan, compiled hops: [CompiledHop], collectsRejects: Bool, validates: Bool, keySets: KeySetFactory,
        strict: Bool
    ) {
        self.hops = hops
        self.inverseLinks = plan.hops.map { InverseLinks(model: $0.destination) }
        self.oneSidedLinks =
            plan.hops.allSatisfy(\.isInferred) ? nil : OneSidedLinks(plan: plan, keySets: keySets)
        self.book = LedgerBook(plan.hops.map { MigrationLedger(hop: $0.name) })
        self.collectsRejects = collectsRejects
        self.validator = validates ? ModelValidator(model: plan.destination, collectsRejects: collectsRejects, keySets: keySets) : nil
        if validates, !strict, let source = plan.hops.first?.source, plan.hops.allSatisfy(\.isInferred) {
            var sourceValidator = ModelValidator(
                model: source, collectsRejects: true, dropsRejected: false, keySets: keySets)
            sourceValidator.listsEveryFailure = true
            // A reference dangles after inferred hops either as it did in the source or because its object was
            // rejected (``CarriedViolations/rejected``): the source's identities need not be remembered. Values of
            // uniqueness constraints are, when the destination has constraints.
            sourceValidator.checksReferences = false
            sourceValidator.checksUniqueness = plan.destination.entities.contains { !$0.uniquenessConstraints.isEmpty }
            self.sourceValidator = sourceValidator
            let carried = self.carried
            self.validator?.excuses = { carried.excuses($0) }
            for index in self.hops.indices { self.hops[index].leavesCopiedNilsToValidator = true }
        }
    }

    /// - Throws: `.planNotExecutable` listing `plan`'s problems when it has any.
    static func requireExecutable(_ plan: MigrationPlan) throws {
        guard plan.isExecutable else {
            throw DecantError(
                .planNotExecutable,
                "the migration \(plan.sourceVersion) → \(plan.destinationVersion) cannot run: "
                    + plan.problems.map(\.description).joined(separator: "; ")
            )
        }
    }

    /// The key a violation is known by: object, property, rule.
    private static func key(_ object: String, _ property: String?, _ rule: String) -> String {
        object + "\u{1F}" + (property ?? "") + "\u{1F}" + rule
    }

    /// The key a source object's violation has once the hops carried its object and property over; nil when a hop
    /// does not carry them as they are.
    private func carriedKey(_ violation: Reject, of source: ObjectReference) -> String? {
        var reference = source
        var properties = violation.property.map { $0.split(separator: ",").map(String.init) } ?? []
        guard !properties.isEmpty else { return nil }
        for hop in hops {
            var next: ObjectReference?
            var renamed: [String] = []
            for property in properties {
                guard let (object, name) = hop.carried(reference, property: property) else { return nil }
                next = object
                renamed.append(name)
            }
            guard let next else { return nil }
            reference = next
            properties = renamed
        }
        return Self.key("\(reference.entity)/\(reference.id)", properties.joined(separator: ","), violation.rule)
    }

    /// The object `Entity/p12` (a primary key) or `Entity/name` (an id the source gave) names, as
    /// ``ObjectReference``'s description writes it.
    private static func reference(named text: String) -> ObjectReference? {
        guard let slash = text.firstIndex(of: "/") else { return nil }
        let name = text[text.index(after: slash)...]
        let id: RecordID =
            if name.first == "p", let key = Int64(name.dropFirst()) {
                .primaryKey(key)
            } else {
                .external(String(name))
            }
        return ObjectReference(entity: String(text[..<slash]), id: id)
    }

    /// The object an object hop `index` refused would have become after the last hop (`Entity/id`); nil when a
    /// later hop does not carry it.
    private func finalObject(ofRefused reject: Reject, atHop index: Int) -> String? {
        guard let source = Self.reference(named: reject.object),
            var reference = hops[index].object(madeFrom: source, into: reject.entity)
        else { return nil }
        for hop in hops[(index + 1)...] {
            guard let next = hop.object(madeFrom: reference, into: nil) else { return nil }
            reference = next
        }
        return reference.description
    }

    /// Notes the violations the source objects of `batch` already have, for the validator to excuse.
    private mutating func noteSourceViolations(_ batch: RecordBatch) throws {
        guard sourceValidator != nil else { return }
        var found: [Reject] = []
        _ = try sourceValidator?.check(batch, rejects: &found)
        guard !found.isEmpty else {
            carried.current = []
            return
        }
        // The batch's own identities, by the name a reject gives them: an id the source gave (`p12`) and a primary
        // key are written alike, so the name is not parsed back.
        let entity = batch.layout.entityName
        var objects: [String: ObjectReference] = [:]
        for row in 0..<batch.count {
            let reference = ObjectReference(entity: entity, id: batch.id(at: row))
            objects[reference.description] = reference
        }
        carried.current = Set(found.compactMap { violation in
            objects[violation.object].flatMap { carriedKey(violation, of: $0) }
        })
    }

    public mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
        output.removed[batch.layout.entityName, default: 0] += batch.count
        try noteSourceViolations(batch)
        var current = [batch]
        var hopRejects: [Reject] = []
        for index in hops.indices {
            let refusedBefore = hopRejects.count
            var next: [RecordBatch] = []
            for input in current {
                try hops[index].apply(
                    input,
                    into: &next,
                    ledger: &book.ledgers[index],
                    rejects: &hopRejects,
                    collectsRejects: collectsRejects
                )
            }
            // Both sides of every link among the objects the hop made (a split's, a policy's), before they are
            // checked: Core Data validates after the relationship phase.
            inverseLinks[index].complete(&next)
            try InverseLinks.fill(&next, owed: hops[index].owedOwners)
            oneSidedLinks?.noteHop(index, next)
            current = next
            if sourceValidator != nil {
                for reject in hopRejects[refusedBefore...] {
                    if let object = finalObject(ofRefused: reject, atHop: index) { carried.rejected.insert(object) }
                }
            }
        }
        // Rejected objects were created by the migration too, then refused.
        for reject in hopRejects {
            output.reject(reject)
            output.created[reject.entity, default: 0] += 1
        }
        // What is written, for the links stated on one side only.
        var written: [RecordBatch] = []
        for produced in current where produced.count > 0 {
            output.created[produced.layout.entityName, default: 0] += produced.count
            // Optional chaining mutates the validator in place: a copy would copy its identity sets every batch.
            var refused: [Reject] = []
            var excused: [Reject] = []
            defer { carried.note(excused) }
            guard let kept = try validator?.check(produced, rejects: &refused, excused: &excused) else {
                output.emit(produced)
                written.append(produced)
                continue
            }
            if !refused.isEmpty, let last = book.ledgers.indices.last {
                book.ledgers[last].rows[produced.layout.entityName, default: MigrationLedger.Row()].written -=
                    refused.count
                book.ledgers[last].rows[produced.layout.entityName, default: MigrationLedger.Row()].rejected +=
                    refused.count
            }
            for reject in refused { output.reject(reject) }
            if sourceValidator != nil { for reject in refused { carried.rejected.insert(reject.object) } }
            if kept.count > 0 {
                output.emit(kept)
                written.append(kept)
            }
        }
        try oneSidedLinks?.note(written)
    }

    public mutating func finish(into output: inout TransformOutput) throws {
        var excused: [Reject] = []
        output.findings += try validator?.finish(excused: &excused) ?? []
        carried.note(excused)
        output.diagnostics += carried.diagnostics()
        output.diagnostics += oneSidedLinks?.diagnostics() ?? []
        output.diagnostics += hops.flatMap { $0.functions.archiveReads?.diagnostics() ?? [] }
    }
}

/// The violations a migration carries over from the source, as Core Data's lightweight migration does.
private final class CarriedViolations {
    /// The keys (object, property, rule, after the hops) of the violations the current source batch already had.
    var current: Set<String> = []
    /// The objects (`Entity/id`, after the hops) the run rejected. Inferred hops drop no object on purpose (a
    /// reference to an object of an entity they drop becomes nil), so a reference to an object the run did not
    /// write dangles because the object was rejected, or else because it did not exist in the source either.
    var rejected: Set<String> = []
    /// Per `Entity.property rule`: how many were carried, and the first few objects.
    private var counts: [String: (count: Int, objects: [String])] = [:]
    /// How many objects a warning names.
    static let named = 3

    func excuses(_ violation: Reject) -> Bool {
        if violation.rule == ModelValidator.Rule.dangling.rawValue {
            return violation.value.map { !rejected.contains($0) } ?? false
        }
        return current.contains(violation.object + "\u{1F}" + (violation.property ?? "") + "\u{1F}" + violation.rule)
    }

    func note(_ violations: [Reject]) {
        for violation in violations {
            let key = "\(violation.entity)\(violation.property.map { ".\($0)" } ?? "") \(violation.rule)"
            var entry = counts[key] ?? (0, [])
            entry.count += 1
            if entry.objects.count < Self.named { entry.objects.append(violation.object) }
            counts[key] = entry
        }
    }

    /// One warning per entity, property and rule.
    func diagnostics() -> [Diagnostic] {
        counts.keys.sorted().compactMap { key in
            guard let entry = counts[key] else { return nil }
            let more = entry.count > entry.objects.count ? ", …" : ""
            return Diagnostic(
                .preexistingViolation,
                "\(key): \(entry.count) object\(entry.count == 1 ? "" : "s") already broke this rule in the source "
                    + "and \(entry.count == 1 ? "was" : "were") carried over, as Core Data's lightweight migration "
                    + "does (\(entry.objects.joined(separator: ", "))\(more)); give --strict to refuse them")
        }
    }
}

@available(*, unavailable)
extension MigrationTransform: Sendable {}

/// The ledgers of one migration run, shared by the copies of its transform.
private final class LedgerBook {
    var ledgers: [MigrationLedger]
    init(_ ledgers: [MigrationLedger]) { self.ledgers = ledgers }
}
