public import DecantCore
import Foundation
import Synchronization

/// A SQLite store migrates into a new SQLite store inside SQLite (``InStoreMigration``), as Core Data's lightweight
/// migration does, for the plans SQL can run; the record stream runs the others.
extension SQLiteFormat: InStoreMigratingFormat {
    public var inStoreEngineName: String { "SQLite" }
    public var inStoreRunNote: String? { "run inside SQLite, as Core Data's lightweight migration does (INSERT … SELECT)" }
    public var inStorePlanNote: String? {
        "into a SQLite store, runs inside SQLite, as Core Data's lightweight migration does"
    }

    public func inStoreEngine(_ settings: MigrationSettings) -> any MigrationEngine {
        InStoreMigration.Engine(format: self, settings: settings)
    }
}

extension InStoreMigration {
    /// ``InStoreMigration`` as a ``MigrationEngine``: ready for the plans ``prepare(plan:reader:functions:)`` takes
    /// of a store a ``SQLiteStoreReader`` reads, each run into a new store ``SQLiteFormat`` writes.
    struct Engine: MigrationEngine {
        let format: SQLiteFormat
        let settings: MigrationSettings

        func prepare(plan: MigrationPlan, reader: any RecordReader, sink: any RecordFormat) throws
            -> MigrationPreparation
        {
            guard let store = reader as? SQLiteStoreReader else {
                return .declined(.planNotSupported("the store is not read as a SQLite store"))
            }
            switch try InStoreMigration.prepare(plan: plan, reader: store, functions: settings.functions) {
            case .ready(let migration):
                return .ready(
                    Prepared(
                        migration: migration, format: format, plan: plan, options: settings.writerOptions,
                        reader: store, readerDiagnostics: reader.diagnostics))
            case .needsRecordStream(let reason):
                return .declined(reason)
            }
        }
    }

    /// A plan ready to run inside SQLite.
    struct Prepared: PreparedMigration {
        let migration: InStoreMigration
        let format: SQLiteFormat
        let plan: MigrationPlan
        let options: FormatOptions
        /// The store's reader, whose rows with a stray `Z_ENT` are surveyed while the rows go in.
        let reader: SQLiteStoreReader
        /// What reading the store noticed (a model cache that cannot be decoded), reported as the stream reports it,
        /// with the rows that have a stray `Z_ENT` after them.
        let readerDiagnostics: [Diagnostic]

        var engine: MigrationEngineKind { .inStore(format: format.name) }

        func run(into destination: URL, progress: ((_ entity: String, _ written: Int) -> Void)?) throws
            -> MigrationRunOutcome
        {
            var made = try format.makeWriter(at: destination, model: plan.destination, options: options)
            guard let writer = made as? SQLiteStoreWriter else {
                made.abandon()
                throw DecantError(.internalError, "the SQLite format made a writer of another store")
            }
            // Rows with a stray `Z_ENT`: a table a statement takes whole counts them as its rows go in; any other is
            // surveyed (a pass over the table, on the reader's own connection) on the other core while this one
            // copies the rows. Nothing else uses the reader until the survey is waited for.
            let lent = LentStoreReader(reader)
            let counting = migration.tablesCountingStrayRows
            let others = Set(reader.schema.entities.map(\.tableName)).subtracting(counting)
            let strays = OffThread { others.isEmpty ? [:] : try lent.reader.strayRowDiagnostics(surveying: others) }
            let outcome: Outcome
            do {
                outcome = try migration.run(into: writer, progress: progress)
            } catch {
                _ = try? strays.value()
                writer.abandon()
                throw error
            }
            switch outcome {
            case .migrated(let counts):
                let strayDiagnostics: [Diagnostic]
                do {
                    let surveyed = try strays.value()
                    let counted = try reader.strayRowDiagnostics(
                        surveying: [], counted: counts.strayRows.mapValues { ($0.count, $0.keys) })
                    // Every table in one list, in the order of their names, as the reader's survey gives them.
                    strayDiagnostics = surveyed.merging(counted) { first, _ in first }.sorted { $0.key < $1.key }
                        .map(\.value)
                } catch {
                    writer.abandon()
                    throw error
                }
                try writer.finish()
                return .migrated(
                    MigrationResult(
                        engine: engine, read: counts.read, written: counts.written, ledgers: counts.ledgers,
                        warnings: readerDiagnostics + strayDiagnostics))
            case .needsRecordStream(let reason):
                _ = try? strays.value()
                writer.abandon()
                return .declined(reason)
            }
        }
    }

    /// A store reader lent to one other thread: between the thread's start and the wait for its value, only that
    /// thread uses it (its connection serializes every use anyway).
    private final class LentStoreReader: @unchecked Sendable {
        let reader: SQLiteStoreReader
        init(_ reader: SQLiteStoreReader) { self.reader = reader }
    }

    /// Work run on a thread of its own from the start; ``value()`` waits for it and gives its result.
    private final class OffThread<Value: Sendable>: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let outcome = Mutex<Result<Value, any Error>?>(nil)

        init(_ work: @escaping @Sendable () throws -> Value) {
            let thread = Thread { [self] in
                let result = Result { try work() }
                outcome.withLock { $0 = result }
                done.signal()
            }
            thread.start()
        }

        /// The work's result, once it is done (waiting for it); its error, rethrown.
        func value() throws -> Value {
            done.wait()
            done.signal()  // A second wait returns at once.
            guard let result = outcome.withLock({ $0 }) else {
                throw DecantError(.internalError, "a survey of the store ended without a result")
            }
            return try result.get()
        }
    }
}

/// A SQLite store counts a dry run's rejects with SQL
/// (``InStoreMigration/preflightCounts(plan:reader:functions:strict:)``) for the plans whose counts SQL tells exactly;
/// the record stream counts the others.
extension SQLiteFormat: InStoreCountingFormat {
    public func preflightCounts(plan: MigrationPlan, reader: any RecordReader, settings: MigrationSettings) throws
        -> PreflightCounts?
    {
        guard let store = reader as? SQLiteStoreReader else { return nil }
        return try InStoreMigration.preflightCounts(
            plan: plan, reader: store, functions: settings.functions, strict: settings.strict)
    }
}
