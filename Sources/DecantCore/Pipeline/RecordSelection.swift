/// Which objects a run takes: some entities (`--entity`), those matching a predicate (`--where`), in an order
/// (`--sort`). A reader that can apply part of it at the source (SQL inside SQLite) does; the rest runs in the
/// stream (``SelectionTransform``).
///
/// ```swift
/// var selection = RecordSelection()
/// selection.entities = ["Note"]
/// selection.predicate = try ObjectPredicate(parsing: #"text CONTAINS "milk""#)
/// selection.sort = try SortKey.list(parsing: "date:desc")
/// ```
public struct RecordSelection: Sendable, Hashable {
    /// The entities taken; all when nil.
    public var entities: Set<String>?
    /// The predicate every taken object satisfies; applies to each taken entity.
    public var predicate: ObjectPredicate?
    /// The order within each entity (primary-key order when empty).
    public var sort: [SortKey] = []

    /// Everything, in source order.
    public init(entities: Set<String>? = nil, predicate: ObjectPredicate? = nil, sort: [SortKey] = []) {
        self.entities = entities
        self.predicate = predicate
        self.sort = sort
    }

    /// Whether the selection takes everything in source order.
    public var isEverything: Bool { entities == nil && predicate == nil && sort.isEmpty }

    /// Whether objects may be left out (so references may point at objects that are not written).
    public var leavesObjectsOut: Bool { entities != nil || predicate != nil }

    /// Whether `entity` is taken.
    public func takes(_ entity: String) -> Bool { entities?.contains(entity) ?? true }

    /// The selection with every sub-entity of a taken entity taken too, as a Core Data fetch request includes
    /// sub-entities.
    public func includingSubentities(in model: ObjectModel) -> RecordSelection {
        guard let names = entities else { return self }
        var copy = self
        var all = names
        var changed = true
        while changed {
            changed = false
            for entity in model.entities where !all.contains(entity.name) {
                if let parent = entity.parentName, all.contains(parent) {
                    all.insert(entity.name)
                    changed = true
                }
            }
        }
        copy.entities = all
        return copy
    }

    /// Checks every entity and key path against `model`: the entities exist, and every taken entity has each key
    /// path of the predicate and the sort (attributes, or to-one relationships followed by their destination's
    /// attributes).
    /// - Throws: `.usage` naming the entity and key path.
    public func validate(against model: ObjectModel) throws {
        for name in (entities ?? []).sorted() where model.entity(named: name) == nil {
            throw DecantError(
                .usage,
                "--entity: the model has no entity \(name) (it has \(model.entities.map(\.name).joined(separator: ", ")))")
        }
        let paths = (predicate?.keyPaths ?? []).map { ($0, "--where") } + sort.map { ($0.keyPath, "--sort") }
        for entity in model.entities where takes(entity.name) {
            for (path, option) in paths where !Self.resolves(path, from: entity.name, in: model) {
                throw DecantError(
                    .usage,
                    "\(option): \(entity.name) has no attribute or to-one key path \(path.joined(separator: "."))"
                        + (entities == nil ? "; choose the entities it applies to with --entity" : ""))
            }
        }
    }

    /// The comparisons of the predicate between an attribute and a constant of a kind the attribute never equals (a
    /// String attribute and a number, a number attribute and a text): they match no object, as in NSPredicate, and
    /// a run that silently selected nothing would look like an empty input. One warning each.
    public func kindMismatches(against model: ObjectModel) -> [Diagnostic] {
        var found: [Diagnostic] = []
        func category(of type: AttributeType) -> String? {
            switch type {
            case .string, .uri: "text"
            case .integer16, .integer32, .integer64, .double, .float, .decimal: "number"
            default: nil
            }
        }
        func category(of value: Value) -> String? {
            switch value {
            case .string, .uri: "text"
            case .integer, .double, .decimal: "number"
            default: nil
            }
        }
        func attribute(_ path: [String], from entity: String) -> Attribute? {
            guard let first = path.first, let current = model.entity(named: entity) else { return nil }
            let (attributes, relationships) = model.properties(of: current)
            if path.count == 1 { return attributes.first { $0.name == first } }
            guard let next = relationships.first(where: { $0.name == first && !$0.isToMany })?.destinationEntity
            else { return nil }
            return attribute(Array(path.dropFirst()), from: next)
        }
        func visit(_ predicate: ObjectPredicate) {
            switch predicate {
            case .constant: break
            case .and(let parts), .or(let parts): parts.forEach(visit)
            case .not(let inner), .quantified(_, let inner): visit(inner)
            case .comparison(let left, let op, let right, _):
                let pair: ([String], Value)? =
                    switch (left, right) {
                    case (.keyPath(let path), .value(let value)), (.value(let value), .keyPath(let path)): (path, value)
                    default: nil
                    }
                guard let (path, value) = pair else { return }
                for entity in model.entities where takes(entity.name) {
                    guard let attribute = attribute(path, from: entity.name), let kind = category(of: attribute.type),
                        let given = category(of: value), kind != given
                    else { continue }
                    found.append(
                        Diagnostic(
                            .selectionMatchesNothing,
                            "--where: \(path.joined(separator: ".")) \(op.rawValue) "
                                + (value.text.map { given == "text" ? "'\($0)'" : $0 } ?? "nil") + " compares "
                                + (attribute.type.modelName.hasPrefix("I") ? "an " : "a ")
                                + "\(attribute.type.modelName) attribute with a \(given): it matches no object",
                            at: Location(entity: entity.name, keyPath: path.joined(separator: "."))))
                    return
                }
            }
        }
        if let predicate { visit(predicate) }
        return found
    }

    /// Whether `path` names an attribute of `entity`, directly or through to-one relationships, or a to-one
    /// relationship itself (compared with nil).
    static func resolves(_ path: [String], from entity: String, in model: ObjectModel) -> Bool {
        guard let first = path.first, let current = model.entity(named: entity) else { return false }
        let (attributes, relationships) = model.properties(of: current)
        if path.count == 1 {
            return attributes.contains { $0.name == first && !$0.isTransient }
                || relationships.contains { $0.name == first && !$0.isToMany }
        }
        guard let relationship = relationships.first(where: { $0.name == first && !$0.isToMany }),
            let destination = relationship.destinationEntity
        else { return false }
        return resolves(Array(path.dropFirst()), from: destination, in: model)
    }
}

/// A reader that applies part of a ``RecordSelection`` at the source.
public protocol SelectingRecordReader: RecordReader {
    /// Applies what the reader can of `selection` (exactly as the stream would) and returns the rest, which the
    /// caller evaluates in the stream. Called once, before the first batch.
    mutating func apply(_ selection: RecordSelection) throws -> RecordSelection
    /// Objects the reader left out at the source because of the selection, per entity (all of an entity that is
    /// not taken, and those its predicate rejects), known once reading is over.
    var filteredOut: [String: Int] { get }
}
