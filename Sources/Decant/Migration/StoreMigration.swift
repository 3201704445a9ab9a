public import DecantCore
import DecantCodecs
public import Foundation
public import Logging

/// `decant plan` and `decant migrate`: the migration of a whole store, from whatever version of a model bundle it was
/// written with to the bundle's current version (or a named one), hop by hop through the record pipeline.
///
/// It makes the plan, asks the output format's own engine when the output is in the store's format
/// (``InStoreMigratingFormat``, as a SQLite store migrates inside SQLite) and runs the record stream
/// (``RecordStreamEngine``) when there is none or it declines; the report says which ran, and why not the first.
///
/// ```swift
/// var options = StoreMigration.Options(bundle: notes)
/// let report = try StoreMigration.migrate(store: v1Store, to: .file(v3Store), options: options)
/// print(report.action, report.hops)    // migrated ["Notes → Notes 2", "Notes 2 → Notes 3"]
/// ```
public enum StoreMigration: Sendable {
    /// What to migrate with.
    public struct Options: Sendable {
        /// The model bundle: the store's version is found among its versions by hash.
        public var bundle: ModelBundle
        /// The destination version's name; the bundle's current version when nil.
        public var destinationVersion: String?
        /// Mapping files, one per hop they replace.
        public var mappings: [ExplicitMapping] = []
        /// Complete mappings for hops (Xcode mapping models, ``MappingFiles/resolve(_:bundle:)``).
        public var mappingModels: [MappingModel] = []
        /// The input's format name (`--from`); told by its content when nil.
        public var inputFormat: String?
        /// The output's format name; told by the output's extension (SQLite by default) when nil.
        public var outputFormat: String?
        /// Reader and writer settings (missing external data, journal mode); the bundle is set from ``bundle``.
        public var formatOptions = FormatOptions()
        /// Where objects that break a rule are listed (NDJSON); without it the first such object stops the run.
        public var rejects: URL?
        /// Whether a violation an object already had at the source version stops the run (or rejects the object)
        /// too. By default, as Core Data's lightweight migration (which never validates the objects it moves), a
        /// plan whose hops are all inferred carries such violations over, with a warning per entity, property and
        /// rule; only violations the migration makes stop it.
        public var strict = false
        /// The functions value expressions may call.
        public var functions = ValueExpressionFunctions()
        /// Where the run happens, rather than what it is asked to do: the formats it knows, where its sets spill, and
        /// whether the store's own engine may run or count inside it.
        public var environment = Environment()

        /// The setting a migration runs in: defaults that a program or a test changes, never a user's request.
        public struct Environment: Sendable {
            /// The formats.
            public var registry: FormatRegistry = .builtIn
            /// Where the sets that grow with the store (the identities the validator has seen, uniqueness-constraint
            /// values, the objects a hop removes) are kept: by default integer keys as bits, up to 131,072 other keys
            /// each in memory and the rest in a temporary file (``SpillingKeySet``).
            public var keySets: KeySetFactory = .spilling()
            /// Whether a migration into the store's own format runs inside the store when that format can
            /// (``InStoreMigratingFormat``): a SQLite → SQLite migration whose hops only keep, rename, widen, default
            /// or drop columns runs as SQL inside SQLite, as Core Data's lightweight migration does; it writes the same
            /// store as the record stream, several times faster. False forces the record stream.
            public var runsInStoreWhenPossible = true
            /// Whether `plan`'s dry run counts inside the store when its format can (``InStoreCountingFormat``): for a
            /// SQLite store whose hops are inferred, queries count the objects that would be rejected, per entity and
            /// rule, exactly as reading every object would, in a fraction of the time; where they cannot tell exactly,
            /// the dry run reads the objects. False always reads them.
            public var countsInStoreWhenPossible = true

            /// The built-in formats, spilling key sets, and the store's own engine wherever it can.
            public init() {}
        }

        /// Where the model bundle is: the mapping search (``searchesForMappings``) starts from it. No search without
        /// it.
        public var modelURL: URL?
        /// Whether the project that holds ``modelURL`` is searched for Xcode mapping models (``MappingSearch``), as
        /// Core Data searches the app's bundle: each one that fits a hop serves it, unless a mapping given in
        /// ``mappings`` or ``mappingModels`` starts the same hop (`--no-mapping-search` turns it off).
        public var searchesForMappings = true
        /// What loading the given mappings noticed and let pass (mapping models of another bundle), for the plan.
        public var mappingNotes: [String] = []
        /// The real paths of the mappings loaded (``loadMappings(from:)``): one found again by the search counts once.
        public var mappingPaths: Set<String> = []
        /// What the mapping search found, kept for every run with these options (``searchingMappingsOnce()``); nil:
        /// each run searches.
        var mappingSearchMemo: MappingSearch.Memo?

        /// Options for `bundle`. A reference to an externally stored value whose file is missing is carried into
        /// the output as it is (``MissingExternalDataPolicy/keep``), as Core Data's migration carries it without
        /// opening the file.
        public init(bundle: ModelBundle, destinationVersion: String? = nil) {
            self.bundle = bundle
            self.destinationVersion = destinationVersion
            self.formatOptions.missingExternalData = .keep
        }

        /// The plan from `source` (the store's version) with these options, app code it needs but lacks as problems,
        /// and what the mapping search found and used.
        package func plan(from source: ObjectModel) throws -> (MigrationPlan, MappingSearchOutcome?) {
            let (found, search) = try searchedMappings()
            var plan = try MigrationPlan(
                bundle: bundle,
                source: source,
                to: destinationVersion,
                mappings: mappings,
                mappingModels: mappingModels + found
            )
            plan.requireHooks(functions)
            plan.notes = mappingNotes + (search?.notes ?? []) + plan.notes
            guard var search else { return (plan, nil) }
            let files = Set(plan.hops.compactMap(\.file))
            search.used = search.found.filter { path in
                search.origins.contains { files.contains($0.key) && $0.value == path }
            }
            return (plan, search)
        }

        fileprivate var readerOptions: FormatOptions {
            var options = formatOptions
            options.bundle = bundle
            return options
        }

        /// What the engines run a plan with.
        package func settings(collectsRejects: Bool) -> MigrationSettings {
            var functions = self.functions
            // Key paths into Transformable values read their archives with Foundation's reader, unless a program
            // installed its own.
            if functions.archivedValues == nil { functions.archivedValues = FoundationArchivedValues() }
            return MigrationSettings(
                functions: functions, keySets: environment.keySets, strict: strict, collectsRejects: collectsRejects,
                writerOptions: readerOptions)
        }
    }

    /// Where the migrated store goes.
    public enum Target: Sendable, Hashable {
        /// A new file (replaced if it exists); the source is only read.
        case file(URL)
        /// The store itself, replaced once the migrated copy is complete; the original is moved to `backup` first
        /// when given.
        case inPlace(backup: URL?)
    }

    /// Plans the migration of `store` and, when the plan can run, dry-runs it without writing anything to count the
    /// objects that would be rejected.
    /// - Throws: the reader's errors, and ``MigrationPlan``'s (`.modelMismatch`, `.usage`).
    public static func plan(store: URL, options: Options, dryRun: Bool = true) throws -> PlanReport {
        let source = try options.environment.registry.inputFormat(of: store, named: options.inputFormat)
        var reader = try source.makeReader(at: store, options: options.readerOptions)
        var (plan, search) = try options.plan(from: reader.model)
        // What becomes of the store's persistent history is the plan's to say, whether or not it can run.
        if let history = source as? any PersistentHistoryFormat {
            plan.notes += try history.persistentHistoryNotes(ofStoreAt: store, plan: plan)
        }
        guard dryRun, plan.isExecutable else {
            return PlanReport(
                plan: plan, inputFormat: source.name, preflight: nil, objects: [:], mappingSearch: search)
        }
        var engine: MigrationEngineKind? = plan.isUpToDate ? nil : .stream
        var streamReason: StreamReason?
        switch try inStorePreparation(plan: plan, reader: reader, source: source, sink: source, options: options) {
        case .ready(let migration)?: engine = migration.engine
        case .declined(let reason)?: streamReason = reason
        case nil: break
        }
        let dryRun = try preflight(plan: plan, store: store, reader: &reader, source: source, options: options)
        let counts = dryRun.rejects
        let carries = dryRun.carriesViolations
        if case .inStore? = engine, !counts.isEmpty || carries {
            // Objects that break a rule are for the record stream to stop at, list or carry over.
            engine = .stream
            streamReason = .dryRunFoundViolations
        }
        return PlanReport(
            plan: plan, inputFormat: source.name, preflight: counts, objects: dryRun.objects, engine: engine,
            streamReason: streamReason, mappingSearch: search)
    }

    /// The dry run of `plan`: counted inside the store when its format can tell the counts exactly
    /// (``InStoreCountingFormat``), else by migrating every object `reader` reads through the record stream into a
    /// writer that keeps nothing.
    private static func preflight(
        plan: MigrationPlan, store: URL, reader: inout any RecordReader, source: any RecordFormat, options: Options
    ) throws -> PreflightCounts {
        let settings = options.settings(collectsRejects: true)
        if options.environment.countsInStoreWhenPossible, !plan.isUpToDate,
            let counting = source as? any InStoreCountingFormat,
            let counts = try counting.preflightCounts(plan: plan, reader: reader, settings: settings)
        {
            return counts
        }
        var stream = RecordStreamEngine(settings: settings) {
            try source.makeReader(at: store, options: options.readerOptions)
        }
        stream.checksUpToDateObjects = true
        var writer = DiscardingWriter()
        let transfer = try stream.migrate(plan, from: &reader, into: &writer)
        var counts: [String: Int] = [:]
        for reject in transfer.rejects + transfer.findings {
            counts["\(reject.entity)\(reject.property.map { ".\($0)" } ?? "") \(reject.rule)", default: 0] += 1
        }
        return PreflightCounts(
            objects: transfer.read, rejects: counts,
            carriesViolations: transfer.warnings.contains { $0.kind == .preexistingViolation })
    }

    /// Migrates `store` to `target`.
    ///
    /// The output is built beside its destination and moved into place only after every object is written and the
    /// counts reconcile; on any error the destination (and, in place, the store) is exactly as it was. A store
    /// already at the destination version is copied to a `.file` target, and left alone in place.
    ///
    /// `progress`, when given, is called on the calling thread as objects are written, with their entity and the
    /// number of objects written so far in all (``RecordTransfer/copy(from:through:to:overlapping:depth:progress:)``).
    /// - Throws: `.planNotExecutable` with every problem of the plan; `.validationFailed` for the first object
    ///   that breaks a rule when no rejects file is given; the reader's and writer's errors; `.internalError` when the
    ///   counts do not reconcile.
    public static func migrate(
        store: URL,
        to target: Target,
        options: Options,
        logger: Logger = Logger(label: "decant.migrate"),
        progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Report {
        try migrate(store: store, to: target, options: options, lease: nil, logger: logger, progress: progress)
    }

    /// Migrates `store` to `target` under `lease`, the lease of the destination a job that runs this migration holds
    /// (a seeding: its lock is then held once through both), or under a lease of its own when nil.
    package static func migrate(
        store: URL,
        to target: Target,
        options: Options,
        lease given: DestinationLease?,
        logger: Logger = Logger(label: "decant.migrate"),
        progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Report {
        let source = try options.environment.registry.inputFormat(of: store, named: options.inputFormat)
        let destination: URL
        let sink: any RecordFormat
        switch target {
        case .file(let url):
            guard
                url.standardizedFileURL.resolvingSymlinksInPath() != store.standardizedFileURL.resolvingSymlinksInPath()
            else {
                throw DecantError(
                    .usage,
                    "the output must be a different file from the store (use --in-place to replace it)",
                    at: Location(path: url.displayPath)
                )
            }
            destination = url
            sink = try options.environment.registry.outputFormat(
                for: url, named: options.outputFormat, storeByDefault: true)
            try DestinationLease.checkCanCreate(url, mayBeFolder: sink.writesFolder)
        case .inPlace:
            destination = store
            sink = source
        }
        // The rejects file is an output too: checked before any work, not after the whole run.
        if let rejects = options.rejects { try DestinationLease.checkCanCreate(rejects) }
        // One in-place migration of a store at a time (the lease locks it, and repairs a replacement a crash
        // interrupted first).
        var isInPlace = false
        if case .inPlace = target { isInPlace = true }
        let staged = try given ?? DestinationLease(
            destination: destination, format: sink, locking: isInPlace)
        guard staged.destination == destination, !isInPlace || staged.holdsLock else {
            throw DecantError(
                .internalError, "the lease given is of \(staged.displayPath), not a held lease of the destination",
                at: Location(path: destination.displayPath))
        }
        defer { if given == nil { staged.release() } }
        var report: Report
        do {
            guard
                let outcome = try run(
                    store: store,
                    source: source,
                    sink: sink,
                    at: staged,
                    target: target,
                    options: options,
                    logger: logger,
                    progress: progress
                )
            else {
                // Already at the destination version, in place: nothing to do.
                let model = try source.makeReader(at: store, options: options.readerOptions).model
                return Report(
                    action: .unchanged,
                    sourceVersion: model.versionName ?? "?",
                    destinationVersion: model.versionName ?? "?",
                    hops: [],
                    read: [:],
                    written: [:],
                    ledgers: [],
                    rejected: 0,
                    dangling: 0,
                    rejectsFile: nil,
                    output: store.displayPath,
                    backup: nil,
                    warnings: given == nil ? staged.removedLeftovers : [],
                    engine: .nothing
                )
            }
            report = outcome
            // A dead run's files found beside the destination (said by the job that holds the lease); values an
            // output kept as base64, or read as nil from their archives, are the store's objects', named at the store.
            if given == nil { report.warnings = staged.removedLeftovers + report.warnings }
            report.warnings = report.warnings.map {
                [.transformableKeptAsData, .archivedValueReadAsNil].contains($0.kind) && $0.location?.path == nil
                    ? $0.located(at: store) : $0
            }
        } catch let error as DecantError {
            staged.discard()
            // An object's error (a value a hop cannot convert, a rule it breaks) names its entity and object; the
            // file is the store, as the user typed it.
            throw error.located(at: Location(path: store.displayPath))
        } catch {
            staged.discard()
            throw error
        }
        // The reader is closed: the migrated store takes the destination's place.
        if case .inPlace(let backup) = target {
            try staged.commit(backup: backup)
            report.backup = backup?.displayPath
            return report
        }
        try staged.commit()
        return report
    }

    /// Reads, migrates and writes into `staged.staging`: inside the store when the output format can and takes the
    /// plan, else through the record stream. Nil when the store is already at the destination version and the target
    /// is the store itself.
    private static func run(
        store: URL,
        source: any RecordFormat,
        sink: any RecordFormat,
        at staged: DestinationLease,
        target: Target,
        options: Options,
        logger: Logger,
        progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report? {
        let reader = try source.makeReader(at: store, options: options.readerOptions)
        let (plan, _) = try options.plan(from: reader.model)
        logger.debug(
            "Plan",
            metadata: [
                "source": "\(plan.sourceVersion)", "destination": "\(plan.destinationVersion)",
                "hops": "\(plan.hops.map(\.name))",
            ]
        )
        // A store already at the destination is left alone, so a second run after a successful one succeeds
        // whatever backup the first one kept; only a run that replaces the store needs its backup name free.
        if plan.isUpToDate, case .inPlace = target { return nil }
        if case .inPlace(let backup?) = target, FileManager.default.fileExists(atPath: backup.path) {
            throw DecantError(
                .cannotCreateOutput,
                "the backup file already exists; move it away or name another with --backup",
                at: Location(path: backup.displayPath)
            )
        }
        var streamReason: StreamReason?
        var result: MigrationResult?
        switch try inStorePreparation(plan: plan, reader: reader, source: source, sink: sink, options: options) {
        case .ready(let migration)?:
            switch try migration.run(into: staged.staging, progress: progress) {
            case .migrated(let migrated):
                logger.debug("Migrated inside the store", metadata: ["engine": "\(migration.engine)"])
                result = migrated
            case .declined(let reason):
                streamReason = reason
            }
        case .declined(let reason)?:
            streamReason = reason
        case nil:
            break
        }
        if result == nil {
            if let streamReason {
                logger.debug("Migrating through the record stream", metadata: ["reason": "\(streamReason)"])
            }
            let stream = RecordStreamEngine(settings: options.settings(collectsRejects: options.rejects != nil)) {
                try source.makeReader(at: store, options: options.readerOptions)
            }
            guard case .ready(let migration) = try stream.prepare(plan: plan, reader: reader, sink: sink),
                case .migrated(let migrated) = try migration.run(into: staged.staging, progress: progress)
            else {
                throw DecantError(.internalError, "the record stream declined a plan", at: Location(path: store.displayPath))
            }
            result = migrated
        }
        guard var result else {
            throw DecantError(.internalError, "no engine ran the migration", at: Location(path: store.displayPath))
        }
        result.warnings += try carryHistory(of: store, source: source, sink: sink, into: staged.staging, plan: plan)
        var rejectsFile: String?
        if let rejects = options.rejects {
            try writeRejects(result.rejects + result.findings, to: rejects)
            rejectsFile = rejects.displayPath
        }
        return Report(
            plan: plan, result: result, output: staged.destination.displayPath, rejectsFile: rejectsFile,
            streamReason: streamReason)
    }

    /// Migrates the objects of `store`, held in memory, into a new in-memory store through the record stream
    /// (``RecordStreamEngine``), planned as ``migrate(store:to:options:logger:progress:)`` plans: with `options`'
    /// mappings, mapping models and mapping search. No store file is read or written (only the mapping files and the
    /// project the search looks through are read); `options`' formats, rejects file and in-store engine are not used,
    /// and the first object that breaks a rule stops the run. The report's output is `<memory>`.
    /// - Throws: as ``migrate(store:to:options:logger:progress:)``, the errors located in `<memory>`.
    package static func migrate(_ store: InMemoryStore, options: Options) throws -> (InMemoryStore, Report) {
        let memory = "<memory>"
        do {
            let (plan, _) = try options.plan(from: store.model)
            let stream = RecordStreamEngine(settings: options.settings(collectsRejects: false)) { store.makeReader() }
            var reader = store.makeReader()
            var writer = InMemoryStore.Writer(model: plan.destination)
            let result = try stream.migrate(plan, from: &reader, into: &writer)
            return (writer.store, Report(plan: plan, result: result, output: memory))
        } catch let error as DecantError {
            throw error.located(at: Location(path: memory))
        }
    }

    /// Carries the persistent history of `store` into the migrated store at `output` when its format keeps one
    /// (``PersistentHistoryFormat``) and `sink` is that format too, whichever engine wrote it, as Core Data's
    /// lightweight migration keeps it; into another format it is not carried. Returns a warning for each part not
    /// kept: never dropped silently.
    private static func carryHistory(
        of store: URL, source: any RecordFormat, sink: any RecordFormat, into output: URL, plan: MigrationPlan
    ) throws -> [Diagnostic] {
        guard let history = source as? any PersistentHistoryFormat else { return [] }
        return try history.carryPersistentHistory(from: store, into: output, writtenBy: sink, plan: plan)
    }

    /// What the in-store engine of `sink` answers for the migration of the store `reader` reads into a new store of
    /// `sink`: nil when there is none (the output is in another format than the store, or its format has no in-store
    /// engine), the plan cannot run or there is nothing to migrate.
    private static func inStorePreparation(
        plan: MigrationPlan, reader: any RecordReader, source: any RecordFormat, sink: any RecordFormat,
        options: Options
    ) throws -> MigrationPreparation? {
        guard !plan.isUpToDate, plan.isExecutable, source.name == sink.name,
            let format = sink as? any InStoreMigratingFormat
        else { return nil }
        guard options.environment.runsInStoreWhenPossible else {
            return .declined(.inStoreTurnedOff(engine: format.inStoreEngineName))
        }
        return try format.inStoreEngine(options.settings(collectsRejects: options.rejects != nil))
            .prepare(plan: plan, reader: reader, sink: sink)
    }

    /// Writes rejects as NDJSON: one object per line with entity, object, property, rule and value.
    /// - Throws: `.cannotCreateOutput` when the file cannot be created, `.ioError` when writing it fails.
    public static func writeRejects(_ rejects: [Reject], to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for reject in rejects {
            data.append(try encoder.encode(reject))
            data.append(0x0A)
        }
        // Staged beside the file and renamed into place: 73 when it cannot be created, 74 when writing it fails.
        try DestinationLease(destination: url).write(data, what: "rejects file")
    }
}

extension StoreMigration.Report {
    /// What the run of `plan` that gave `result` did, its output at `output`.
    init(
        plan: MigrationPlan, result: MigrationResult, output: String, rejectsFile: String? = nil,
        streamReason: StreamReason? = nil
    ) {
        self.init(
            action: plan.isUpToDate ? .copied : .migrated,
            sourceVersion: plan.sourceVersion,
            destinationVersion: plan.destinationVersion,
            hops: plan.hops.map(\.name),
            read: result.read,
            written: result.written,
            ledgers: result.ledgers,
            rejected: result.rejects.count,
            dangling: result.findings.count,
            rejectsFile: rejectsFile,
            output: output,
            backup: nil,
            warnings: result.warnings,
            engine: result.engine,
            streamReason: streamReason
        )
        self = noting(plan)
    }
}

/// A writer that keeps nothing: the sink of a dry run. It takes to-many lists in parts, as it takes anything.
struct DiscardingWriter: RecordWriter, MemberPartsConsumer {
    var takesMemberParts: Bool { true }
    mutating func write(_ batch: RecordBatch) throws {}
    mutating func finish() throws {}
    mutating func abandon() {}
}
