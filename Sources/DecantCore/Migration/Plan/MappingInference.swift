import Foundation

/// Core Data's lightweight-migration inference for one hop (coredata-formats.md §9.2), merged with what a mapping
/// file says: the mapping of every entity and property, and the changes inference refuses, each naming the entity
/// and property and what to write in a mapping file instead.
///
/// Pairing (entities, then each entity's properties, inherited ones included) follows ``Rules``.
/// ```swift
/// let result = MappingInference.infer(from: v1, to: v2)
/// guard result.problems.isEmpty else { print(result.problems); return }
/// print(result.mapping.entityMappings.map(\.name))    // ["NoteToNote"]
/// ```
public enum MappingInference: Sendable {
    /// The inference rules, each with its evidence.
    public enum Rules: Sendable {
        /// Core Data pairs a destination with the source whose renaming identifier (else name) is the same
        /// (`_NSMappingModelBuilder`, §9.2 step 1–3).
        public static let pairsByCanonicalName = true
        /// Decant also pairs a destination whose renaming identifier is a source's *name*: the renaming chain of
        /// a property renamed at every version (v2 `b` ← `a`, v3 `c` ← `b`) holds hop by hop, where Core Data's
        /// single step from v1 to v3 loses it (§9.3).
        public static let pairsRenamingIdentifierWithSourceName = true
        /// Decant also pairs equal names left unpaired (a renaming identifier removed after it shipped), where Core
        /// Data would drop the values.
        public static let pairsEqualNamesLeftOver = true
        /// Type changes Core Data's SQLite migrator treats as schema-equal (`_attributeTypeIsSchemaEqual:`, §9.2);
        /// every other type change needs a mapping.
        public static let widenings: Set<[AttributeType]> = [
            [.integer16, .integer32], [.integer16, .integer64], [.integer32, .integer64], [.float, .double],
            [.boolean, .integer16], [.boolean, .integer32], [.boolean, .integer64],
        ]

        /// Type changes Core Data infers with the value converted (§9.2): Integer 64 → Double, verified by a shipping
        /// app's migration test (WooCommerce's `OrderGiftCard.amount`, `1` → `1.0`). The value becomes the nearest
        /// double, as `NSNumber.doubleValue` gives it.
        public static let conversions: Set<[AttributeType]> = [[.integer64, .double]]

        /// Whether a value of `source` type goes into a `destination` attribute as it is: the same type, or a
        /// widening.
        public static func copies(_ source: AttributeType, into destination: AttributeType) -> Bool {
            source == destination || widenings.contains([source, destination])
        }
    }

    /// One hop's mapping and what stops it.
    public struct Result: Sendable, Hashable {
        /// The mapping (complete even when there are problems: refused properties get no value).
        public var mapping: MappingModel
        /// What inference (or the mapping file) cannot do; the hop runs only when this is empty.
        public var problems: [MigrationProblem]
    }

    /// Infers the hop from `source` to `destination`, with `explicit` (a mapping file) taking precedence for the
    /// entities and properties it names.
    ///
    /// With `emptiesRetargetedRelationships` (Core Data's single step, ``MigrationPlan/Path/singleStep(reason:)``), a
    /// relationship whose destination entity is one that no object of its old destination entity becomes starts
    /// empty, as in Core Data's inferred mapping (its value expression maps the source objects through their own
    /// entity's mapping, and none lands in the new destination): the links are dropped (a destructive change)
    /// rather than stopping the hop.
    public static func infer(
        from source: ObjectModel,
        to destination: ObjectModel,
        explicit: ExplicitMapping? = nil,
        emptiesRetargetedRelationships: Bool = false
    )
        -> Result
    {
        var builder = Builder(source: source, destination: destination, explicit: explicit)
        builder.emptiesRetargetedRelationships = emptiesRetargetedRelationships
        return builder.build()
    }

    // MARK: Pairing

    /// A name with its renaming identifier, for pairing.
    struct Named {
        var name: String
        var renamingIdentifier: String?
        var canonical: String { renamingIdentifier ?? name }
    }

    /// Renaming identifiers that inference would have to choose by and cannot (Core Data error 134190): the names
    /// sharing `identifier` on the side that repeats it.
    struct Ambiguity: Sendable, Equatable {
        var identifier: String
        /// The source names sharing it (two or more), or empty when only the destination repeats it.
        var sources: [String]
        /// The destination names sharing it (two or more), or empty when only the source repeats it.
        var destinations: [String]
    }

    /// Pairs destinations with sources by ``Rules``: destination name → source name. A renaming identifier shared
    /// inside one side is a problem only where inference must choose by it (``Ambiguity``, Core Data error 134190):
    /// a source with that identifier exists, and a destination with it is not in `stated` (the names a mapping file
    /// or mapping model states, which need no choice). Xcode compiles a version whose properties share an identifier
    /// (LoopKit's `Model`, section 1.9), and a hop that states them runs.
    static func pair(sources: [Named], destinations: [Named], stated: Set<String> = [])
        -> (pairs: [String: String], duplicates: [Ambiguity])
    {
        let sourcesByIdentifier = Dictionary(grouping: sources, by: \.canonical)
        let destinationsByIdentifier = Dictionary(grouping: destinations, by: \.canonical)
        var duplicates: [Ambiguity] = []
        for identifier in Set(sourcesByIdentifier.keys).union(destinationsByIdentifier.keys).sorted() {
            let sharing = sourcesByIdentifier[identifier] ?? []
            let claiming = destinationsByIdentifier[identifier] ?? []
            guard sharing.count > 1 || claiming.count > 1, !sharing.isEmpty,
                claiming.contains(where: { !stated.contains($0.name) })
            else { continue }
            duplicates.append(
                Ambiguity(
                    identifier: identifier, sources: sharing.count > 1 ? sharing.map(\.name).sorted() : [],
                    destinations: claiming.count > 1 ? claiming.map(\.name).sorted() : []))
        }
        var pairs: [String: String] = [:]
        var used: Set<String> = []
        func claim(_ rule: (Named, Named) -> Bool) {
            for destination in destinations where pairs[destination.name] == nil {
                if let match = sources.first(where: { !used.contains($0.name) && rule($0, destination) }) {
                    pairs[destination.name] = match.name
                    used.insert(match.name)
                }
            }
        }
        claim { $0.canonical == $1.canonical }
        if Rules.pairsRenamingIdentifierWithSourceName {
            claim { source, destination in destination.renamingIdentifier == source.name }
        }
        if Rules.pairsEqualNamesLeftOver { claim { $0.name == $1.name } }
        return (pairs, duplicates)
    }

    // MARK: Building

    struct Builder {
        let source: ObjectModel
        let destination: ObjectModel
        let explicit: ExplicitMapping?
        /// Core Data's single step: a relationship pointed at an entity its old targets do not become starts empty.
        var emptiesRetargetedRelationships = false
        var problems: [MigrationProblem] = []
        /// Destination entity → source entity, after the file's `from`s.
        var entityPairs: [String: String] = [:]

        init(source: ObjectModel, destination: ObjectModel, explicit: ExplicitMapping?) {
            self.source = source
            self.destination = destination
            self.explicit = explicit
        }

        private func fileLocation(line: Int?, key: String?) -> Location? {
            explicit.map { Location(path: $0.path, line: line, keyPath: key) }
        }

        /// The message of an ``Ambiguity`` among `kind` ("entities", "properties of Note").
        static func ambiguityMessage(_ ambiguity: Ambiguity, of kind: String) -> String {
            let side =
                ambiguity.sources.isEmpty
                ? "the destination's \(kind) \(ambiguity.destinations.joined(separator: " and "))"
                : "the source's \(kind) \(ambiguity.sources.joined(separator: " and "))"
            return "\(side) share the renaming identifier \(ambiguity.identifier), and inference cannot choose between "
                + "them (Core Data error 134190)"
        }

        mutating func build() -> Result {
            let stated = Set((explicit?.entities ?? []).filter { !$0.remove && $0.name == nil }.map(\.destination))
            let inferred = pair(
                sources: source.entities.map { Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
                destinations: destination.entities.map {
                    Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier)
                },
                stated: stated
            )
            for duplicate in inferred.duplicates {
                problems.append(
                    MigrationProblem(
                        entity: duplicate.identifier,
                        message: Self.ambiguityMessage(duplicate, of: "entities"),
                        advice: "name the entity's source in a mapping file (entities: <destination>: from: <source>), "
                            + "or give each entity its own renaming identifier in the model"
                    )
                )
            }
            entityPairs = inferred.pairs
            var explicitByEntity: [String: ExplicitEntityMapping] = [:]
            var removedSources: Set<String> = []
            var namedEntries: [ExplicitEntityMapping] = []
            for entry in explicit?.entities ?? [] {
                guard entry.name == nil else {
                    namedEntries.append(entry)
                    continue
                }
                let location = fileLocation(line: entry.line, key: "entities.\(entry.destination)")
                if entry.remove {
                    if destination.entity(named: entry.destination) != nil {
                        explicitByEntity[entry.destination] = entry
                        entityPairs[entry.destination] = nil
                    } else if source.entity(named: entry.destination) != nil {
                        removedSources.insert(entry.destination)
                        for (key, value) in entityPairs where value == entry.destination { entityPairs[key] = nil }
                    } else {
                        problems.append(
                            MigrationProblem(
                                entity: entry.destination,
                                message: "neither version has this entity",
                                location: location
                            )
                        )
                    }
                    continue
                }
                guard destination.entity(named: entry.destination) != nil else {
                    problems.append(
                        MigrationProblem(
                            entity: entry.destination,
                            message: "the destination version \(destination.versionName ?? "") has no such entity "
                                + "(it has \(destination.entities.map(\.name).joined(separator: ", ")))",
                            location: location
                        )
                    )
                    continue
                }
                explicitByEntity[entry.destination] = entry
                switch entry.source {
                case .inferred: break
                case .none: entityPairs[entry.destination] = nil
                case .entity(let name):
                    if source.entity(named: name) == nil {
                        problems.append(
                            MigrationProblem(
                                entity: entry.destination,
                                message: "from: the source version \(source.versionName ?? "") has no entity \(name)",
                                location: location
                            )
                        )
                        entityPairs[entry.destination] = nil
                    } else {
                        entityPairs[entry.destination] = name
                    }
                }
            }
            var mappings: [EntityMapping] = []
            for entity in destination.entities {
                mappings.append(entityMapping(for: entity, explicit: explicitByEntity[entity.name]))
            }
            var mappedSources = Set(entityPairs.values)
            for entry in namedEntries {
                guard let named = namedMapping(entry, among: mappings) else { continue }
                mappings.append(named)
                if let source = named.sourceEntity { mappedSources.insert(source) }
            }
            for entity in source.entities where !mappedSources.contains(entity.name) {
                var removal = EntityMapping(kind: .remove, source: entity.name, destination: nil)
                if removedSources.contains(entity.name), let path = explicit?.path { removal.origin = .file(path) }
                mappings.append(removal)
            }
            checkHierarchies()
            checkMappingNames(mappings)
            return Result(
                mapping: MappingModel(
                    sourceVersion: source.versionName ?? "",
                    destinationVersion: destination.versionName ?? "",
                    entityMappings: mappings
                ),
                problems: problems
            )
        }

        /// Every `mapped('Name', …)` of the file names an entity mapping of this hop: a misspelt name is the file's
        /// mistake, reported at its line when the plan is made (not as an object's error once data runs).
        private mutating func checkMappingNames(_ mappings: [EntityMapping]) {
            let names = Set(mappings.map(\.name))
            for entry in explicit?.entities ?? [] {
                let lines = entry.attributes.map { ("attributes", $0) } + entry.relationships.map { ("relationships", $0) }
                for (group, line) in lines {
                    for name in line.expression?.mappingNames ?? [] where !names.contains(name) {
                        problems.append(
                            MigrationProblem(
                                entity: entry.destination, property: line.name,
                                message: "mapped('\(name)', …): this hop has no entity mapping \(name) (it has "
                                    + names.sorted().joined(separator: ", ") + ")",
                                location: fileLocation(line: line.line, key: "entities.\(entry.key).\(group).\(line.name)"),
                                isMappingFileMistake: true))
                    }
                }
            }
        }

        /// Entities that did not share a root in the source cannot share one in the destination (§9.2).
        private mutating func checkHierarchies() {
            var sourceRoots: [String: Set<String>] = [:]
            for (destinationName, sourceName) in entityPairs {
                guard let destinationEntity = destination.entity(named: destinationName),
                    let sourceEntity = source.entity(named: sourceName)
                else { continue }
                sourceRoots[destination.root(of: destinationEntity).name, default: []]
                    .insert(source.root(of: sourceEntity).name)
            }
            for (root, roots) in sourceRoots.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
                problems.append(
                    MigrationProblem(
                        entity: root,
                        message: "entities of separate hierarchies in \(source.versionName ?? "the source") (roots "
                            + roots.sorted().joined(separator: ", ") + ") share the hierarchy \(root) in "
                            + "\(destination.versionName ?? "the destination"); Core Data cannot merge hierarchies",
                        advice: "keep them in separate hierarchies, or migrate through an intermediate version"
                    )
                )
            }
        }

        /// The entity mapping of a named entry (`MeasurementToEvent: {to: Event, from: Measurement}`), one more into its
        /// destination; nil, with a problem at its line, when its names do not fit the versions.
        private mutating func namedMapping(_ entry: ExplicitEntityMapping, among mappings: [EntityMapping])
            -> EntityMapping?
        {
            let location = fileLocation(line: entry.line, key: "entities.\(entry.key)")
            guard let entity = destination.entity(named: entry.destination) else {
                problems.append(
                    MigrationProblem(
                        entity: entry.destination,
                        message: "\(entry.key): to: the destination version \(destination.versionName ?? "") has no "
                            + "entity \(entry.destination)", location: location))
                return nil
            }
            guard case .entity(let sourceName) = entry.source, source.entity(named: sourceName) != nil else {
                problems.append(
                    MigrationProblem(
                        entity: entry.destination,
                        message: "\(entry.key): from: the source version \(source.versionName ?? "") has no such entity",
                        location: location))
                return nil
            }
            guard !mappings.contains(where: { $0.name == entry.key }) else {
                problems.append(
                    MigrationProblem(
                        entity: entry.destination,
                        message: "two entity mappings are named \(entry.key); give this entry another name",
                        location: location))
                return nil
            }
            var mapping = entityMapping(for: entity, explicit: entry, from: sourceName)
            mapping.name = entry.key
            return mapping
        }

        /// The mapping of `entity`: from `sourceName` when given (a named entry), else from the source inference
        /// pairs it with.
        private mutating func entityMapping(
            for entity: Entity, explicit entry: ExplicitEntityMapping?, from sourceName: String? = nil
        ) -> EntityMapping {
            let origin: EntityMapping.Origin = entry != nil ? .file(explicit?.path ?? "") : .inferred
            let (attributes, relationships) = destination.properties(of: entity)
            let persistentAttributes = attributes.filter { !$0.isTransient }.sorted { $0.name < $1.name }
            let persistentRelationships = relationships.filter { !$0.isTransient }.sorted { $0.name < $1.name }
            if entry?.remove == true {
                var mapping = EntityMapping(kind: .add, source: nil, destination: entity.name, origin: origin)
                mapping.attributes = persistentAttributes.map {
                    PropertyMapping(name: $0.name, expression: nil, change: .explicit)
                }
                mapping.relationships = persistentRelationships.map {
                    PropertyMapping(name: $0.name, expression: nil, change: .explicit)
                }
                return mapping
            }
            guard let sourceName = sourceName ?? entityPairs[entity.name], let sourceEntity = source.entity(named: sourceName)
            else {
                var mapping = EntityMapping(kind: .add, source: nil, destination: entity.name, origin: origin)
                mapping.attributes = persistentAttributes.map { attribute in
                    let value = attribute.defaultLiteral
                    return PropertyMapping(
                        name: attribute.name,
                        expression: value.map(ValueExpression.literal),
                        change: .added(default: attribute.defaultValue)
                    )
                }
                mapping.relationships = persistentRelationships.map {
                    PropertyMapping(name: $0.name, expression: nil, change: .added(default: nil))
                }
                applyExplicit(entry, to: &mapping, sourceEntity: nil)
                return mapping
            }
            let (sourceAttributes, sourceRelationships) = source.properties(of: sourceEntity)
            let sourceProperties =
                sourceAttributes.filter { !$0.isTransient }.map {
                    Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier)
                }
                + sourceRelationships.filter { !$0.isTransient }.map {
                    Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier)
                }
            let destinationProperties =
                persistentAttributes.map { Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier) }
                + persistentRelationships.map { Named(name: $0.name, renamingIdentifier: $0.renamingIdentifier) }
            let explicitNames = Set((entry?.attributes ?? []).map(\.name) + (entry?.relationships ?? []).map(\.name))
            let paired = pair(sources: sourceProperties, destinations: destinationProperties, stated: explicitNames)
            for duplicate in paired.duplicates {
                let property = destinationProperties.first { $0.canonical == duplicate.identifier }?.name
                    ?? duplicate.identifier
                let choice = duplicate.sources.first.map { "$source.\($0)" } ?? "<expression>"
                problems.append(
                    MigrationProblem(
                        entity: entity.name,
                        property: duplicate.identifier,
                        message: Self.ambiguityMessage(duplicate, of: "properties of \(sourceName)"),
                        advice: "in a mapping file, state the value under entities: \(entity.name): attributes (or "
                            + "relationships): \(property): \(choice)"
                    )
                )
            }
            let sameHash = source.versionHash(of: sourceName) == destination.versionHash(of: entity.name)
            var mapping = EntityMapping(
                kind: sameHash && sourceName == entity.name ? .copy : .transform,
                source: sourceName,
                destination: entity.name,
                origin: origin
            )
            for attribute in persistentAttributes {
                let sourceAttribute = paired.pairs[attribute.name].flatMap { name in
                    sourceAttributes.first { $0.name == name }
                }
                if paired.pairs[attribute.name] != nil, sourceAttribute == nil, !explicitNames.contains(attribute.name)
                {
                    problems.append(
                        MigrationProblem(
                            entity: entity.name,
                            property: attribute.name,
                            message: "was the relationship \(paired.pairs[attribute.name] ?? "") in \(sourceName); "
                                + "an attribute cannot be inferred from a relationship",
                            advice: "in a mapping file, write under entities: \(entity.name): attributes: "
                                + "\(attribute.name): <expression>"
                        )
                    )
                }
                mapping.attributes.append(
                    attributeMapping(
                        attribute,
                        from: sourceAttribute,
                        entity: entity.name,
                        reportProblems: !explicitNames.contains(attribute.name)
                    )
                )
            }
            for relationship in persistentRelationships {
                let sourceRelationship = paired.pairs[relationship.name].flatMap { name in
                    sourceRelationships.first { $0.name == name }
                }
                mapping.relationships.append(
                    relationshipMapping(
                        relationship,
                        in: entity,
                        from: sourceRelationship,
                        sourceEntity: sourceEntity,
                        reportProblems: !explicitNames.contains(relationship.name)
                    )
                )
            }
            applyExplicit(entry, to: &mapping, sourceEntity: sourceEntity)
            return mapping
        }

        /// Applies a mapping file's lines over the inferred ones.
        private mutating func applyExplicit(
            _ entry: ExplicitEntityMapping?,
            to mapping: inout EntityMapping,
            sourceEntity: Entity?
        ) {
            guard let entry, let destinationEntity = mapping.destinationEntity else { return }
            let path = explicit?.path ?? ""
            mapping.filter = entry.filter
            mapping.findOrCreate = entry.findOrCreate
            let sourceProperties = sourceEntity.map { source.properties(of: $0) }
            for (lines, isAttribute) in [(entry.attributes, true), (entry.relationships, false)] {
                for line in lines {
                    let location = Location(
                        path: path,
                        line: line.line,
                        keyPath:
                            "entities.\(entry.key).\(isAttribute ? "attributes" : "relationships").\(line.name)"
                    )
                    let list = isAttribute ? mapping.attributes : mapping.relationships
                    guard let index = list.firstIndex(where: { $0.name == line.name }) else {
                        let names = list.map(\.name).joined(separator: ", ")
                        problems.append(
                            MigrationProblem(
                                entity: destinationEntity,
                                property: line.name,
                                message: "\(destinationEntity) has no \(isAttribute ? "attribute" : "relationship") "
                                    + "\(line.name) (it has \(names.isEmpty ? "none" : names))",
                                location: location
                            )
                        )
                        continue
                    }
                    if let expression = line.expression, !isAttribute, !expression.givesObjects {
                        problems.append(
                            MigrationProblem(
                                entity: destinationEntity,
                                property: line.name,
                                message: "a relationship takes $source.<key path> (the related objects), $source "
                                    + "(the object this one became), mapped('Mapping', $source.<key path>), "
                                    + "mappedThrough('relationship', $source.<key path>) or null, not `\(expression)`",
                                location: location
                            )
                        )
                    } else if let expression = line.expression {
                        for path in expression.sourceKeyPaths {
                            if let problem = checkKeyPath(
                                path,
                                isAttribute: isAttribute,
                                sourceEntity: sourceEntity,
                                properties: sourceProperties
                            ) {
                                problems.append(
                                    MigrationProblem(
                                        entity: destinationEntity,
                                        property: line.name,
                                        message: problem,
                                        location: location,
                                        isMappingFileMistake: true
                                    )
                                )
                            }
                        }
                    }
                    let updated = PropertyMapping(name: line.name, expression: line.expression, change: .explicit)
                    if isAttribute {
                        mapping.attributes[index] = updated
                    } else {
                        mapping.relationships[index] = updated
                    }
                }
            }
            if mapping.kind == .copy
                && (!entry.attributes.isEmpty || !entry.relationships.isEmpty || entry.filter != nil)
            {
                mapping.kind = .transform
            }
            if let filter = entry.filter {
                for path in filter.sourceKeyPaths {
                    if let problem = checkKeyPath(
                        path,
                        isAttribute: true,
                        sourceEntity: sourceEntity,
                        properties: sourceProperties
                    ) {
                        problems.append(
                            MigrationProblem(
                                entity: destinationEntity,
                                message: "where: " + problem,
                                location: Location(
                                    path: explicit?.path,
                                    line: entry.line,
                                    keyPath: "entities.\(entry.key).where"
                                ),
                                isMappingFileMistake: true
                            )
                        )
                    }
                }
            }
        }

        /// What is wrong with a `$source` key path in a mapping file, if anything.
        private func checkKeyPath(
            _ path: [String],
            isAttribute: Bool,
            sourceEntity: Entity?,
            properties: (attributes: [Attribute], relationships: [Relationship])?
        ) -> String? {
            guard let sourceEntity, let properties else {
                return "$source is used, but this entity has no source entity (write from: <entity>)"
            }
            if path.isEmpty {
                return isAttribute ? "an attribute needs $source.<property>, not the source object itself" : nil
            }
            guard path.count == 1 else {
                return source.keyPathProblem(path, from: sourceEntity, wantsValue: isAttribute)
            }
            let name = path[0]
            let isSourceAttribute = properties.attributes.contains { $0.name == name && !$0.isTransient }
            let isSourceRelationship = properties.relationships.contains { $0.name == name && !$0.isTransient }
            if isAttribute && !isSourceAttribute {
                return "\(sourceEntity.name) in \(source.versionName ?? "the source") has no attribute \(name)"
                    + (isSourceRelationship ? " (it is a relationship)" : "")
            }
            if !isAttribute && !isSourceRelationship {
                return "\(sourceEntity.name) in \(source.versionName ?? "the source") has no relationship \(name)"
            }
            return nil
        }
    }
}
