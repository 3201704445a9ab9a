public import DecantCore
import Foundation

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
                        readerDiagnostics: reader.diagnostics + (try store.strayRowDiagnostics())))
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
        /// What reading the store noticed (a model cache that cannot be decoded, rows with a stray `Z_ENT`), reported
        /// as the stream reports it.
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
            let outcome: Outcome
            do {
                outcome = try migration.run(into: writer, progress: progress)
            } catch {
                writer.abandon()
                throw error
            }
            switch outcome {
            case .migrated(let counts):
                try writer.finish()
                return .migrated(
                    MigrationResult(
                        engine: engine, read: counts.read, written: counts.written, ledgers: counts.ledgers,
                        warnings: readerDiagnostics))
            case .needsRecordStream(let reason):
                writer.abandon()
                return .declined(reason)
            }
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
