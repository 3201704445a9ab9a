import Foundation

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
