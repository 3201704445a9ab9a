public import Foundation

/// A way of running a ``MigrationPlan``: prepared against the plan, the reader of the store to migrate and the format
/// of the output, it is ready to run or declines with a typed reason.
///
/// Two kinds exist: the record stream (``RecordStreamEngine``), which runs every plan into any format, and a format's
/// own fast path (``InStoreMigratingFormat``), which runs inside a store of that format and takes only the plans it can
/// run there. A migration asks the output format's fast path first and runs the record stream when it declines.
///
/// ```swift
/// switch try engine.prepare(plan: plan, reader: reader, sink: sink) {
/// case .ready(let migration):
///     if case .migrated(let result) = try migration.run(into: output, progress: nil) { print(result.written) }
/// case .declined(let reason):
///     print("the record stream runs it: \(reason)")
/// }
/// ```
public protocol MigrationEngine {
    /// Whether this engine runs `plan` for the store `reader` reads into an output in `sink`, and if so, how.
    /// - Throws: what reading the store to decide throws when it is an error of its own (a disk that fails): a plan
    ///   the engine does not take is declined, never thrown.
    func prepare(plan: MigrationPlan, reader: any RecordReader, sink: any RecordFormat) throws -> MigrationPreparation
}

/// An engine's answer to a plan (``MigrationEngine/prepare(plan:reader:sink:)``).
public enum MigrationPreparation {
    /// It runs the plan.
    case ready(any PreparedMigration)
    /// It does not; the record stream runs the plan, for this reason.
    case declined(StreamReason)
}

/// A migration an engine is ready to run.
public protocol PreparedMigration {
    /// The engine that runs it, as the report names it.
    var engine: MigrationEngineKind { get }
    /// Writes the migrated store, a new output, at `destination` and gives what the run did. `progress` is called as
    /// objects are written, with their entity and the number of objects written so far.
    ///
    /// `.declined` means the engine gave up on the way (a row that may break a rule, for the record stream to name):
    /// nothing is left at `destination`.
    /// - Throws: the reader's and the writer's errors, with their kind (a full disk stays `.ioError`); nothing is left
    ///   at `destination` then either.
    func run(into destination: URL, progress: ((_ entity: String, _ written: Int) -> Void)?) throws
        -> MigrationRunOutcome
}

/// What running a prepared migration gave.
public enum MigrationRunOutcome: Sendable {
    /// The output is complete.
    case migrated(MigrationResult)
    /// The engine gave up and left nothing; the record stream runs the plan, for this reason.
    case declined(StreamReason)
}

/// What one migration run did, whatever engine ran it.
///
/// ```swift
/// let result = try RecordStreamEngine(settings: settings) { store.makeReader() }
///     .migrate(plan, from: &reader, into: &writer)
/// print(result.written, result.rejects.count)
/// ```
public struct MigrationResult: Sendable, Hashable {
    /// The engine that ran it.
    public var engine: MigrationEngineKind
    /// Objects read per source entity.
    public var read: [String: Int]
    /// Objects written per destination entity.
    public var written: [String: Int]
    /// Per hop, per entity: read, written, rejected, removed, created.
    public var ledgers: [MigrationLedger]
    /// Objects rejected (with ``MigrationSettings/collectsRejects``).
    public var rejects: [Reject]
    /// References to objects that do not exist, in objects that were written.
    public var findings: [Reject]
    /// What the run noticed and let pass.
    public var warnings: [Diagnostic]

    /// Creates a result.
    public init(
        engine: MigrationEngineKind, read: [String: Int], written: [String: Int], ledgers: [MigrationLedger],
        rejects: [Reject] = [], findings: [Reject] = [], warnings: [Diagnostic] = []
    ) {
        self.engine = engine
        self.read = read
        self.written = written
        self.ledgers = ledgers
        self.rejects = rejects
        self.findings = findings
        self.warnings = warnings
    }
}

/// What every engine runs a plan with.
public struct MigrationSettings: Sendable {
    /// The functions value expressions may call, and the migration policies.
    public var functions: ValueExpressionFunctions
    /// Where the sets that grow with the store (the objects a hop removes) are kept.
    public var keySets: KeySetFactory
    /// Whether a violation an object already had at the source version stops the run (or rejects the object) too.
    public var strict: Bool
    /// Whether objects that break a rule are rejected (listed, the run goes on) rather than stopping the run.
    public var collectsRejects: Bool
    /// The settings of the output's writer.
    public var writerOptions: FormatOptions

    /// Settings; by default as Core Data's lightweight migration runs (violations the source had are carried over)
    /// and the first object that breaks a rule stops the run.
    public init(
        functions: ValueExpressionFunctions = ValueExpressionFunctions(),
        keySets: KeySetFactory = .inMemory,
        strict: Bool = false,
        collectsRejects: Bool = false,
        writerOptions: FormatOptions = FormatOptions()
    ) {
        self.functions = functions
        self.keySets = keySets
        self.strict = strict
        self.collectsRejects = collectsRejects
        self.writerOptions = writerOptions
    }
}

@available(*, unavailable)
extension MigrationPreparation: Sendable {}
