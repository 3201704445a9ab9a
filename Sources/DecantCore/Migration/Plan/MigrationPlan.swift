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
        /// The stage of the model's own migration plan (a SwiftData `MigrationStage`) this hop runs, when the bundle
        /// declares stages (``ModelBundle/stages``).
        public var stage: VersionStage? = nil

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
        /// Core Data's single step leaves a relationship empty: it now points at an entity its old targets do not
        /// become.
        case relationshipEmptied(hop: String, entity: String, relationship: String, reason: String)

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
            case .relationshipEmptied(let hop, let entity, let relationship, let reason):
                "\(hop): \(entity).\(relationship) links are dropped: it \(reason), so it starts empty, as in Core "
                    + "Data's inferred mapping"
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

    /// How the plan goes from the store's version to the destination.
    public enum Path: Sendable, Hashable, CustomStringConvertible {
        /// Through every version between them, in the bundle's order (renames chain hop by hop).
        case hopByHop
        /// One step straight from the store's version to the destination, the mapping Core Data's automatic
        /// migration infers, for `reason`.
        case singleStep(reason: String)

        public var description: String {
            switch self {
            case .hopByHop: "hop by hop"
            case .singleStep(let reason): "single step (as Core Data's automatic migration): \(reason)"
            }
        }
    }

    /// Hop by hop, or Core Data's single step and why.
    public var path: Path = .hopByHop
    /// When several versions have the store's entity hashes: which one was taken and why.
    public var sourceChoice: String?
    /// The bundle's version order, and its versions in that order (oldest first when known).
    public var order: VersionOrder = .given
    /// The bundle's version names, in ``order``.
    public var versionNames: [String] = []

    /// Plans the migration of a store written with `source` (a version of `bundle`, found by its entity hashes) to
    /// the version named `destinationName` (the bundle's current version when nil), through `mappings` where they
    /// apply and inference elsewhere.
    ///
    /// The path (``Path``): hop by hop through the versions between them when the bundle's order is known and every
    /// hop can run; otherwise the single step Core Data's automatic migration infers, straight from the store's
    /// version to the destination, when that one can run (a hop-by-hop plan that uses a mapping file or model is
    /// kept as it is). A mapping file from version A to version C (not the next one) replaces the hops between
    /// them. A mapping that no hop of this migration uses (the store is past it, or it is for other versions) is not
    /// an error, whichever the path: ``notes`` names it.
    /// - Throws: `.modelMismatch` when no version of the bundle has the source's hashes; `.usage` for an unknown
    ///   destination, a store newer than the current version (by a known order) when no destination is named, a
    ///   mapping file that goes backwards or past the destination, or two mappings that claim the same hop (naming
    ///   both).
    public init(
        bundle: ModelBundle,
        source: ObjectModel,
        to destinationName: String? = nil,
        mappings: [ExplicitMapping] = [],
        mappingModels: [MappingModel] = []
    )
        throws
    {
        try Self.checkStages(of: bundle)
        let hashes = source.entityVersionHashes
        let match = ModelMatch(storeHashes: hashes, storeIdentifiers: source.versionIdentifiers, bundle: bundle)
        let known = bundle.index(of: source).flatMap { bundle.versions[$0].entityVersionHashes == hashes ? $0 : nil }
        guard let start = known ?? match.matched.flatMap({ bundle.index(of: $0) }) else {
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
            guard let index = bundle.currentIndex else { throw DecantError(.usage, "\(bundle.name) has no versions") }
            end = index
        }
        self.source = bundle.versions[start]
        self.destination = bundle.versions[end]
        self.sourceChoice = match.choice
        self.order = bundle.order
        self.versionNames = bundle.versions.map { $0.versionName ?? "?" }
        self.hops = []
        // Two versions with equal hashes: the store is at the destination already if the destination has its hashes.
        if bundle.versions[end].entityVersionHashes == hashes {
            self.source = bundle.versions[end]
            if start != end, let choice = match.choice {
                self.sourceChoice = choice + "; the destination \(destinationVersion) has the same hashes: nothing to migrate"
            }
            self.notes = (mappings.map(\.path) + mappingModels.map { Self.filePath(of: $0) ?? "a mapping model" }).map {
                "\($0) is not used: the store is at \(bundle.versions[end].versionName ?? "?") already"
            }
            return
        }
        // Before any path is chosen: two mappings for one hop stop the plan, whichever path would take them.
        try Self.requireOneClaimPerHop(bundle: bundle, mappings: mappings, models: mappingModels)
        let from = bundle.versions[start].versionName ?? "?"
        let to = bundle.versions[end].versionName ?? "?"
        if !bundle.order.isKnown {
            let reason = "the order of \(bundle.name)'s versions is unknown (their names follow no common scheme)"
            let step = Self.singleStep(bundle: bundle, from: start, to: end, mappings: mappings, models: mappingModels)
            self.hops = [step.hop]
            self.notes = step.notes
            self.path = .singleStep(reason: reason)
            return
        }
        if end < start {
            guard destinationName != nil else {
                throw DecantError(
                    .usage,
                    "the store is at \(from), which is newer than \(to) (\(bundle.name)'s versions in order: \(names)); "
                        + "Decant does not migrate a store down unless asked: Core Data would map it to \(to) and drop "
                        + "what \(to) lacks; to do that, name the version: --to-version \(to)"
                )
            }
            let step = Self.singleStep(bundle: bundle, from: start, to: end, mappings: mappings, models: mappingModels)
            self.hops = [step.hop]
            self.notes = step.notes
            self.path = .singleStep(reason: "\(to) is older than \(from), asked for with --to-version")
            return
        }
        let walked = try Self.hopByHop(bundle: bundle, from: start, to: end, mappings: mappings, models: mappingModels)
        self.hops = walked.hops
        self.notes = walked.notes
        // A bundle's own stages are its path, as SwiftData's staged migration runs them: a stage that cannot run is
        // not skipped by a single step around it (that would skip a custom stage's app code).
        guard bundle.stages.isEmpty, walked.hops.contains(where: { !$0.problems.isEmpty }), !walked.usesFiles else {
            return
        }
        // A hop cannot run: Core Data's automatic migration would infer one step straight to the destination. No
        // mapping served the walk, so none serves this step (one made for exactly these two versions would have).
        let step = Self.singleStep(bundle: bundle, from: start, to: end, mappings: [], models: [])
        guard step.hop.problems.isEmpty, let failed = walked.hops.first(where: { !$0.problems.isEmpty }) else { return }
        let because = failed.problems.map { "\($0.entity)\($0.property.map { ".\($0)" } ?? ""): \($0.message)" }
            .joined(separator: "; ")
        self.hops = [step.hop]
        self.notes = Self.unusedNotes(
            mappings: mappings, usedFiles: [], models: mappingModels, usedModels: [], hops: [step.hop])
        self.path = .singleStep(reason: "hop \(failed.name) cannot be inferred because \(because)")
    }

    /// Checks the stages `bundle` declares (``ModelBundle/stages``): each goes forward between two of its versions,
    /// and no two start at the same version.
    /// - Throws: `.malformedInput` located at the stage's declaration for a stage that names a version the bundle
    ///   does not have, goes backwards or to its own version, or starts where another one does.
    static func checkStages(of bundle: ModelBundle) throws {
        let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
        var starts: [Int: VersionStage] = [:]
        for stage in bundle.stages {
            let what = "the migration stage \(stage.from) → \(stage.to)"
            for name in [stage.from, stage.to] where bundle.index(ofVersionNamed: name) == nil {
                throw DecantError(
                    .malformedInput,
                    "\(what) names \(name), which is not a version of \(bundle.name) (its versions: \(names)); "
                        + "list \(name) among the plan's schemas, or name one of those",
                    at: stage.location)
            }
            guard let from = bundle.index(ofVersionNamed: stage.from), let to = bundle.index(ofVersionNamed: stage.to),
                to > from
            else {
                throw DecantError(
                    .malformedInput,
                    "\(what) does not go forward: in the plan's schemas (\(names)) \(stage.to) does not come after "
                        + "\(stage.from)",
                    at: stage.location)
            }
            if let earlier = starts[from] {
                throw DecantError(
                    .malformedInput,
                    "\(what) starts at the same version as the stage \(earlier.from) → \(earlier.to)"
                        + (earlier.location.map { " (\($0))" } ?? "") + "; keep one",
                    at: stage.location)
            }
            starts[from] = stage
        }
    }

    /// The problem of a hop that runs a custom stage without a mapping file: its `willMigrate` / `didMigrate` closures
    /// are app code, named with where they are declared. Nil for a lightweight stage, or a custom one without
    /// closures (it runs as a lightweight one).
    static func customStageProblem(_ stage: VersionStage) -> MigrationProblem? {
        guard case .custom(let closures) = stage.kind, !closures.isEmpty else { return nil }
        let named = closures.map { closure in closure.name + (closure.location.map { " (\($0))" } ?? "") }
        let list =
            named.count == 1 ? named[0] : named.dropLast().joined(separator: ", ") + " and " + (named.last ?? "")
        return MigrationProblem(
            entity: "stage \(stage.from) → \(stage.to)",
            message: "the custom stage runs \(list), which \(closures.count == 1 ? "is" : "are") app code",
            advice: "write a mapping file for \(stage.from) → \(stage.to) that does what "
                + (closures.count == 1 ? "it does" : "they do") + " and give it with --mapping",
            location: stage.location)
    }

    /// Throws `.usage` when two mappings (files or models) start at the same version of `bundle`: they claim the
    /// same hop, and which one runs would be a guess.
    private static func requireOneClaimPerHop(
        bundle: ModelBundle, mappings: [ExplicitMapping], models mappingModels: [MappingModel]
    ) throws {
        func index(of name: String) -> Int? { bundle.index(ofVersionNamed: name) }
        var claims: [Int: (path: String, hop: String)] = [:]
        let claimants =
            mappings.map { ($0.source, $0.path, "\($0.source) → \($0.destination)") }
            + mappingModels.map { model in
                (
                    model.sourceVersion, Self.filePath(of: model) ?? "mapping model",
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
    }

    /// The hops from version `start` to version `end` (later) of `bundle`, whether a mapping file or model gave any
    /// of them, and notes naming the mappings none of them uses.
    private static func hopByHop(
        bundle: ModelBundle, from start: Int, to end: Int, mappings: [ExplicitMapping], models mappingModels: [MappingModel]
    ) throws -> (hops: [Hop], usesFiles: Bool, notes: [String]) {
        func index(of name: String) -> Int? { bundle.index(ofVersionNamed: name) }
        var used: Set<Int> = []
        var usedModels: Set<Int> = []
        var hops: [Hop] = []
        var position = start
        var stageNotes: [String] = []
        while position < end {
            // The model's own stage from here (checked: at most one, forward, between versions of the bundle).
            let stage = bundle.stages.first { index(of: $0.from) == position }
            if let modelIndex = mappingModels.firstIndex(where: { index(of: $0.sourceVersion) == position }),
                let target = index(of: mappingModels[modelIndex].destinationVersion), target > position, target <= end
            {
                usedModels.insert(modelIndex)
                var hop = Self.hop(bundle.versions[position], bundle.versions[target], model: mappingModels[modelIndex])
                hop.stage = stage
                hops.append(hop)
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
            } else if let stage, let target = index(of: stage.to) {
                if target <= end {
                    next = target
                } else {
                    stageNotes.append(
                        "the stage \(stage.from) → \(stage.to) goes past the destination "
                            + "\(bundle.versions[end].versionName ?? "?"): the hop from \(stage.from) is inferred")
                }
            } else if !bundle.stages.isEmpty {
                stageNotes.append(
                    "no stage of \(bundle.name)'s migration plan starts at \(bundle.versions[position].versionName ?? "?"): "
                        + "the hop to \(bundle.versions[next].versionName ?? "?") is inferred (lightweight)")
            }
            var hop = Self.inferredHop(bundle.versions[position], bundle.versions[next], explicit: explicit)
            if let stage, index(of: stage.to) == next || explicit != nil {
                hop.stage = stage
                // A custom stage's closures are app code: a mapping file for the hop stands for them, else the hop
                // cannot run (as a mapping model's migration policy that no app code answers).
                if explicit == nil, let problem = Self.customStageProblem(stage) { hop.problems.append(problem) }
            }
            hops.append(hop)
            position = next
        }
        let notes = Self.unusedNotes(
            mappings: mappings, usedFiles: used, models: mappingModels, usedModels: usedModels, hops: hops)
        return (hops, !used.isEmpty || !usedModels.isEmpty, stageNotes + notes)
    }

    /// Core Data's single step from version `start` to version `end` of `bundle`: a mapping model or file made for
    /// exactly these two versions, else inference between them alone (a relationship pointed at an entity its old
    /// targets do not become starts empty, ``MappingInference/infer(from:to:explicit:emptiesRetargetedRelationships:)``);
    /// and notes naming the mappings it does not use.
    private static func singleStep(
        bundle: ModelBundle, from start: Int, to end: Int, mappings: [ExplicitMapping], models mappingModels: [MappingModel]
    ) -> (hop: Hop, notes: [String]) {
        let from = bundle.versions[start]
        let to = bundle.versions[end]
        let hop: Hop
        var usedFiles: Set<Int> = []
        var usedModels: Set<Int> = []
        if let modelIndex = mappingModels.firstIndex(where: {
            from.isNamed($0.sourceVersion) && to.isNamed($0.destinationVersion)
        }) {
            usedModels.insert(modelIndex)
            hop = Self.hop(from, to, model: mappingModels[modelIndex])
        } else {
            let fileIndex = mappings.firstIndex { from.isNamed($0.source) && to.isNamed($0.destination) }
            if let fileIndex { usedFiles.insert(fileIndex) }
            hop = Self.inferredHop(
                from, to, explicit: fileIndex.map { mappings[$0] }, emptiesRetargetedRelationships: true)
        }
        let notes = Self.unusedNotes(
            mappings: mappings, usedFiles: usedFiles, models: mappingModels, usedModels: usedModels, hops: [hop])
        return (hop, notes)
    }

    /// A hop taken from a complete mapping (an Xcode mapping model): entities it does not name get no objects.
    private static func hop(_ from: ObjectModel, _ to: ObjectModel, model: MappingModel) -> Hop {
        let problems = Self.problems(of: model, from: from, to: to) + Self.expressionProblems(of: model, from: from)
        return Hop(
            source: from, destination: to, mapping: model, file: Self.filePath(of: model) ?? "mapping model",
            problems: problems)
    }

    /// The mistakes in what `file` says, found from it and `bundle`'s two versions it names alone
    /// (``MigrationProblem/isMappingFileMistake``): a property, entity or entry it names that the models do not have,
    /// a fetch that does not parse. Empty when the bundle lacks either version (the plan says so).
    public static func mappingFileMistakes(of file: ExplicitMapping, in bundle: ModelBundle) -> [MigrationProblem] {
        guard let from = bundle.version(named: file.source), let to = bundle.version(named: file.destination) else {
            return []
        }
        return inferredHop(from, to, explicit: file).problems.filter(\.isMappingFileMistake)
    }

    /// A hop inferred between two versions, with a mapping file's entries where it has them.
    private static func inferredHop(
        _ from: ObjectModel, _ to: ObjectModel, explicit: ExplicitMapping?, emptiesRetargetedRelationships: Bool = false
    ) -> Hop {
        let inferred = MappingInference.infer(
            from: from, to: to, explicit: explicit, emptiesRetargetedRelationships: emptiesRetargetedRelationships)
        return Hop(
            source: from, destination: to, mapping: inferred.mapping, file: explicit?.path,
            problems: inferred.problems + Self.expressionProblems(of: inferred.mapping, from: from, file: explicit))
    }

    /// A note for each mapping file and model that no hop of the migration uses (a batch hands every store every
    /// mapping): they are not errors.
    private static func unusedNotes(
        mappings: [ExplicitMapping], usedFiles: Set<Int>, models mappingModels: [MappingModel], usedModels: Set<Int>,
        hops: [Hop]
    ) -> [String] {
        let hopNames = hops.map(\.name).joined(separator: ", ")
        var notes: [String] = []
        for (offset, file) in mappings.enumerated() where !usedFiles.contains(offset) {
            notes.append(
                "\(file.path) maps \(file.source) → \(file.destination), which no hop of this migration uses "
                    + "(hops: \(hopNames)); not used"
            )
        }
        for (offset, model) in mappingModels.enumerated() where !usedModels.contains(offset) {
            notes.append(
                "\(Self.filePath(of: model) ?? "a mapping model") maps \(model.sourceVersion) → "
                    + "\(model.destinationVersion), which no hop of this migration uses (hops: \(hopNames)); not used"
            )
        }
        return notes
    }

    /// Data the plan drops on purpose, hop by hop.
    public var destructiveChanges: [DestructiveChange] {
        var changes: [DestructiveChange] = []
        for hop in hops {
            let name = hop.name
            var used: [String: Set<String>] = [:]
            var emptied: [String: Set<String>] = [:]
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
                    if case .emptied(let reason) = property.change {
                        emptied[sourceName, default: []].insert(property.name)
                        changes.append(
                            .relationshipEmptied(
                                hop: name, entity: mapping.destinationEntity ?? sourceName,
                                relationship: property.name, reason: reason))
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
                for path in (mapping.filter?.sourceKeyPaths ?? []) + (mapping.findOrCreate?.sourceKeyPaths ?? [])
                where !path.isEmpty {
                    used[sourceName, default: []].insert(path[0])
                }
                // Objects are dropped only where every mapping that reads them filters (another takes the rest).
                let readers = hop.mapping.entityMappings.filter { hop.moves($0) && $0.sourceEntity == sourceName }
                if mapping.filter != nil, readers.allSatisfy({ $0.filter != nil }),
                    !changes.contains(.filtered(hop: name, entity: sourceName))
                {
                    changes.append(.filtered(hop: name, entity: sourceName))
                }
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
                    && emptied[sourceName]?.contains(relationship.name) != true && !inverseKept(relationship, used: used)
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
