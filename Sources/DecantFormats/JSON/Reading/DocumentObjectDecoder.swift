import DecantCore
import DecantCodecs

/// Reads the objects of Decant's own document: `{"@id": "Entity/id", attribute: value, relationship: ids}`, with
/// exactly the model's property names; an unknown key, a wrong type or an id of the wrong entity is an error.
struct DocumentObjectDecoder {
    let path: String
    private var plans: ModelPlan
    private let values = AttributeDecoder(mode: .document)

    init(model: ObjectModel, path: String) {
        self.plans = ModelPlan(model: model)
        self.path = path
    }

    /// The record an object of the document describes, and its entity's layout.
    mutating func decode(_ node: JSONNode) throws -> (DecodedRecord, RecordLayout) {
        guard let members = node.value.members else {
            throw DecantError(
                .malformedInput, "expected an object, found \(node.value.kindDescription)",
                at: Location(path: path, line: node.line, column: node.column))
        }
        guard let idMember = members.first(where: { $0.key == "@id" }) else {
            throw DecantError(
                .malformedInput, "the object has no \"@id\" (like \"Note/p12\")",
                at: Location(path: path, line: node.line, column: node.column))
        }
        guard let idText = idMember.node.value.stringValue, let reference = ObjectReference(jsonText: idText) else {
            throw DecantError(
                .malformedInput,
                "expected an object id like \"Note/p12\" for \"@id\", found \(describe(idMember.node))",
                at: Location(path: path, line: idMember.node.line, column: idMember.node.column, keyPath: "@id"))
        }
        let here = Location(path: path, line: node.line, column: node.column, entity: reference.entity, object: idText)
        guard let plan = plans.plan(for: reference.entity) else {
            throw DecantError(
                .malformedInput,
                "the model \(plans.model.versionName ?? "(unnamed)") has no entity \(reference.entity)", at: here)
        }
        guard !plan.entity.isAbstract else {
            throw DecantError(
                .malformedInput, "\(reference.entity) is abstract: it has no objects of its own", at: here)
        }
        let layout = plan.layout
        var cells = plan.unmentioned
        var relationships = layout.relationships.indices.map { index -> RelationshipValue in
            if plan.carriedByInverse[index] { return .viaInverse }
            return layout.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
        }
        // Which properties the object named: a key named twice is an error (an unknown key is one at once).
        var seen = [Bool](repeating: false, count: layout.attributes.count + layout.relationships.count)
        for member in members where member.key != "@id" {
            // Where the value starts, and where its key does.
            func place() -> Location {
                var place = here
                place.line = member.node.line
                place.column = member.node.column
                place.keyPath = member.key
                return place
            }
            func keyPlace() -> Location {
                var place = place()
                place.line = member.line
                place.column = member.column
                return place
            }
            let slot = plan.slots[member.key]
            let position: Int? =
                switch slot {
                case .attribute(let index)?: index
                case .relationship(let index)?: layout.attributes.count + index
                case nil: nil
                }
            if let position {
                guard !seen[position] else {
                    throw DecantError(.malformedInput, "the key \(member.key) appears twice", at: keyPlace())
                }
                seen[position] = true
            }
            switch slot {
            case .attribute(let index)?:
                do {
                    cells[index] = try values.cell(for: member.node.value, attribute: layout.attributes[index], in: layout)
                } catch {
                    let attribute = layout.attributes[index]
                    throw DecantError(
                        .malformedInput,
                        "the \(attribute.type.modelName) attribute \(attribute.name) expects \(error.expected)",
                        at: place())
                }
            case .relationship(let index)?:
                relationships[index] = try relationship(member.node, index: index, plan: plan, at: place())
            case nil:
                throw DecantError(
                    .malformedInput,
                    "unknown key \(member.key): \(reference.entity) has no attribute or relationship "
                        + "of that name", at: keyPlace())
            }
        }
        return (
            DecodedRecord(entity: reference.entity, id: reference.id, cells: cells, relationships: relationships),
            layout
        )
    }

    private func relationship(
        _ node: JSONNode, index: Int, plan: EntityPlan, at place: Location
    ) throws -> RelationshipValue {
        let relationship = plan.layout.relationships[index]
        let destination = plan.destinationNames[index] ?? "?"
        func reference(_ element: JSONNode) throws -> ObjectReference {
            var place = place
            place.line = element.line
            place.column = element.column
            guard let text = element.value.stringValue, let reference = ObjectReference(jsonText: text) else {
                throw DecantError(
                    .malformedInput,
                    "the relationship \(relationship.name) expects object ids like \"\(destination)/p1\", found "
                        + describe(element), at: place)
            }
            guard plan.destinations[index].contains(reference.entity) else {
                throw DecantError(
                    .malformedInput,
                    "the relationship \(relationship.name) leads to \(destination) objects, not to \(text)", at: place)
            }
            return reference
        }
        if relationship.isToMany {
            guard case .array(let elements) = node.value else {
                throw DecantError(
                    .malformedInput,
                    "the to-many relationship \(relationship.name) expects an array of object ids, found "
                        + node.value.kindDescription, at: place)
            }
            return .toMany(try elements.map(reference))
        }
        if case .null = node.value { return .toOne(nil) }
        return .toOne(try reference(node))
    }

    private func describe(_ node: JSONNode) -> String {
        if let text = node.value.stringValue { return "\"\(text)\"" }
        return node.value.kindDescription
    }
}
