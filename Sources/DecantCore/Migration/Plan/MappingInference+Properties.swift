import Foundation

/// How the builder maps one attribute or relationship: kept, renamed, converted, derived, or refused with why.
extension MappingInference.Builder {
    mutating func attributeMapping(
        _ attribute: Attribute,
        from sourceAttribute: Attribute?,
        entity: String,
        reportProblems: Bool
    ) -> PropertyMapping {
        guard let sourceAttribute else {
            return PropertyMapping(
                name: attribute.name,
                expression: attribute.defaultLiteral.map(ValueExpression.literal),
                change: .added(default: attribute.defaultValue)
            )
        }
        var expression = ValueExpression.sourceProperty(sourceAttribute.name)
        var change: PropertyMapping.Change =
            sourceAttribute.name == attribute.name ? .copied : .renamed(from: sourceAttribute.name)
        if sourceAttribute.type != attribute.type {
            if MappingInference.Rules.widenings.contains([sourceAttribute.type, attribute.type]) {
                change = .widened(from: sourceAttribute.type, to: attribute.type)
            } else if MappingInference.Rules.conversions.contains([sourceAttribute.type, attribute.type]) {
                expression = .call("double", [expression])
                change = .converted(from: sourceAttribute.type, to: attribute.type)
            } else {
                if reportProblems {
                    problems.append(
                        MigrationProblem(
                            entity: entity,
                            property: attribute.name,
                            message:
                                "\(sourceAttribute.type.modelName) → \(attribute.type.modelName) is not a change "
                                + "Core Data infers",
                            advice: "in a mapping file, write under entities: \(entity): attributes: "
                                + "\(attribute.name): "
                                + "'\(Self.conversion(of: sourceAttribute, to: attribute.type))'"
                        )
                    )
                }
                return PropertyMapping(name: attribute.name, expression: nil, change: change)
            }
        }
        if sourceAttribute.type == .composite, attribute.type == .composite,
            let changed = changedCompositeElement(from: sourceAttribute, to: attribute)
        {
            // Elements added (nil) or removed (dropped) carry over as attributes do; an element whose type
            // changes beyond a widening is no more inferred than such an attribute is.
            if reportProblems {
                problems.append(
                    MigrationProblem(
                        entity: entity, property: attribute.name,
                        message: "composite element \(attribute.name).\(changed.name): \(changed.from.modelName) → "
                            + "\(changed.to.modelName) is not a change Core Data infers",
                        advice: "in a mapping file, give \(entity): attributes: \(attribute.name) an expression, or keep "
                            + "the element's type"))
            }
            return PropertyMapping(name: attribute.name, expression: nil, change: change)
        }
        if sourceAttribute.isOptional && !attribute.isOptional {
            if let literal = attribute.defaultLiteral {
                expression = .binary(.coalesce, expression, .literal(literal))
                change = .madeRequired(default: attribute.defaultValue ?? "")
            }
        }
        return PropertyMapping(name: attribute.name, expression: expression, change: change)
    }

    /// The first element (by name) that both composites have, whose type changes other than by a widening.
    private func changedCompositeElement(from sourceAttribute: Attribute, to attribute: Attribute)
        -> (name: String, from: AttributeType, to: AttributeType)?
    {
        let before = source.composites.first { $0.name == sourceAttribute.compositeName }?.attributes ?? []
        let after = destination.composites.first { $0.name == attribute.compositeName }?.attributes ?? []
        for element in after.sorted(by: { $0.name < $1.name }) {
            guard let old = before.first(where: { $0.name == element.name }), old.type != element.type,
                !MappingInference.Rules.widenings.contains([old.type, element.type])
            else { continue }
            return (element.name, old.type, element.type)
        }
        return nil
    }

    /// The expression to suggest for a type change: a Transformable value's archive read (`unarchived`), a
    /// plain value archived for a Transformable attribute (`archived`), else a conversion of the value.
    static func conversion(of source: Attribute, to type: AttributeType) -> String {
        let name = source.name
        if source.type == .transformable { return "unarchived($source.\(name))" }
        if type == .transformable { return "archived($source.\(name))" }
        return switch type {
        case .string: "string($source.\(name))"
        case .integer16, .integer32, .integer64: "integer($source.\(name))"
        case .double, .float, .decimal: "double($source.\(name))"
        case .date: "parse($source.\(name))"
        case .boolean: "$source.\(name) != 0"
        default: "$source.\(name)"
        }
    }

    mutating func relationshipMapping(
        _ relationship: Relationship,
        in entity: Entity,
        from sourceRelationship: Relationship?,
        sourceEntity: Entity,
        reportProblems: Bool
    ) -> PropertyMapping {
        guard let sourceRelationship else {
            return PropertyMapping(name: relationship.name, expression: nil, change: .added(default: nil))
        }
        let expression = ValueExpression.sourceProperty(sourceRelationship.name)
        var change: PropertyMapping.Change =
            sourceRelationship.name == relationship.name ? .copied : .renamed(from: sourceRelationship.name)
        if sourceRelationship.isToMany != relationship.isToMany {
            change = .cardinality(toMany: relationship.isToMany)
        } else if relationship.isToMany, sourceRelationship.isOrdered != relationship.isOrdered {
            change = .ordering(ordered: relationship.isOrdered)
        }
        // The related objects must land in the destination relationship's entity (or below it).
        if let sourceTarget = sourceRelationship.destinationEntity, let target = relationship.destinationEntity {
            let mappedTargets = entityPairs.filter { $0.value == sourceTarget }.map(\.key)
            let fits = mappedTargets.contains { name in
                guard let mapped = destination.entity(named: name) else { return false }
                return mapped.name == target || destination.ancestors(of: mapped).contains { $0.name == target }
            }
            if !fits && emptiesRetargetedRelationships {
                return PropertyMapping(
                    name: relationship.name, expression: nil,
                    change: .emptied(
                        reason: "pointed at \(sourceTarget), now at \(target), which no \(sourceTarget) object "
                            + "becomes"))
            }
            if !fits && reportProblems {
                problems.append(
                    MigrationProblem(
                        entity: entity.name,
                        property: relationship.name,
                        message: "pointed at \(sourceTarget) in \(source.versionName ?? "the source"), now at "
                            + "\(target), which no \(sourceTarget) object becomes",
                        advice: "in a mapping file, map \(sourceTarget) objects to \(target) (entities: \(target): "
                            + "from: \(sourceTarget)), or write relationships: \(relationship.name): null"
                    )
                )
                return PropertyMapping(name: relationship.name, expression: nil, change: change)
            }
        }
        if reportProblems,
            let reason = underivable(relationship, in: entity, from: sourceRelationship, sourceEntity)
        {
            problems.append(
                MigrationProblem(
                    entity: entity.name,
                    property: relationship.name,
                    message: reason,
                    advice: "keep the inverse relationship in this version, or write relationships: "
                        + "\(relationship.name): null in a mapping file to drop the links"
                )
            )
            return PropertyMapping(name: relationship.name, expression: nil, change: change)
        }
        return PropertyMapping(name: relationship.name, expression: expression, change: change)
    }

    /// Whether a source relationship's records carry its members themselves (a to-one, or a to-many whose
    /// inverse is not a to-one); a to-many whose inverse is a to-one is carried by the other side's objects.
    private func carriesMembers(_ relationship: Relationship, in model: ObjectModel) -> Bool {
        guard relationship.isToMany else { return true }
        guard let inverse = model.inverse(of: relationship) else { return true }
        return inverse.isToMany
    }

    /// Why a streaming copy cannot rebuild this relationship's links, if it cannot: the destination keeps them on
    /// this side while the source kept them only on the other side's objects.
    private func underivable(
        _ relationship: Relationship,
        in entity: Entity,
        from sourceRelationship: Relationship,
        _ sourceEntity: Entity
    ) -> String? {
        if carriesMembers(sourceRelationship, in: source) { return nil }
        let inverseInDestination = destination.inverse(of: relationship)
        let needsThisSide: Bool
        if !relationship.isToMany {
            needsThisSide = true
        } else if let inverseInDestination {
            // Many-to-many: either side will do, so the other side must carry them in the source.
            needsThisSide = inverseInDestination.isToMany && !sourceInverseCarries(sourceRelationship)
        } else {
            needsThisSide = true
        }
        guard needsThisSide else { return nil }
        return "the destination keeps these links on \(entity.name) objects, but the source kept them only on the "
            + "other side (\(sourceRelationship.inverseName ?? "its inverse")); Decant's streaming migration "
            + "cannot move them across"
    }

    private func sourceInverseCarries(_ relationship: Relationship) -> Bool {
        guard let inverse = source.inverse(of: relationship) else { return false }
        return carriesMembers(inverse, in: source)
    }
}
