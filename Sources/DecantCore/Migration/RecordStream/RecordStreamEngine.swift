import Foundation

/// The record-stream engine: runs any ``MigrationPlan`` into any format, object by object through the record
/// pipeline. It owns its passes: the graphs the hops' key paths and fetches read (``SourceGraph``), the objects the
/// hops remove with their delete rules (``DeleteRules``), then one streaming pass through the transform
/// (``MigrationTransform``: the hops, both sides of links, validation), with the removals' lookups checked and the
/// counts reconciled at the end. Each hop is compiled once for all of them.
///
/// It runs on any reader and writer, the in-memory store's included:
///
/// ```swift
/// let engine = RecordStreamEngine(settings: MigrationSettings()) { source.makeReader() }
/// var reader = source.makeReader()
/// var writer = InMemoryStore.Writer(model: plan.destination)
/// let result = try engine.migrate(plan, from: &reader, into: &writer)
/// print(result.written, writer.store.counts)
/// ```
public struct RecordStreamEngine: MigrationEngine {
    /// What the plan runs with.
    public var settings: MigrationSettings
    /// Whether the objects of a plan already at its destination are checked against its rules too (a dry run's count
    /// of what would be rejected); by default they are copied as they are, unchecked.
    public var checksUpToDateObjects = false
    /// Opens a new reader of the source, for the passes before the run.
    private let makeReader: () throws -> any RecordReader

    /// The engine with `settings`; `makeReader` opens the source again for each pass over it before the run.
    public init(settings: MigrationSettings, makeReader: @escaping () throws -> any RecordReader) {
        self.settings = settings
        self.makeReader = makeReader
    }

    /// Always ready: the record stream runs every plan that can run.
    public func prepare(plan: MigrationPlan, reader: any RecordReader, sink: any RecordFormat) throws
        -> MigrationPreparation
    {
        .ready(Prepared(engine: self, plan: plan, reader: reader, sink: sink))
    }

    /// Migrates what `reader` reads to `plan`'s destination version into `writer`, and finishes it (a plan already at
    /// its destination copies the objects as they are).
    /// - Throws: `.planNotExecutable` with every problem of the plan, or for objects a Deny rule protects;
    ///   `.validationFailed` for the first object that breaks a rule unless ``MigrationSettings/collectsRejects``; the
    ///   reader's and writer's errors (the writer is abandoned); `.internalError` when the counts do not reconcile.
    public func migrate(
        _ plan: MigrationPlan,
        from reader: inout some RecordReader,
        into writer: inout some RecordWriter,
        progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> MigrationResult {
        let (transform, removals) = try passes(for: plan)
        let transfer = try RecordTransfer.copy(from: &reader, through: transform, to: &writer, progress: progress)
        for removed in removals { try removed.checkLookups() }
        let ledgers = transform?.ledgers ?? []
        try Self.requireReconciled(transfer, ledgers: ledgers)
        return MigrationResult(
            engine: .stream,
            read: transfer.read,
            written: transfer.written,
            ledgers: ledgers,
            rejects: transfer.rejects,
            findings: transfer.findings,
            warnings: transfer.diagnostics.collapsingMissingExternalData()
        )
    }

    /// Checks that every object is accounted for: per entity, the transfer's read + created = written + rejected +
    /// removed + filtered out, and the same in every hop's ledger. No input reaches a failure (every path of the
    /// transform counts what it does); a failure is a defect of Decant's, so the run must not end as if it succeeded.
    /// - Throws: `.internalError` naming the counts when they do not reconcile.
    static func requireReconciled(_ transfer: TransferReport, ledgers: [MigrationLedger]) throws {
        guard transfer.isReconciled, ledgers.allSatisfy(\.isReconciled) else {
            throw DecantError(
                .internalError,
                "the counts do not reconcile (read \(transfer.read), written \(transfer.written), per hop "
                    + "\(ledgers.map { "\($0.hop): \($0.rows)" }))"
            )
        }
    }

    /// The transform that runs `plan` (none when it is at its destination already), after the passes over the source
    /// it needs first, and the hops' removals, whose lookups are checked after the run. Every hop is compiled once.
    private func passes(for plan: MigrationPlan) throws -> (MigrationTransform?, [RemovedObjects]) {
        if plan.isUpToDate && !checksUpToDateObjects { return (nil, []) }
        try MigrationTransform.requireExecutable(plan)
        var hops = plan.hops.map { CompiledHop(hop: $0, functions: settings.functions) }
        try SourceGraph.collect(into: &hops, makeReader: makeReader)
        try DeleteRules.removals(into: &hops, plan: plan, keySets: settings.keySets, makeReader: makeReader)
        try OwedLinks.collect(into: &hops, plan: plan, keySets: settings.keySets, makeReader: makeReader)
        let transform = MigrationTransform(
            plan: plan,
            compiled: hops,
            collectsRejects: settings.collectsRejects,
            validates: true,
            keySets: settings.keySets,
            strict: settings.strict
        )
        return (transform, hops.map(\.removedObjects))
    }

    /// A plan the record stream is ready to run into a new output of `sink`.
    private struct Prepared: PreparedMigration {
        let engine: MigrationEngineKind = .stream
        let stream: RecordStreamEngine
        let plan: MigrationPlan
        let reader: any RecordReader
        let sink: any RecordFormat

        init(engine: RecordStreamEngine, plan: MigrationPlan, reader: any RecordReader, sink: any RecordFormat) {
            self.stream = engine
            self.plan = plan
            self.reader = reader
            self.sink = sink
        }

        func run(into destination: URL, progress: ((_ entity: String, _ written: Int) -> Void)?) throws
            -> MigrationRunOutcome
        {
            var reader = self.reader
            var writer = try sink.makeWriter(
                at: destination, model: plan.destination, options: stream.settings.writerOptions)
            do {
                return .migrated(try stream.migrate(plan, from: &reader, into: &writer, progress: progress))
            } catch {
                writer.abandon()
                throw error
            }
        }
    }
}

@available(*, unavailable)
extension RecordStreamEngine: Sendable {}
