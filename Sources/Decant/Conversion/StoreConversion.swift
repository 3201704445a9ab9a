public import DecantCore
public import Foundation
public import Logging

/// `decant convert`: copies every object of an input into a new output of the same model version through the
/// record pipeline, in any pair of registered formats, and reconciles the counts. A whole store copied into a new
/// store of its own format runs inside that format's engine when it can (SQLite: `INSERT … SELECT`), writing the same
/// store.
///
/// ```swift
/// let report = try StoreConversion.convert(from: input, to: output, options: FormatOptions(bundle: notes))
/// print(report.written)
/// ```
public enum StoreConversion: Sendable {
    /// Whether objects brought into a Core Data store from records (JSON, CSV, property lists, archives) are checked
    /// against the model's rules, as Core Data's save checks the objects an app inserts, and where the objects that
    /// break them are listed.
    ///
    /// A store-to-store conversion is a copy, as `migratePersistentStore` makes one, and is not checked: what a store
    /// already holds goes on as it is (`decant validate` checks it). Exports (JSON, CSV) are never checked.
    public struct Validation: Sendable {
        /// Whether the rules are checked (`--no-validate` turns them off for a raw copy).
        public var checksRules: Bool
        /// Where the objects that break a rule are listed (NDJSON, as `migrate --rejects` lists them); with a file,
        /// they are left out of the output and the run goes on; without one, the first stops the run and nothing
        /// is written.
        public var rejects: URL?
        /// Where the sets the checks remember (identities, uniqueness keys) are kept.
        public var keySets: KeySetFactory

        /// Checks the rules (unless `checksRules` is false), listing breaches in `rejects` when given.
        public init(checksRules: Bool = true, rejects: URL? = nil, keySets: KeySetFactory = .spilling()) {
            self.checksRules = checksRules
            self.rejects = rejects
            self.keySets = keySets
        }

        /// No check: the objects are written as they are read.
        public static let none = Validation(checksRules: false)
    }

    /// What a conversion did.
    public struct Report: Sendable, Hashable, Codable {
        /// The input's format name.
        public var inputFormat: String
        /// The output's format name.
        public var outputFormat: String
        /// The model version used (`Z_MODELCACHE` when a store's own cache was used).
        public var modelVersion: String
        /// Objects read per entity.
        public var read: [String: Int]
        /// Objects written per entity.
        public var written: [String: Int]
        /// Objects a selection (`--entity`, `--where`) left out, per entity.
        public var filteredOut: [String: Int]
        /// The output path, as given.
        public var output: String
        /// What the run noticed and let pass: missing external files read under `keep` or `null`, derived
        /// attributes without a trigger, values the output cannot store.
        public var warnings: [Diagnostic]
        /// Whether the objects written were checked against the model's rules (``Validation``).
        public var validated = false
        /// Objects left out because they break a rule of the model, per entity (listed in ``rejectsFile``).
        public var rejected: [String: Int] = [:]
        /// Objects written with a reference to an object that does not exist (listed in ``rejectsFile``).
        public var dangling = 0
        /// The rejects file, when one was written.
        public var rejectsFile: String?

        /// Whether the run found objects that break the model's rules: the output is complete without them, and
        /// `decant convert` exits 1.
        public var foundProblems: Bool { !rejected.isEmpty || dangling > 0 }
    }

    /// Converts `input` into a new output at `output`.
    ///
    /// The input format is `inputFormat` or told by the input's content and extension; the output format is
    /// `outputFormat` or told by the output's extension, a SQLite store by default. The model is the one the input
    /// matches (a store's hashes against `options.bundle`, or its own `Z_MODELCACHE`), or for model-less inputs
    /// `options.version` of the bundle. The output is built beside its destination and moved into place when
    /// complete; on any error it is not created (an existing file there is left as it was).
    ///
    /// With a `selection`, only the entities it takes and the objects its predicate accepts are written, each
    /// entity in its sort order. A SQLite input evaluates inside SQLite what SQL expresses exactly; the rest runs in
    /// the stream. When objects are left out, a first pass collects the identities of the objects taken (held in
    /// memory), so that references to objects left out are written as nil and reported, never left dangling.
    /// - Throws: ``DecantError``: `.usage` when input and output are the same file or a format name is unknown,
    ///   `.modelMismatch` when no version matches, the reader's and writer's errors otherwise, `.internalError`
    ///   when the counts do not reconcile.
    public static func convert(
        from input: URL, to output: URL, inputFormat: String? = nil, outputFormat: String? = nil,
        options: FormatOptions = FormatOptions(), selection: RecordSelection = RecordSelection(),
        validation: Validation = Validation(), registry: FormatRegistry = .builtIn,
        logger: Logger = Logger(label: "decant.convert"), progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Report {
        try convert(
            from: input, to: output, inputFormat: inputFormat, outputFormat: outputFormat, options: options,
            selection: selection, validation: validation, registry: registry, lease: nil, logger: logger,
            progress: progress)
    }

    /// Converts `input` into `output` under `lease`, the lease of `output` a job that runs this conversion holds
    /// (a seeding), or under a lease of its own when nil; a copy between two stores of one format runs inside the
    /// store engine unless `runsInStoreWhenPossible` is false (tests compare it with the record stream's).
    package static func convert(
        from input: URL, to output: URL, inputFormat: String? = nil, outputFormat: String? = nil,
        options: FormatOptions = FormatOptions(), selection: RecordSelection = RecordSelection(),
        validation: Validation = Validation(), registry: FormatRegistry = .builtIn, lease given: DestinationLease?,
        runsInStoreWhenPossible: Bool = true, logger: Logger = Logger(label: "decant.convert"),
        progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Report {
        guard input.standardizedFileURL.resolvingSymlinksInPath() != output.standardizedFileURL.resolvingSymlinksInPath()
        else {
            throw DecantError(
                .usage, "the output must be a different file from the input", at: Location(path: output.displayPath))
        }
        let source = try registry.inputFormat(of: input, named: inputFormat)
        let sink = try registry.outputFormat(for: output, named: outputFormat, storeByDefault: true)
        try DestinationLease.checkCanCreate(output, mayBeFolder: sink.writesFolder)
        // The rejects file is an output too: checked before any work.
        if let rejects = validation.rejects { try DestinationLease.checkCanCreate(rejects) }
        let lease = try given ?? DestinationLease(destination: output, format: sink)
        guard lease.destination == output else {
            throw DecantError(
                .internalError, "the lease given is of \(lease.displayPath), not of the output",
                at: Location(path: output.displayPath))
        }
        defer { if given == nil { lease.release() } }
        do {
            var report = try copy(
                input, source: source, sink: sink, into: lease, options: options, selection: selection,
                validation: validation, inStore: runsInStoreWhenPossible, logger: logger, progress: progress)
            // A dead run's files found beside the output (said by the job that holds the lease).
            if given == nil { report.warnings = lease.removedLeftovers + report.warnings }
            try lease.commit()
            return report
        } catch let error as DecantError where error.code == .validationFailed || error.code == .internalError {
            // An object that breaks a rule is an object of the input, and a defect of the output's is the output's:
            // named there.
            lease.discard()
            throw error.located(at: Location(path: (error.code == .validationFailed ? input : output).displayPath))
        } catch {
            lease.discard()
            throw error
        }
    }

    /// Copies `input` into `lease`'s staging location; the caller commits it.
    private static func copy(
        _ input: URL, source: any RecordFormat, sink: any RecordFormat, into lease: DestinationLease,
        options: FormatOptions, selection: RecordSelection, validation: Validation, inStore: Bool, logger: Logger,
        progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report {
        let output = lease.destination
        var (reader, residual) = try openSelected(source, at: input, options: options, selection: selection)
        let model = reader.model
        logger.debug(
            "Model resolved",
            metadata: [
                "input.path": "\(input.displayPath)", "input.format": "\(source.name)",
                "output.format": "\(sink.name)", "model.version": "\(model.versionName ?? "Z_MODELCACHE")",
            ])
        if inStore, let report = try copyInStore(
            input, reader: reader, residual: residual, source: source, sink: sink, into: lease, options: options,
            selection: selection, logger: logger, progress: progress)
        {
            return report
        }
        var writer = try sink.makeWriter(at: lease.staging, model: model, options: options)
        var transform: (any RecordTransform)?
        if Self.effective(selection, of: reader).leavesObjectsOut {
            var (first, _) = try openSelected(source, at: input, options: options, selection: selection)
            var kept = KeptObjects()
            _ = try RecordTransfer.copy(from: &first, through: SelectionTransform(residual), to: &kept)
            transform = SelectionTransform(residual, keeping: kept)
        } else if !residual.isEverything {
            transform = SelectionTransform(residual)
        }
        // Objects brought into a Core Data store from records meet the model's rules, as a save makes them.
        let validates = validation.checksRules && sink.isPersistentStore && !source.isPersistentStore
        if validates {
            // A key two objects share is refused by the store's own unique index where it has one (naming the
            // entity and the key, as before): millions of keys are then not remembered twice.
            let check = ValidationTransform(
                model: model, collectsRejects: validation.rejects != nil, keySets: validation.keySets,
                checksUniqueness: !sink.enforcesUniquenessConstraints)
            transform = transform.map { TransformChain($0, then: check) } ?? check
        }
        let transfer = try RecordTransfer.copy(from: &reader, through: transform, to: &writer, progress: progress)
        for (entity, count) in transfer.written.sorted(by: { $0.key < $1.key }) {
            logger.debug("Entity copied", metadata: ["entity": "\(entity)", "records.written": "\(count)"])
        }
        try requireReconciled(transfer, output: output)
        // A conversion copies objects: a store's persistent history stays behind, and the report says so.
        var history: [Diagnostic] = []
        if let format = source as? any PersistentHistoryFormat,
            let left = try format.persistentHistoryNotCarried(from: input, into: sink)
        {
            history.append(left)
        }
        var report = Report(
            inputFormat: source.name, outputFormat: sink.name, modelVersion: model.versionName ?? "Z_MODELCACHE",
            read: transfer.read, written: transfer.written, filteredOut: transfer.filteredOut, output: output.displayPath,
            warnings: selection.kindMismatches(against: model).map { $0.located(at: input) }
                // Values kept as base64 are named by the input's objects.
                + transfer.diagnostics.map { $0.kind == .transformableKeptAsData ? $0.located(at: input) : $0 }
                + history)
        report.validated = validates
        report.rejected = transfer.rejected
        report.dangling = transfer.findings.count
        if let rejects = validation.rejects, validates {
            try StoreMigration.writeRejects(transfer.rejects + transfer.findings, to: rejects)
            report.rejectsFile = rejects.displayPath
        }
        return report
    }

    /// Copies a whole store into a new store of its own format inside that format's store engine, as Core Data's
    /// lightweight migration runs inside SQLite: the copy is the plan of one inferred hop from the model to itself
    /// (``InStoreMigratingFormat``; for SQLite, one `INSERT … SELECT` per table from the attached input), which writes
    /// the same store the record stream writes. Nil when it does not apply (another format, a selection, objects
    /// checked against the rules) or the engine declines the plan or gives up on the way (leaving nothing): the
    /// caller then copies through the record stream.
    private static func copyInStore(
        _ input: URL, reader: any RecordReader, residual: RecordSelection, source: any RecordFormat,
        sink: any RecordFormat, into lease: DestinationLease, options: FormatOptions, selection: RecordSelection,
        logger: Logger, progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report? {
        // A store-to-store copy is never checked against the rules (``Validation``): nothing but the copy to run.
        guard source.name == sink.name, source.isPersistentStore, let format = sink as? any InStoreMigratingFormat,
            residual.isEverything, !Self.effective(selection, of: reader).leavesObjectsOut,
            let plan = MigrationPlan.copying(reader.model)
        else { return nil }
        let engine = format.inStoreEngine(MigrationSettings(writerOptions: options))
        guard case .ready(let prepared) = try engine.prepare(plan: plan, reader: reader, sink: sink) else { return nil }
        guard case .migrated(let result) = try prepared.run(into: lease.staging, progress: progress) else { return nil }
        logger.debug("Copied inside the store", metadata: ["engine": "\(prepared.engine)"])
        for (entity, count) in result.written.sorted(by: { $0.key < $1.key }) {
            logger.debug("Entity copied", metadata: ["entity": "\(entity)", "records.written": "\(count)"])
        }
        // Each object is copied as it is, into its own entity.
        guard result.read == result.written else {
            throw DecantError(
                .internalError,
                "objects read and written do not reconcile (read \(result.read), written \(result.written))",
                at: Location(path: lease.destination.displayPath))
        }
        var history: [Diagnostic] = []
        if let format = source as? any PersistentHistoryFormat,
            let left = try format.persistentHistoryNotCarried(from: input, into: sink)
        {
            history.append(left)
        }
        return Report(
            inputFormat: source.name, outputFormat: sink.name, modelVersion: reader.model.versionName ?? "Z_MODELCACHE",
            read: result.read, written: result.written, filteredOut: [:], output: lease.destination.displayPath,
            warnings: result.warnings + history)
    }

    /// Checks that every object read is written or filtered out (``TransferReport/isReconciled``). No input reaches
    /// a failure; a failure is a defect of Decant's, so the conversion must not be committed as if it succeeded.
    /// - Throws: `.internalError` at `output`, naming the counts, when they do not reconcile.
    static func requireReconciled(_ transfer: TransferReport, output: URL) throws {
        guard transfer.isReconciled else {
            throw DecantError(
                .internalError,
                "objects read and written do not reconcile (read \(transfer.read), written \(transfer.written))",
                at: Location(path: output.displayPath))
        }
    }

    /// `selection` as it applies to `reader`'s input: `--entity` names the entity of an input that does not name it
    /// (a CSV file, plain JSON), and selects nothing there, so no first pass remembers every object's id.
    static func effective(_ selection: RecordSelection, of reader: any RecordReader) -> RecordSelection {
        var selection = selection
        if let named = (reader as? any EntityNamingReader)?.entityFromOptions, selection.entities == [named] {
            selection.entities = nil
        }
        return selection
    }

    /// Opens a reader and applies at the source what it can of `selection`; returns the rest for the stream.
    /// - Throws: `.usage` when the selection names what the model lacks, or needs key paths through relationships
    ///   that only SQLite evaluates.
    static func openSelected(
        _ format: any RecordFormat, at input: URL, options: FormatOptions, selection: RecordSelection
    ) throws -> (any RecordReader, RecordSelection) {
        let reader = try format.makeReader(at: input, options: options)
        var selection = effective(selection, of: reader)
        guard !selection.isEverything else { return (reader, selection) }
        selection = selection.includingSubentities(in: reader.model)
        try selection.validate(against: reader.model)
        guard var selecting = reader as? any SelectingRecordReader else { return (reader, selection) }
        let residual = try selecting.apply(selection)
        let paths = (residual.predicate?.keyPaths ?? []).map { ("--where", $0) } + residual.sort.map { ("--sort", $0.keyPath) }
        if let (option, path) = paths.first(where: { $0.1.count > 1 }) {
            throw DecantError(
                .usage,
                "\(option): key path \(path.joined(separator: ".")) goes through a relationship; Decant follows such "
                    + "key paths only inside SQLite, for comparisons SQL makes exactly (no [c] or [d], LIKE or MATCHES)",
                at: Location(path: input.displayPath))
        }
        return (selecting, residual)
    }
}
