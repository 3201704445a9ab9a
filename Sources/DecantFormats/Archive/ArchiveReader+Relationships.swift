import DecantCore
import DecantCodecs
import Foundation

extension ArchiveReader {
    // MARK: Relationships

    /// Reads every mapped object's relationships, then fills in the inverse sides the archive left out.
    func resolveRelationships() throws {
        var rowOfObject: [Int: (plan: Int, row: Int)] = [:]
        // Per plan, row, relationship: the explicit value (nil when the archive has no value for it).
        var explicit: [[[RelationshipValue?]]] = []
        for (planIndex, plan) in plans.enumerated() {
            guard !plan.layout.relationships.isEmpty else {
                explicit.append([])
                continue
            }
            var rows: [[RelationshipValue?]] = []
            rows.reserveCapacity(plan.objects.count)
            for (row, index) in plan.objects.enumerated() {
                rowOfObject[index] = (planIndex, row)
                    let object = try archive.object(at: index)
                var values = [RelationshipValue?](repeating: nil, count: plan.layout.relationships.count)
                for (key, field) in object.fields {
                    guard case .relationship(let position)? = target(of: key, in: object, layout: plan.layout)
                    else {
                        continue
                    }
                    let relationship = plan.layout.relationships[position]
                    values[position] = try archive.inField(key, of: object) {
                        try relationshipValue(
                            of: field, for: relationship, object: object, key: key, plan: plan)
                    }
                }
                rows.append(values)
            }
            explicit.append(rows)
        }
        // Inverse sides the archive did not give.
        var derived: [[[Int: [ObjectReference]]]] = plans.map {
            [[Int: [ObjectReference]]](repeating: [:], count: $0.objects.count)
        }
        for (planIndex, plan) in plans.enumerated() where !plan.layout.relationships.isEmpty {
            for (row, values) in explicit[planIndex].enumerated() {
                let owner = ObjectReference(
                    entity: plan.layout.entityName, id: .external(String(plan.objects[row])))
                for (position, value) in values.enumerated() {
                    guard let value, let inverseName = plan.layout.relationships[position].inverseName else {
                        continue
                    }
                    let members: [ObjectReference]
                    switch value {
                    case .toOne(let reference): members = reference.map { [$0] } ?? []
                    case .toMany(let list): members = list
                    case .viaInverse: members = []
                    }
                    for member in members {
                        guard case .external(let name) = member.id, let index = Int(name),
                            let (memberPlan, memberRow) = rowOfObject[index],
                            let inverse = plans[memberPlan].layout.relationshipIndex(inverseName),
                            explicit[memberPlan][memberRow][inverse] == nil
                        else { continue }
                        derived[memberPlan][memberRow][inverse, default: []].append(owner)
                    }
                }
            }
        }
        for planIndex in plans.indices where !plans[planIndex].layout.relationships.isEmpty {
            let layout = plans[planIndex].layout
            plans[planIndex].relationships = try explicit[planIndex].enumerated().map { row, values in
                try values.enumerated().map { position, value in
                    if let value { return value }
                    let owners = derived[planIndex][row][position] ?? []
                    let relationship = layout.relationships[position]
                    if relationship.isToMany { return .toMany(owners) }
                    guard Set(owners).count <= 1 else {
                        throw DecantError(
                            .malformedInput,
                            "the object is in the \(relationship.inverseName ?? "") of both "
                                + owners.prefix(2).map { "$objects[\($0.id)]" }.joined(separator: " and ")
                                + ", but \(relationship.name) is to-one",
                            at: Location(
                                path: path, entity: layout.entityName,
                                object: "$objects[\(plans[planIndex].objects[row])]", keyPath: relationship.name))
                    }
                    return .toOne(owners.first)
                }
            }
        }
    }

    /// A relationship's value from a coder key's value: a reference, or a collection of references for to-many.
    private func relationshipValue(
        of field: PropertyListValue, for relationship: Relationship, object: ArchivedObject,
        key: String,
        plan: EntityRecords
    ) throws -> RelationshipValue {
        let entity = plan.layout.entityName
        func failure(_ message: String) -> DecantError {
            DecantError(
                .malformedInput, message,
                at: Location(path: path, entity: entity, object: "$objects[\(object.index)]", keyPath: key))
        }
        func reference(to value: PropertyListValue) throws -> ObjectReference? {
            let resolved = try ArchiveField.resolve(value, in: archive)
            switch resolved {
            case .null:
                return nil
            case .object(let target):
                let code = entityOfObject.indices.contains(target.index) ? Int(entityOfObject[target.index]) : -1
                guard mappedEntities.indices.contains(code) else {
                    throw failure(
                        "relationship \(relationship.name) refers to $objects[\(target.index)], of class "
                            + "\(target.className ?? "?"), which maps to no entity (map it with --class)")
                }
                let targetEntity = mappedEntities[code]
                guard isEntity(targetEntity, a: relationship.destinationEntity) else {
                    throw failure(
                        "relationship \(relationship.name) refers to $objects[\(target.index)], a \(targetEntity), "
                            + "not a \(relationship.destinationEntity ?? "?")")
                }
                return ObjectReference(entity: targetEntity, id: .external(String(target.index)))
            default:
                throw failure(
                    "relationship \(relationship.name) needs a reference to an object, found \(resolved.kindName)"
                )
            }
        }
        if relationship.isToMany {
            let resolved = try ArchiveField.resolve(field, in: archive)
            switch resolved {
            case .null:
                return .toMany([])
            case .collection(_, _, let elements):
                var seen = Set<ObjectReference>()
                var list: [ObjectReference] = []
                for element in elements {
                    guard let member = try reference(to: element) else {
                        throw failure("to-many relationship \(relationship.name) holds nil (NSNull)")
                    }
                    if seen.insert(member).inserted { list.append(member) }
                }
                return .toMany(list)
            default:
                throw failure(
                    "to-many relationship \(relationship.name) needs an array or set, found \(resolved.kindName)"
                )
            }
        }
        return .toOne(try reference(to: field))
    }

    /// Whether `entity` is `destination` or one of its sub-entities.
    private func isEntity(_ entity: String, a destination: String?) -> Bool {
        guard let destination else { return true }
        if entity == destination { return true }
        guard let found = model.entity(named: entity) else { return false }
        return model.ancestors(of: found).contains { $0.name == destination }
    }
}
