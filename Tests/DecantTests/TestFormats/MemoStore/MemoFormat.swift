import Decant
import Foundation

/// A format that exists only in the tests, to show the shape of adding a format with an in-store fast path: this one
/// folder, registered in a ``FormatRegistry``, and nothing changed in ``StoreMigration`` or ``Seeding``.
///
/// A memo store is an NDJSON document under its own name and extension (`.memo`). Its fast path loads the whole store
/// into memory, migrates it there and writes it out whole (a small store has no need of streaming); `fastPath` makes
/// it decline a plan or fail as a disk would, for the tests of both.
struct MemoFormat: InStoreMigratingFormat {
    /// What the fast path does with the plans it is asked about.
    enum FastPath: Sendable {
        /// Runs every plan.
        case runs
        /// Declines every plan, for this reason.
        case declines(String)
        /// Runs, writes part of the output, then fails as a full disk does.
        case failsAsAFullDisk
    }

    let name = "memo"
    let fileExtensions = ["memo"]
    var fastPath: FastPath = .runs

    func recognizes(_ probe: FormatProbe) -> Bool {
        !probe.isDirectory && probe.url.pathExtension.lowercased() == "memo"
    }

    func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try NDJSONFormat().makeReader(at: url, options: options)
    }

    func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try NDJSONFormat().makeWriter(at: url, model: model, options: options)
    }

    var inStoreEngineName: String { "the memo store" }

    func inStoreEngine(_ settings: MigrationSettings) -> any MigrationEngine {
        MemoEngine(format: self, settings: settings)
    }
}

/// The memo store's fast path.
struct MemoEngine: MigrationEngine {
    let format: MemoFormat
    let settings: MigrationSettings

    func prepare(plan: MigrationPlan, reader: any RecordReader, sink: any RecordFormat) throws -> MigrationPreparation {
        if case .declines(let reason) = format.fastPath { return .declined(.planNotSupported(reason)) }
        return .ready(Run(format: format, settings: settings, plan: plan, reader: reader))
    }

    struct Run: PreparedMigration {
        let format: MemoFormat
        let settings: MigrationSettings
        let plan: MigrationPlan
        let reader: any RecordReader

        var engine: MigrationEngineKind { .inStore(format: format.name) }

        func run(into destination: URL, progress: ((_ entity: String, _ written: Int) -> Void)?) throws
            -> MigrationRunOutcome
        {
            // The whole store, in memory.
            var source = reader
            var loaded = InMemoryStore.Writer(model: source.model)
            _ = try RecordTransfer.copy(from: &source, to: &loaded)
            let store = loaded.store
            // Migrated there, by the record stream's passes over the loaded store.
            let stream = RecordStreamEngine(settings: settings) { store.makeReader() }
            var records = store.makeReader()
            var migrated = InMemoryStore.Writer(model: plan.destination)
            var result = try stream.migrate(plan, from: &records, into: &migrated)
            result.engine = engine
            // Written out whole.
            var out = try format.makeWriter(at: destination, model: plan.destination, options: settings.writerOptions)
            if case .failsAsAFullDisk = format.fastPath {
                try Data("{\"partial\": true}\n".utf8).write(to: destination)
                out.abandon()
                throw DecantError(.ioError, "no space left on the device", at: Location(path: destination.displayPath))
            }
            var written = migrated.store.makeReader()
            _ = try RecordTransfer.copy(from: &written, to: &out, progress: progress)
            return .migrated(result)
        }
    }
}
