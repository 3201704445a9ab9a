public import DecantCore

/// The `decant plan --json` document (`schemas/plan.schema.json`), and the same facts as text.
///
/// ```swift
/// let document = PlanDocument(report: try StoreMigration.plan(store: url, options: options), store: "Notes.sqlite")
/// print(document.text)
/// ```
public struct PlanDocument: Sendable, Hashable, Codable {
    /// One property of an entity mapping.
    public struct Property: Sendable, Hashable, Codable {
        /// Whether a property is an attribute or a relationship; spelled `attribute`, `relationship`.
        public enum Kind: String, Sendable, Hashable, Codable {
            /// An attribute.
            case attribute
            /// A relationship.
            case relationship
        }

        /// The destination property.
        public var name: String
        /// `attribute` or `relationship`.
        public var kind: Kind
        /// The value expression; nil: no value.
        public var expression: String?
        /// What changed (`copied`, `renamed from content`, `added (nil)`, …), as ``PropertyMapping/Change`` says it.
        public var change: String
        /// Whether the property is copied as it is (``PropertyMapping/Change/copied``); for the text, not in the JSON
        /// document.
        public var isCopied = false

        private enum CodingKeys: String, CodingKey {
            case name, kind, expression, change
        }

        /// The document of a property mapping of `kind`.
        init(_ mapping: PropertyMapping, kind: Kind) {
            self.name = mapping.name
            self.kind = kind
            self.expression = mapping.expression?.description
            self.change = mapping.change.description
            if case .copied = mapping.change { self.isCopied = true }
        }
    }

    /// One entity mapping.
    public struct Entity: Sendable, Hashable, Codable {
        /// The mapping's name.
        public var name: String
        /// `copy`, `transform`, `add` or `remove`.
        public var kind: EntityMapping.Kind
        /// The source entity.
        public var source: String?
        /// The destination entity.
        public var destination: String?
        /// The `where` filter.
        public var filter: String?
        /// The key a find-or-create entry finds its objects by (one object per value).
        public var findOrCreate: String?
        /// `inferred` or the mapping file.
        public var origin: String
        /// The migration policy class that makes the objects (an Xcode mapping model's custom policy).
        public var policy: String?
        /// Per property.
        public var properties: [Property]
    }

    /// One hop.
    public struct Hop: Sendable, Hashable, Codable {
        /// The source version.
        public var source: String
        /// The destination version.
        public var destination: String
        /// Whether the hop is wholly inferred.
        public var inferred: Bool
        /// The mapping file, if one contributed.
        public var file: String?
        /// Per entity.
        public var entities: [Entity]
        /// What stops this hop.
        public var problems: [MigrationProblem]
        /// The stage of the model's own migration plan this hop runs (a SwiftData `MigrationStage`).
        public var stage: Stage?
    }

    /// A stage of the model's own migration plan (``DecantCore/VersionStage``).
    public struct Stage: Sendable, Hashable, Codable {
        /// What a stage does; spelled `lightweight`, `custom`.
        public enum Kind: String, Sendable, Hashable, Codable {
            /// Core Data's lightweight migration.
            case lightweight
            /// App code around it (a `MigrationStage.custom`).
            case custom
        }

        /// One closure of a custom stage.
        public struct Closure: Sendable, Hashable, Codable {
            /// `willMigrate` or `didMigrate`.
            public var name: String
            /// Where it is declared.
            public var location: Location?
        }

        /// `lightweight` or `custom`.
        public var kind: Kind
        /// Where the source declares the stage.
        public var location: Location?
        /// A custom stage's closures (app code Decant does not run).
        public var closures: [Closure]

        /// The document of `stage`.
        init(_ stage: VersionStage) {
            switch stage.kind {
            case .lightweight:
                kind = .lightweight
                closures = []
            case .custom(let given):
                kind = .custom
                closures = given.map { Closure(name: $0.name, location: $0.location) }
            }
            location = stage.location
        }
    }

    /// What a dry run found.
    public struct Preflight: Sendable, Hashable, Codable {
        /// Objects read per source entity.
        public var objects: [String: Int]
        /// Objects that would be rejected, per `Entity.property rule`.
        public var rejects: [String: Int]
    }

    /// The store, as given.
    public var store: String
    /// The store's format.
    public var inputFormat: String
    /// The store's version.
    public var sourceVersion: String
    /// The destination version.
    public var destinationVersion: String
    /// Whether the store is at the destination version already.
    public var upToDate: Bool
    /// Whether the plan can run.
    public var executable: Bool
    /// The hops.
    public var hops: [Hop]
    /// Data dropped on purpose.
    public var destructiveChanges: [String]
    /// The dry run (absent when the plan cannot run).
    public var preflight: Preflight?
    /// Whether `migrate` would find problems: the plan cannot run, or its dry run would reject objects (or keep
    /// references to objects that do not exist), which `migrate` ends with exit 1.
    public var foundProblems: Bool { !executable || (preflight?.rejects.values.reduce(0, +) ?? 0) > 0 }
    /// How `migrate` would move the objects into an output of the store's format: inside the store, named by its
    /// format (`sqlite`), or `stream` (absent when the plan cannot run or the store is up to date).
    public var engine: MigrationEngineKind?
    /// What the engine's format says of it running (``InStoreMigratingFormat/inStorePlanNote``), for the text; not in
    /// the JSON document.
    public var engineNote: String?
    /// Why `migrate` would use the record stream rather than the in-store engine of the store's format.
    public var streamReason: StreamReason?
    /// How a plan goes; spelled `hop-by-hop`, `single-step`.
    public enum Path: String, Sendable, Hashable, Codable {
        /// Hop by hop, through every version between.
        case hopByHop = "hop-by-hop"
        /// Core Data's automatic migration, straight to the destination.
        case singleStep = "single-step"
    }

    /// `hop-by-hop`, or `single-step` (Core Data's automatic migration, straight to the destination).
    public var path: Path
    /// For a single step: why hop by hop does not run.
    public var pathReason: String?
    /// The bundle's version order: `by-name`, `given` or `unknown`.
    public var versionOrder: VersionOrder
    /// The bundle's versions in that order.
    public var versions: [String]
    /// When several versions have the store's entity hashes: which was taken, and why.
    public var sourceChoice: String?
    /// What planning noticed and let pass: unused mappings, mapping models of another bundle.
    public var notes: [String]
    /// What the mapping search found and used (absent when it was off).
    public var mappingSearch: MappingSearchSummary?

    /// What the search of the model's project for Xcode mapping models found and used.
    public struct MappingSearchSummary: Sendable, Hashable, Codable {
        /// The folder searched.
        public var root: String
        /// The mapping models found.
        public var found: [String]
        /// Those that serve a hop of the plan.
        public var used: [String]
    }

    private enum CodingKeys: String, CodingKey {
        case store, inputFormat, sourceVersion, destinationVersion, upToDate, executable, hops, destructiveChanges
        case preflight, engine, streamReason, path, pathReason, versionOrder, versions, sourceChoice, notes
        case mappingSearch
    }

    /// The document of a plan report; the engine's words come from its format in `registry`.
    public init(report: StoreMigration.PlanReport, store: String, registry: FormatRegistry = .builtIn) {
        let plan = report.plan
        self.store = store
        self.inputFormat = report.inputFormat
        self.sourceVersion = plan.sourceVersion
        self.destinationVersion = plan.destinationVersion
        self.upToDate = plan.isUpToDate
        self.executable = plan.isExecutable
        self.destructiveChanges = plan.destructiveChanges.map(\.description)
        self.preflight = report.preflight.map { Preflight(objects: report.objects, rejects: $0) }
        self.engine = report.engine
        self.engineNote = registry.inStoreMigratingFormat(of: report.engine)?.inStorePlanNote
        self.streamReason = report.streamReason
        switch plan.path {
        case .hopByHop:
            self.path = .hopByHop
        case .singleStep(let reason):
            self.path = .singleStep
            self.pathReason = reason
        }
        self.versionOrder = plan.order
        self.versions = plan.versionNames
        self.sourceChoice = plan.sourceChoice
        self.notes = plan.notes
        self.mappingSearch = report.mappingSearch.map {
            MappingSearchSummary(root: $0.root, found: $0.found, used: $0.used)
        }
        self.hops = plan.hops.map { hop in
            Hop(
                source: hop.source.versionName ?? "?",
                destination: hop.destination.versionName ?? "?",
                inferred: hop.isInferred,
                file: hop.file,
                entities: hop.mapping.entityMappings.map { mapping in
                    let origin: String
                    switch mapping.origin {
                    case .inferred: origin = "inferred"
                    case .file(let path): origin = path
                    }
                    return Entity(
                        name: mapping.name,
                        kind: mapping.kind,
                        source: mapping.sourceEntity,
                        destination: mapping.destinationEntity,
                        filter: mapping.filter?.description,
                        findOrCreate: mapping.findOrCreate?.description,
                        origin: origin,
                        policy: mapping.policy,
                        properties: mapping.attributes.map { Property($0, kind: .attribute) }
                            + mapping.relationships.map { Property($0, kind: .relationship) }
                    )
                },
                problems: hop.problems,
                stage: hop.stage.map(Stage.init)
            )
        }
    }

    /// A hop's stage as a line of text: its kind and declaration, and for a custom stage its closures and what stands
    /// for them (the hop's mapping file) or that nothing does.
    private static func text(of stage: Stage, file: String?) -> String {
        var line = "stage: \(stage.kind.rawValue)" + (stage.location.map { " (\($0))" } ?? "")
        guard stage.kind == .custom else { return line }
        guard !stage.closures.isEmpty else { return line + ", without closures: runs as a lightweight stage" }
        let closures = stage.closures.map { $0.name + ($0.location.map { " at \($0)" } ?? "") }
        line += ": " + closures.joined(separator: ", ") + " (app code, not run)"
        return line + (file.map { "; \($0) stands for it" } ?? "; no mapping file stands for it")
    }

    /// The plan as text, for people: a summary (``text(verbose:)`` without `verbose`).
    public var text: String { text(verbose: false) }

    /// The plan as text, for people. The summary gives per hop how many entities are copied, transformed, added
    /// and removed, and lists only the entities and properties that change (a 90-version chain of mostly copies
    /// fits a log); `verbose` lists every entity and property.
    public func text(verbose: Bool) -> String {
        var lines = ["\(store) (\(inputFormat)): version \(sourceVersion) → \(destinationVersion)"]
        if versions.count > 1 {
            lines.append("version order: \(versionOrder): \(versions.joined(separator: ", "))")
        }
        if let sourceChoice { lines.append(sourceChoice) }
        if let mappingSearch {
            lines.append(
                "mapping models found in \(mappingSearch.root): "
                    + (mappingSearch.found.isEmpty ? "none" : mappingSearch.found.joined(separator: ", ")))
            if !mappingSearch.found.isEmpty {
                lines.append(
                    "  used: " + (mappingSearch.used.isEmpty ? "none" : mappingSearch.used.joined(separator: ", ")))
            }
        }
        // Mapping models the search found for other bundles of the project say nothing about this migration: the
        // summary counts them, --verbose names them.
        let otherBundles = notes.filter { MappingFiles.isAnotherBundleNote($0) }
        let shown = verbose ? notes : notes.filter { !MappingFiles.isAnotherBundleNote($0) }
        if !shown.isEmpty || !otherBundles.isEmpty {
            lines.append("notes:")
            lines += shown.map { "  \($0)" }
            if !verbose, !otherBundles.isEmpty {
                lines.append(
                    "  \(otherBundles.count == 1 ? "1 mapping model" : "\(otherBundles.count) mapping models") of other "
                        + "bundles ignored (--verbose names them)")
            }
        }
        if upToDate {
            lines.append("already at \(destinationVersion): nothing to migrate")
            return lines.joined(separator: "\n")
        }
        if let pathReason {
            lines.append("path: single step (as Core Data's automatic migration): \(pathReason)")
        } else {
            lines.append("path: hop by hop")
        }
        for (number, hop) in hops.enumerated() {
            lines.append(
                "hop \(number + 1): \(hop.source) → \(hop.destination) "
                    + "(\(hop.inferred ? "inferred" : "explicit: \(hop.file ?? "")"))"
            )
            if let stage = hop.stage { lines.append("  " + Self.text(of: stage, file: hop.file)) }
            let kinds = Dictionary(grouping: hop.entities, by: \.kind).mapValues(\.count)
            lines.append(
                "  entities: \(kinds[.copy, default: 0]) copied, \(kinds[.transform, default: 0]) transformed, "
                    + "\(kinds[.add, default: 0]) added, \(kinds[.remove, default: 0]) removed")
            for entity in hop.entities {
                // A property a mapping model or file sets to the source's same-named one (`x = $source.x`) is
                // unchanged too: a real bundle's mapping models listed a thousand of them; --verbose lists them.
                let changed = entity.properties.filter { !$0.isCopied && $0.expression != "$source.\($0.name)" }
                if !verbose, entity.kind == .copy, entity.filter == nil, entity.findOrCreate == nil, entity.policy == nil,
                    entity.source == entity.destination, changed.isEmpty
                {
                    continue
                }
                switch entity.kind {
                case .remove: lines.append("  \(entity.source ?? "?"): removed")
                case .add: lines.append("  \(entity.destination ?? "?"): added (no objects)")
                default:
                    let from = entity.source == entity.destination ? "" : " from \(entity.source ?? "?")"
                    let filter = (entity.filter.map { " where \($0)" } ?? "")
                        + (entity.findOrCreate.map { ", one per \($0) (found or created)" } ?? "")
                    let policy = entity.policy.map { " (policy \($0))" } ?? ""
                    lines.append("  \(entity.destination ?? "?")\(from): \(entity.kind.rawValue)\(filter)\(policy)")
                }
                guard entity.kind != .remove else { continue }
                for property in verbose ? entity.properties : changed {
                    lines.append("    \(property.name) = \(property.expression ?? "nil")  (\(property.change))")
                }
            }
        }
        lines.append("destructive changes:" + (destructiveChanges.isEmpty ? " none" : ""))
        lines += destructiveChanges.map { "  \($0)" }
        let problems = hops.flatMap(\.problems)
        if !problems.isEmpty {
            lines.append("cannot run:")
            lines += problems.map { "  \($0)" }
        }
        if let preflight {
            let total = preflight.objects.values.reduce(0, +)
            let failing = preflight.rejects.values.reduce(0, +)
            lines.append(
                "pre-flight: \(total) objects read, "
                    + (failing == 0 ? "none would be rejected" : "\(failing) would be rejected:")
            )
            for key in preflight.rejects.keys.sorted() { lines.append("  \(key): \(preflight.rejects[key] ?? 0)") }
        }
        if let engineNote {
            lines.append(engineNote)
        } else if let streamReason {
            lines.append("runs through the record stream: \(streamReason)")
        }
        return lines.joined(separator: "\n")
    }
}
