/// The part of a ``RecordSelection`` a reader did not apply at the source, applied in the stream: entities not
/// taken and objects the predicate rejects are counted as filtered out; with a sort, each entity's objects are
/// held and emitted in order; with the identities of the objects that will be written (``KeptObjects``),
/// references to objects left out are written as nil and reported, never left dangling.
///
/// ```swift
/// var kept = KeptObjects()                                   // first pass: which objects are taken
/// _ = try RecordTransfer.copy(from: &firstReader, through: SelectionTransform(selection), to: &kept)
/// let transform = SelectionTransform(selection, keeping: kept)   // second pass: the real copy
/// ```
public struct SelectionTransform: RecordTransform, Sendable {
    /// What is applied here.
    public let selection: RecordSelection
    /// The objects that will be written, when references are to be checked.
    public let kept: KeptObjects?
    /// References to objects left out, per `Entity.relationship`.
    public private(set) var leftOutReferences: [String: Int] = [:]
    private var held: [Record] = []
    private var heldLayout: RecordLayout?
    /// The predicate, ready for every object (an `IN` list looked up, not scanned).
    private let matcher: ObjectPredicateMatcher?

    /// A transform applying `selection`, and checking references against `kept` when given.
    public init(_ selection: RecordSelection, keeping kept: KeptObjects? = nil) {
        self.selection = selection
        self.kept = kept
        self.matcher = selection.predicate.map(ObjectPredicateMatcher.init)
    }

    public mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
        let entity = batch.layout.entityName
        guard selection.takes(entity) else {
            output.filtered[entity, default: 0] += batch.count
            return
        }
        if selection.predicate == nil && selection.sort.isEmpty && kept == nil {
            output.emit(batch)
            return
        }
        if let layout = heldLayout, layout.entityName != entity { flush(into: &output) }
        var taken = RecordBatch(layout: batch.layout, entityNames: batch.entityNames)
        for row in 0..<batch.count {
            var record = batch.record(at: row)
            if let matcher {
                guard try matcher.evaluate({ try Self.value(at: $0, of: record, layout: batch.layout) }) else {
                    output.filtered[entity, default: 0] += 1
                    continue
                }
            }
            if let kept { dropLeftOutReferences(of: &record, layout: batch.layout, kept: kept) }
            if selection.sort.isEmpty {
                taken.append(record)
            } else {
                heldLayout = batch.layout
                held.append(record)
            }
        }
        if taken.count > 0 { output.emit(taken) }
    }

    public mutating func finish(into output: inout TransformOutput) throws {
        flush(into: &output)
        for (name, count) in leftOutReferences.sorted(by: { $0.key < $1.key }) {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            output.diagnostics.append(
                Diagnostic(
                    .leftOutReference,
                    "\(count) reference\(count == 1 ? "" : "s") of \(name) point at objects the selection leaves out; "
                        + "written as nil", at: Location(entity: parts.first, keyPath: parts.last)))
        }
    }

    /// Emits the held objects of one entity in the sort's order (stable: source order among equals).
    private mutating func flush(into output: inout TransformOutput) {
        guard let layout = heldLayout, !held.isEmpty else { return }
        let keys = selection.sort
        let sorted = held.enumerated().sorted { a, b in
            for key in keys {
                let x = (try? Self.value(at: key.keyPath, of: a.element, layout: layout)) ?? .null
                let y = (try? Self.value(at: key.keyPath, of: b.element, layout: layout)) ?? .null
                if let order = Self.sortOrder(x, y), order != 0 { return key.ascending ? order < 0 : order > 0 }
            }
            return a.offset < b.offset
        }
        var batch = RecordBatch(layout: layout)
        for (_, record) in sorted { batch.append(record) }
        output.emit(batch)
        held.removeAll()
        heldLayout = nil
    }

    /// NSSortDescriptor's order: nil first, then values by ``ObjectPredicate`` comparison.
    static func sortOrder(_ a: Value, _ b: Value) -> Int? {
        switch (a.isNull, b.isNull) {
        case (true, true): 0
        case (true, false): -1
        case (false, true): 1
        default: ObjectPredicate.order(a, b, [])
        }
    }

    private mutating func dropLeftOutReferences(of record: inout Record, layout: RecordLayout, kept: KeptObjects) {
        for (index, relationship) in layout.relationships.enumerated() where index < record.relationships.count {
            switch record.relationships[index] {
            case .toOne(let reference?) where !kept.contains(reference):
                record.relationships[index] = .toOne(nil)
                leftOutReferences["\(layout.entityName).\(relationship.name)", default: 0] += 1
            case .toMany(let members):
                let remaining = members.filter { kept.contains($0) }
                if remaining.count != members.count {
                    record.relationships[index] = .toMany(remaining)
                    leftOutReferences["\(layout.entityName).\(relationship.name)", default: 0] += members.count - remaining.count
                }
            default:
                break
            }
        }
    }

    /// The value at a key path of one component: an attribute, or a to-one relationship (nil, or its target's
    /// identity). Longer key paths go through other objects, which only a reader at the source can follow.
    public static func value(at path: [String], of record: Record, layout: RecordLayout) throws -> Value {
        guard path.count == 1, let name = path.first else {
            throw DecantError(
                .usage,
                "key path \(path.joined(separator: ".")) goes through a relationship; only a SQLite input evaluates "
                    + "such key paths (inside SQLite)", at: Location(entity: layout.entityName))
        }
        if let index = layout.attributeIndex(name), index < record.values.count { return record.values[index] }
        if let index = layout.relationshipIndex(name), index < record.relationships.count,
            case .toOne(let reference) = record.relationships[index]
        {
            return reference.map { .string($0.description) } ?? .null
        }
        return .null
    }
}

/// The identities of the objects a run writes, per entity: built by a first pass through a selection (it is
/// itself a ``RecordWriter`` that only remembers identities), then consulted to keep references from dangling.
public struct KeptObjects: RecordWriter, Sendable {
    private var identities: [String: Set<RecordID>] = [:]

    /// No objects yet.
    public init() {}

    /// Whether the object `reference` names is kept.
    public func contains(_ reference: ObjectReference) -> Bool {
        identities[reference.entity]?.contains(reference.id) ?? false
    }

    /// How many objects are kept.
    public var count: Int { identities.values.reduce(0) { $0 + $1.count } }

    public mutating func write(_ batch: RecordBatch) throws {
        // In place: a copy of the set taken out and put back was a copy of every id so far, per batch.
        for row in 0..<batch.count { identities[batch.layout.entityName, default: []].insert(batch.id(at: row)) }
    }

    public mutating func finish() throws {}
    public mutating func abandon() {}
}
