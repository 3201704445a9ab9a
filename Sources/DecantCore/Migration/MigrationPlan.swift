/// A migration computed before any data moves: the source version (found by its hashes), the destination, and the
/// hops between them in the bundle's version order, each inferred or taken from a mapping file. The same plan
/// drives `decant plan` (which prints it) and `decant migrate` (which runs it).
///
/// Like GRDB's `DatabaseMigrator`, a plan is a value: building one reads no data and changes nothing.
///
/// ```swift
/// let plan = try MigrationPlan(bundle: notes, source: storeModel)          // to the current version
/// guard plan.isExecutable else { plan.problems.forEach { print($0) }; return }
/// for hop in plan.hops { print(hop.source.versionName ?? "", "→", hop.destination.versionName ?? "") }
/// ```
///
/// ## Topics
/// - ``Hop``
/// - ``DestructiveChange``
public struct MigrationPlan: Sendable, Hashable {
    /// One step between two versions.
    public struct Hop: Sendable, Hashable {
        /// The version objects come from.
        public var source: ObjectModel
        /// The version they go to.
        public var destination: ObjectModel
        /// How: every entity's and property's mapping.
        public var mapping: MappingModel
        /// The mapping file that contributed, if one did.
        public var file: String?
        /// What stops this hop.
        public var problems: [MigrationProblem]

        /// Whether the hop is wholly inferred.
        public var isInferred: Bool { file == nil }
        /// `Notes → Notes 2`.
        public var name: String { "\(source.versionName ?? "?") → \(destination.versionName ?? "?")" }

        /// Whether `mapping` moves objects: from an entity of the source version into a concrete entity of the
        /// destination (a removal moves none). Both ways of running a hop, the record stream and the run inside
        /// SQLite, take the objects of these mappings only.
        package func moves(_ mapping: EntityMapping) -> Bool {
            guard let from = mapping.sourceEntity, let to = mapping.destinationEntity, mapping.kind != .remove else {
                return false
            }
            return source.entity(named: from) != nil && destination.entity(named: to)?.isAbstract == false
        }

        /// Whether the objects written into `destinationEntity` keep their identities (their keys): its table is fed
        /// from one source table, by distinct source entities. Else they get new ones.
        package func keepsIdentities(of destinationEntity: String) -> Bool {
            guard let entity = destination.entity(named: destinationEntity) else { return true }
            let table = destination.root(of: entity).name
            var fed: [(sourceRoot: String, source: String)] = []
            for mapping in mapping.entityMappings where moves(mapping) {
                guard let from = mapping.sourceEntity.flatMap({ source.entity(named: $0) }),
                    let to = mapping.destinationEntity.flatMap({ destination.entity(named: $0) }),
                    destination.root(of: to).name == table
                else { continue }
                fed.append((source.root(of: from).name, from.name))
            }
            return Set(fed.map(\.sourceRoot)).count <= 1 && Set(fed.map(\.source)).count == fed.count
        }
    }

    /// Data a hop drops on purpose.
    public enum DestructiveChange: Sendable, Hashable, CustomStringConvertible {
        /// Every object of a source entity is dropped.
        case entityRemoved(hop: String, entity: String)
        /// A source attribute's values are dropped.
        case attributeRemoved(hop: String, entity: String, attribute: String)
        /// A source relationship's links are dropped.
        case relationshipRemoved(hop: String, entity: String, relationship: String)
        /// A to-many became a to-one: members after the first are dropped.
        case toManyNarrowed(hop: String, entity: String, relationship: String)
        /// A `where` filter drops the source objects it does not match.
        case filtered(hop: String, entity: String)

        public var description: String {
            switch self {
            case .entityRemoved(let hop, let entity): "\(hop): every \(entity) object is dropped"
            case .attributeRemoved(let hop, let entity, let attribute):
                "\(hop): \(entity).\(attribute) values are dropped"
            case .relationshipRemoved(let hop, let entity, let relationship):
                "\(hop): \(entity).\(relationship) links are dropped"
            case .toManyNarrowed(let hop, let entity, let relationship):
                "\(hop): \(entity).\(relationship) becomes to-one: members after the first are dropped"
            case .filtered(let hop, let entity): "\(hop): \(entity) objects not matching `where` are dropped"
            }
        }
    }

    /// The version the store was written with.
    public var source: ObjectModel
    /// The version the store is migrated to.
    public var destination: ObjectModel
    /// The hops, in order; empty when the store is already at the destination version.
    public var hops: [Hop]
    /// What planning noticed and let pass: mappings no hop of this store uses (a batch hands every store every
    /// mapping), mapping models of another bundle.
    public var notes: [String] = []

    /// The source version's name.
    public var sourceVersion: String { source.versionName ?? "?" }
    /// The destination version's name.
    public var destinationVersion: String { destination.versionName ?? "?" }
    /// Whether the store is already at the destination version.
    public var isUpToDate: Bool { hops.isEmpty }
    /// Every hop's problems, in hop order.
    public var problems: [MigrationProblem] { hops.flatMap(\.problems) }
    /// Whether the plan can run.
    public var isExecutable: Bool { problems.isEmpty }

    /// Plans the migration of a store written with `source` (a version of `bundle`, found by its entity hashes) to
    /// the version named `destinationName` (the bundle's current version when nil), through `mappings` where they
    /// apply and inference elsewhere.
    ///
    /// A mapping file from version A to version C (not the next one) replaces the hops between them. A mapping that
    /// no hop of this migration uses (the store is past it, or it is for other versions) is not an error: ``notes``
    /// names it.
    /// - Throws: `.modelMismatch` when no version of the bundle has the source's hashes; `.usage` for an unknown
    ///   destination, a destination older than the source, a mapping file that goes backwards or past the
    ///   destination, or two mappings that claim the same hop (naming both).
    public init(
        bundle: ModelBundle,
        source: ObjectModel,
        to destinationName: String? = nil,
        mappings: [ExplicitMapping] = [],
        mappingModels: [MappingModel] = []
    )
        throws
    {
        let hashes = source.entityVersionHashes
        guard let start = bundle.versions.firstIndex(where: { $0.entityVersionHashes == hashes }) else {
            throw DecantError(
                .modelMismatch,
                "no version of \(bundle.name) has the store's entity hashes, so the source version is unknown"
            )
        }
        let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
        let end: Int
        if let destinationName {
            guard let index = bundle.versions.firstIndex(where: { $0.versionName == destinationName }) else {
                throw DecantError(.usage, "\(bundle.name) has no version \(destinationName) (it has \(names))")
            }
            end = index
        } else {
            guard let current = bundle.currentVersion,
                let index = bundle.versions.firstIndex(where: { $0.versionName == current.versionName })
            else { throw DecantError(.usage, "\(bundle.name) has no versions") }
            end = index
        }
        // Two versions with equal hashes: the store is at the destination already if the destination has its hashes.
        if bundle.versions[end].entityVersionHashes == hashes {
            self.source = bundle.versions[end]
            self.destination = bundle.versions[end]
            self.hops = []
            self.notes = (mappings.map(\.path) + mappingModels.map { Self.path(of: $0) ?? "a mapping model" }).map {
                "\($0) is not used: the store is at \(bundle.versions[end].versionName ?? "?") already"
            }
            return
        }
        guard end > start else {
            throw DecantError(
                .usage,
                "the store is at \(bundle.versions[start].versionName ?? "?"), which comes after "
                    + "\(bundle.versions[end].versionName ?? "?"); Decant does not migrate to older versions"
            )
        }
        func index(of name: String) -> Int? {
            bundle.versions.firstIndex { $0.versionName == name || $0.versionChecksum == name }
        }
        // Two mappings that start at the same version claim the same hop: which one runs would be a guess.
        var claims: [Int: (path: String, hop: String)] = [:]
        let claimants =
            mappings.map { ($0.source, $0.path, "\($0.source) → \($0.destination)") }
            + mappingModels.map { model in
                (
                    model.sourceVersion, Self.path(of: model) ?? "mapping model",
                    "\(model.sourceVersion) → \(model.destinationVersion)"
                )
            }
        for (sourceName, path, hop) in claimants {
            guard let start = index(of: sourceName) else { continue }
            if let earlier = claims[start] {
                throw DecantError(
                    .usage,
                    "two mappings claim the same hop from \(sourceName): \(earlier.path) (\(earlier.hop)) and "
                        + "\(path) (\(hop)); keep one"
                )
            }
            claims[start] = (path, hop)
        }
        var used: Set<Int> = []
        var usedModels: Set<Int> = []
        var notes: [String] = []
        var hops: [Hop] = []
        var position = start
        while position < end {
            if let modelIndex = mappingModels.firstIndex(where: { index(of: $0.sourceVersion) == position }),
                let target = index(of: mappingModels[modelIndex].destinationVersion), target > position, target <= end
            {
                let model = mappingModels[modelIndex]
                usedModels.insert(modelIndex)
                // A complete mapping (an Xcode mapping model): entities it does not name get no objects.
                let from = bundle.versions[position]
                let to = bundle.versions[target]
                hops.append(
                    Hop(
                        source: from,
                        destination: to,
                        mapping: model,
                        file: Self.path(of: model) ?? "mapping model",
                        problems: Self.problems(of: model, from: from, to: to)
                    )
                )
                position = target
                continue
            }
            let fileIndex = mappings.firstIndex { index(of: $0.source) == position }
            var next = position + 1
            var explicit: ExplicitMapping?
            if let fileIndex {
                let file = mappings[fileIndex]
                guard let target = index(of: file.destination), target > position, target <= end else {
                    throw DecantError(
                        .usage,
                        "\(file.path) maps \(file.source) → \(file.destination), which is not a step forward within "
                            + "this migration (\(bundle.versions[start].versionName ?? "?") → "
                            + "\(bundle.versions[end].versionName ?? "?"))"
                    )
                }
                used.insert(fileIndex)
                next = target
                explicit = file
            }
            let from = bundle.versions[position]
            let to = bundle.versions[next]
            let inferred = MappingInference.infer(from: from, to: to, explicit: explicit)
            hops.append(
                Hop(
                    source: from,
                    destination: to,
                    mapping: inferred.mapping,
                    file: explicit?.path,
                    problems: inferred.problems
                )
            )
            position = next
        }
        let hopNames = hops.map(\.name).joined(separator: ", ")
        for (offset, file) in mappings.enumerated() where !used.contains(offset) {
            notes.append(
                "\(file.path) maps \(file.source) → \(file.destination), which no hop of this migration uses "
                    + "(hops: \(hopNames)); not used"
            )
        }
        for (offset, model) in mappingModels.enumerated() where !usedModels.contains(offset) {
            notes.append(
                "\(Self.path(of: model) ?? "a mapping model") maps \(model.sourceVersion) → "
                    + "\(model.destinationVersion), which no hop of this migration uses (hops: \(hopNames)); not used"
            )
        }
        for index in hops.indices {
            hops[index].problems += Self.expressionProblems(of: hops[index].mapping, from: hops[index].source)
        }
        self.source = bundle.versions[start]
        self.destination = bundle.versions[end]
        self.hops = hops
        self.notes = notes
    }

    /// The file a complete mapping (an Xcode mapping model) was read from.
    static func path(of model: MappingModel) -> String? {
        model.entityMappings.lazy.compactMap { mapping -> String? in
            if case .file(let path) = mapping.origin { return path }
            return nil
        }.first
    }

    /// What stops a complete mapping from running between `source` and `destination`: entities and properties it
    /// names that the versions do not have.
    static func problems(of model: MappingModel, from source: ObjectModel, to destination: ObjectModel)
        -> [MigrationProblem]
    {
        var problems: [MigrationProblem] = []
        for mapping in model.entityMappings {
            if let name = mapping.sourceEntity, source.entity(named: name) == nil {
                problems.append(
                    MigrationProblem(
                        entity: name, message: "\(mapping.name) reads \(name), which \(source.versionName ?? "?") does not have"))
            }
            guard let name = mapping.destinationEntity else { continue }
            guard let entity = destination.entity(named: name) else {
                problems.append(
                    MigrationProblem(
                        entity: name,
                        message: "\(mapping.name) makes \(name), which \(destination.versionName ?? "?") does not have"))
                continue
            }
            let (attributes, relationships) = destination.properties(of: entity)
            let names = Set(attributes.map(\.name) + relationships.map(\.name))
            for property in mapping.attributes + mapping.relationships where !names.contains(property.name) {
                problems.append(
                    MigrationProblem(
                        entity: name, property: property.name,
                        message: "\(mapping.name) sets \(name).\(property.name), which is not a property of \(name)"))
            }
        }
        return problems
    }

    /// What stops the expressions of `model` from running against `source`: fetches of entities it does not have or
    /// with predicates Decant cannot read, and `unsupported(…)` parts of an Xcode mapping model.
    static func expressionProblems(of model: MappingModel, from source: ObjectModel) -> [MigrationProblem] {
        var problems: [MigrationProblem] = []
        for mapping in model.entityMappings {
            let name = mapping.destinationEntity ?? mapping.sourceEntity ?? mapping.name
            let expressions =
                (mapping.attributes + mapping.relationships).compactMap(\.expression) + [mapping.filter].compactMap { $0 }
            for request in expressions.flatMap(\.fetchRequests) {
                if source.entity(named: request.entity) == nil {
                    problems.append(
                        MigrationProblem(
                            entity: name,
                            message: "\(mapping.name) fetches \(request.entity), which \(source.versionName ?? "?") does not have"))
                } else if let error = Result(catching: { try ObjectPredicate(parsing: request.predicate, source: "FETCH") })
                    .failure
                {
                    problems.append(
                        MigrationProblem(entity: name, message: "\(mapping.name) fetches with a predicate Decant cannot read: \(error.message)"))
                }
            }
            for text in expressions.flatMap(\.unsupportedParts) {
                problems.append(
                    MigrationProblem(
                        entity: name,
                        message: "\(mapping.name) has an expression Decant cannot evaluate: \(text)",
                        advice: "write this mapping as a Decant mapping file, or register app code for it"))
            }
        }
        return problems
    }

    /// Adds a problem to each hop for the app code its mappings call that `functions` does not have: an entity
    /// mapping's policy class, and `call(class, selector, …)` methods. `plan` then exits 1 naming them.
    public mutating func requireHooks(_ functions: ValueExpressionFunctions) {
        for index in hops.indices {
            var missing: [MigrationProblem] = []
            for mapping in hops[index].mapping.entityMappings {
                let entity = mapping.destinationEntity ?? mapping.sourceEntity ?? mapping.name
                if let policy = mapping.policy, functions.policy(named: policy) == nil {
                    missing.append(
                        MigrationProblem(
                            entity: entity,
                            message: "\(mapping.name) needs the migration policy \(policy), which is app code",
                            advice: "register an EntityMigrationPolicy as \(policy) (ValueExpressionFunctions."
                                + "registerPolicy) in a Swift program that runs the migration"))
                }
                let expressions =
                    (mapping.attributes + mapping.relationships).compactMap(\.expression) + [mapping.filter].compactMap { $0 }
                for (className, selector) in expressions.flatMap(\.methodCalls)
                where !functions.knowsMethod(className, selector: selector) && functions.policy(named: className) == nil {
                    missing.append(
                        MigrationProblem(
                            entity: entity,
                            message: "\(mapping.name) calls \(className) \(selector), which is app code",
                            advice: "register it with ValueExpressionFunctions.registerMethod(\"\(className)\", "
                                + "selector: \"\(selector)\")"))
                }
            }
            hops[index].problems += missing
        }
    }

    /// Data the plan drops on purpose, hop by hop.
    public var destructiveChanges: [DestructiveChange] {
        var changes: [DestructiveChange] = []
        for hop in hops {
            let name = hop.name
            var used: [String: Set<String>] = [:]
            for mapping in hop.mapping.entityMappings {
                guard let sourceName = mapping.sourceEntity else { continue }
                if mapping.kind != .remove && used[sourceName] == nil { used[sourceName] = [] }
                if mapping.kind == .remove {
                    changes.append(.entityRemoved(hop: name, entity: sourceName))
                    continue
                }
                for property in mapping.attributes + mapping.relationships {
                    for path in property.expression?.sourceKeyPaths ?? [] where !path.isEmpty {
                        used[sourceName, default: []].insert(path[0])
                    }
                    if case .cardinality(toMany: false) = property.change {
                        changes.append(
                            .toManyNarrowed(
                                hop: name,
                                entity: mapping.destinationEntity ?? "",
                                relationship: property.name
                            )
                        )
                    }
                }
                for path in mapping.filter?.sourceKeyPaths ?? [] where !path.isEmpty {
                    used[sourceName, default: []].insert(path[0])
                }
                if mapping.filter != nil { changes.append(.filtered(hop: name, entity: sourceName)) }
            }
            // An entity no mapping moves objects from loses them all: one an Xcode mapping model (a complete
            // mapping) does not map, as Core Data's migration manager creates no destination instances for it.
            let moved = Set(hop.mapping.entityMappings.filter { hop.moves($0) }.compactMap(\.sourceEntity))
            for entity in hop.source.entities.sorted(by: { $0.name < $1.name })
            where !entity.isAbstract && !moved.contains(entity.name)
                && !changes.contains(.entityRemoved(hop: name, entity: entity.name))
            {
                changes.append(.entityRemoved(hop: name, entity: entity.name))
            }
            for sourceName in used.keys.sorted() {
                guard let entity = hop.source.entity(named: sourceName), !entity.isAbstract else { continue }
                let (attributes, relationships) = hop.source.properties(of: entity)
                for attribute in attributes
                where !attribute.isTransient && used[sourceName]?.contains(attribute.name) != true {
                    changes.append(.attributeRemoved(hop: name, entity: sourceName, attribute: attribute.name))
                }
                for relationship in relationships
                where !relationship.isTransient && used[sourceName]?.contains(relationship.name) != true
                    && !inverseKept(relationship, used: used)
                {
                    changes.append(.relationshipRemoved(hop: name, entity: sourceName, relationship: relationship.name))
                }
            }
        }
        return changes
    }

    /// Whether a dropped relationship's links survive through its inverse, which the hop keeps.
    private func inverseKept(_ relationship: Relationship, used: [String: Set<String>]) -> Bool {
        guard let inverse = relationship.inverseName,
            let owner = relationship.inverseEntity ?? relationship.destinationEntity
        else { return false }
        return used[owner]?.contains(inverse) == true
    }
}

extension Result where Failure == any Error {
    /// The error, as a ``DecantError`` when it is one.
    fileprivate var failure: DecantError? {
        guard case .failure(let error) = self else { return nil }
        return error as? DecantError ?? DecantError(.malformedInput, "\(error)")
    }
}
