import DecantCore
import Foundation
import SwiftSyntax

extension SwiftModelBuilder {
    /// One version of the model: the `@Model` classes reachable from `roots` through relationships (12.2).
    func objectModel(roots: [TypeDecl], versionName: String, identifiers: [String]) throws -> ObjectModel {
        var members: [String: TypeDecl] = [:]
        var queue = roots
        var built: [String: (entity: Entity, relationships: [PendingRelationship])] = [:]
        var composites: [String: CompositeType] = [:]
        var compositeOrder: [String] = []
        while !queue.isEmpty {
            let decl = queue.removeFirst()
            guard built[decl.qualifiedName] == nil else { continue }
            if let other = members[decl.simpleName], other.qualifiedName != decl.qualifiedName {
                throw refusal(
                    "two @Model classes of one schema are both named \(decl.simpleName) (\(other.qualifiedName) at "
                        + "\(other.spot.location) and \(decl.qualifiedName)); SwiftData names entities by the simple "
                        + "class name", decl.spot)
            }
            members[decl.simpleName] = decl
            let entity = try entity(of: decl, composites: &composites, compositeOrder: &compositeOrder)
            built[decl.qualifiedName] = entity
            queue += entity.relationships.map(\.destination)
        }
        // Declaration order, as the files give them.
        let ordered = index.typeOrder.compactMap { built[$0].map { ($0.entity, $0.relationships) } }
        let entities = try pairInverses(ordered)
        var model = ObjectModel(versionName: versionName, entities: entities, versionIdentifiers: identifiers)
        model.composites = compositeOrder.compactMap { composites[$0] }
        return model
    }

    /// A relationship before its inverse is known.
    struct PendingRelationship {
        var relationship: Relationship
        var destination: TypeDecl
        /// `inverse: \Dest.prop` as declared.
        var declaredInverse: String?
        var spot: SourceSpot
    }

    /// The entity of one `@Model` class; its relationships are returned apart, without inverses.
    private func entity(
        of decl: TypeDecl, composites: inout [String: CompositeType], compositeOrder: inout [String]
    ) throws -> (entity: Entity, relationships: [PendingRelationship]) {
        guard decl.kind == .classType else {
            throw refusal("@Model applies to classes; \(decl.qualifiedName) is not one", decl.spot)
        }
        if let superclass = decl.inherited.first,
            case .type(let parent) = index.resolve(superclass, from: decl.scope), parent.isModel
        {
            throw refusal(
                "@Model class \(decl.qualifiedName) inherits from @Model class \(parent.qualifiedName); no SwiftData "
                    + "store with model inheritance has been sampled (coredata-formats.md 12.2), so Decant does "
                    + "not guess",
                decl.spot)
        }
        for element in decl.attributes {
            guard let attribute = element.as(AttributeSyntax.self) else {
                throw refusal(
                    "#if among the attributes of \(decl.qualifiedName): Decant cannot tell which branch "
                        + "the app is built with", decl.spot)
            }
            switch attribute.name {
            case "Model", "available", "MainActor", "objc", "preconcurrency": break
            default:
                throw refusal(
                    "the attribute @\(attribute.name) on @Model class \(decl.qualifiedName) is not SwiftData's; "
                        + "Decant cannot expand other macros", decl.spot)
            }
        }
        var entity = Entity(name: decl.simpleName)
        entity.renamingIdentifier = decl.simpleName
        let (properties, macros) = try storedProperties(of: decl, isModel: true)
        var pending: [PendingRelationship] = []
        var uniques: [[String]] = []
        for property in properties {
            let what = "\(decl.simpleName).\(property.name)"
            let options = try PropertyOptions(property.attributes, builder: self, spot: property.spot)
            if let transformer = options.transformer {
                // `.transformable(by:)`: the transformer stores the value, whatever its type (often another
                // module's, such as UIColor); only its optionality counts.
                guard let type = property.type else {
                    throw refusal("\(what) is transformable but has no type annotation", property.spot)
                }
                let optional = type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
                var attribute = Attribute(name: property.name, type: .transformable, isOptional: optional)
                attribute.valueTransformerName = transformer
                attribute.renamingIdentifier = options.originalName ?? property.name
                attribute.versionHashModifier = options.hashModifier
                if options.unique { uniques.append([property.name]) }
                entity.attributes.append(attribute)
                continue
            }
            let shape: TypeShape
            if let type = property.type {
                shape = try self.shape(of: type, scope: decl.scope + [decl.simpleName], spot: property.spot, what: what)
            } else if let value = property.initialValue {
                shape = try inferredType(value, scope: decl.scope + [decl.simpleName], spot: property.spot, what: what)
            } else {
                throw refusal("\(what) has neither a type annotation nor an initial value", property.spot)
            }
            if case .declared(let destination) = shape.element, destination.isModel {
                pending.append(
                    try relationship(
                        property, shape: shape, destination: destination, options: options,
                        scope: decl.scope + [decl.simpleName]))
                continue
            }
            guard options.relationship == nil else {
                throw refusal("@Relationship on \(what), whose type is not a @Model class", property.spot)
            }
            var attribute = try attribute(
                property, shape: shape, entity: decl.simpleName, composites: &composites,
                compositeOrder: &compositeOrder)
            attribute.renamingIdentifier = options.originalName ?? property.name
            attribute.versionHashModifier = options.hashModifier
            attribute.allowsExternalBinaryDataStorage = options.externalStorage
            attribute.preservesValueInHistoryOnDeletion = options.preserveValueOnDeletion
            attribute.allowsCloudEncryption = options.allowsCloudEncryption
            attribute.isIndexedBySpotlight = options.spotlight
            if options.ephemeral { attribute.isTransient = true }
            if options.unique { uniques.append([property.name]) }
            entity.attributes.append(attribute)
        }
        for group in uniques + macros.unique where !entity.uniquenessConstraints.contains(group) {
            entity.uniquenessConstraints.append(group)
        }
        for group in macros.indexes {
            let index = FetchIndex(
                name: "SwiftDataIndexOnBinary" + group.joined(),
                elements: group.map { FetchIndex.Element(property: $0) })
            entity.fetchIndexes.append(index)
            for name in group {
                if let position = entity.attributes.firstIndex(where: { $0.name == name }) {
                    entity.attributes[position].isIndexed = true
                }
            }
        }
        let known = Set(properties.map(\.name))
        for name in (entity.uniquenessConstraints + macros.indexes).joined() where !known.contains(name) {
            throw refusal(
                "#Unique or #Index of \(decl.simpleName) names '\(name)', which is not a stored property",
                decl.spot)
        }
        return (entity, pending)
    }

    private func relationship(
        _ property: StoredProperty, shape: TypeShape, destination: TypeDecl, options: PropertyOptions, scope: [String]
    ) throws -> PendingRelationship {
        let what = "\(property.name)"
        if shape.isArrayElementOptional {
            throw refusal("\(what) is an array of optional models, which SwiftData does not store", property.spot)
        }
        var relationship = Relationship(name: property.name, destination: destination.simpleName, toMany: shape.isArray)
        relationship.isOptional = shape.isOptional
        relationship.renamingIdentifier = options.originalName ?? property.name
        relationship.versionHashModifier = options.hashModifier
        let declared = options.relationship
        relationship.deleteRule = declared?.deleteRule ?? .nullify
        if let minimum = declared?.minimum { relationship.minCount = minimum }
        if let maximum = declared?.maximum {
            guard shape.isArray else {
                throw refusal("maximumModelCount on the to-one relationship \(what)", property.spot)
            }
            relationship.maxCount = maximum
        }
        if options.unique || options.externalStorage || options.transformer != nil {
            throw refusal("@Attribute options on the relationship \(what)", property.spot)
        }
        var inverseName: String?
        if let inverse = declared?.inverse {
            let named = try self.shape(
                of: TypeSyntax(IdentifierTypeSyntax(name: .identifier(inverse.type))), scope: scope,
                spot: property.spot, what: "the inverse of \(what)")
            guard case .declared(let inverseType) = named.element,
                inverseType.qualifiedName == destination.qualifiedName
            else {
                throw refusal(
                    "the inverse \\\(inverse.type).\(inverse.property) of \(what) is not a property of its destination "
                        + destination.simpleName, property.spot)
            }
            inverseName = inverse.property
        }
        return PendingRelationship(
            relationship: relationship, destination: destination, declaredInverse: inverseName, spot: property.spot)
    }

    private struct Pair: Hashable {
        var entity: Int
        var relationship: Int
    }

    /// Pairs inverses: declared ones on either side, then SwiftData's inference (12.6): a relationship with no
    /// declaration pairs with the destination's only relationship back to its entity; none, no inverse; two or more,
    /// refused.
    private func pairInverses(_ built: [(Entity, [PendingRelationship])]) throws -> [Entity] {
        var entities = built.map(\.0)
        var pending = built.map(\.1)
        func find(_ entity: String, _ name: String) -> (Int, Int)? {
            guard let e = entities.firstIndex(where: { $0.name == entity }),
                let r = pending[e].firstIndex(where: { $0.relationship.name == name })
            else { return nil }
            return (e, r)
        }
        func pair(_ a: (Int, Int), _ b: (Int, Int), spot: SourceSpot) throws {
            for (this, other) in [(a, b), (b, a)] {
                let otherName = pending[other.0][other.1].relationship.name
                if let existing = pending[this.0][this.1].relationship.inverseName, existing != otherName {
                    let here = pending[this.0][this.1]
                    throw refusal(
                        "\(entities[this.0].name).\(here.relationship.name) is declared the inverse of both "
                            + "\(existing) and \(otherName)", spot)
                }
                pending[this.0][this.1].relationship.inverseName = otherName
                pending[this.0][this.1].relationship.inverseEntity = entities[other.0].name
            }
        }
        // Declared inverses.
        var declaredTargets: Set<Pair> = []
        for e in pending.indices {
            for r in pending[e].indices {
                guard let inverse = pending[e][r].declaredInverse else { continue }
                let item = pending[e][r]
                guard let target = find(item.destination.simpleName, inverse) else {
                    throw refusal(
                        "the inverse \(item.destination.simpleName).\(inverse) of \(entities[e].name)."
                            + "\(item.relationship.name) is not a relationship of \(item.destination.simpleName)",
                        item.spot)
                }
                guard pending[target.0][target.1].destination.simpleName == entities[e].name else {
                    throw refusal(
                        "the inverse \(item.destination.simpleName).\(inverse) of \(entities[e].name)."
                            + "\(item.relationship.name) points to "
                            + "\(pending[target.0][target.1].destination.simpleName), "
                            + "not back to \(entities[e].name)", item.spot)
                }
                try pair((e, r), target, spot: item.spot)
                declaredTargets.insert(Pair(entity: target.0, relationship: target.1))
            }
        }
        // Inferred inverses.
        for e in pending.indices {
            for r in pending[e].indices where pending[e][r].relationship.inverseName == nil {
                let item = pending[e][r]
                guard let d = entities.firstIndex(where: { $0.name == item.destination.simpleName }) else { continue }
                // Relationships paired by a declaration are taken; the others back to this entity are candidates.
                let candidates = pending[d].indices.filter { candidate in
                    pending[d][candidate].destination.simpleName == entities[e].name && !(d == e && candidate == r)
                        && pending[d][candidate].declaredInverse == nil
                        && !declaredTargets.contains(Pair(entity: d, relationship: candidate))
                }
                guard !candidates.isEmpty else { continue }
                let names = candidates.map { "\(entities[d].name).\(pending[d][$0].relationship.name)" }
                guard candidates.count == 1,
                    pending[d][candidates[0]].relationship.inverseName.map({ $0 == item.relationship.name }) ?? true
                else {
                    throw refusal(
                        "SwiftData would have to choose the inverse of \(entities[e].name).\(item.relationship.name) "
                            + "among \(names.joined(separator: ", ")) (or with one already paired to another); how it "
                            + "chooses is not known (coredata-formats.md 12.6): declare it with "
                            + "@Relationship(inverse: \\"
                            + "\(entities[d].name).<property>)", item.spot)
                }
                try pair((e, r), (d, candidates[0]), spot: item.spot)
            }
        }
        for e in entities.indices { entities[e].relationships = pending[e].map(\.relationship) }
        return entities
    }
}
