public import DecantCore
import DecantFormats
public import DecantSQLite
public import Foundation
public import Logging

/// `decant convert` for Core Data SQLite stores: copies every object of a store into a new store of the same
/// model version through the record stream (the path migrations use), and reconciles the counts.
///
/// ```swift
/// let report = try StoreConversion.convert(from: input, to: output, bundle: nil)
/// print(report.written)
/// ```
public enum StoreConversion: Sendable {
    /// What a conversion did.
    public struct Report: Sendable, Hashable, Codable {
        /// The model version used (`Z_MODELCACHE` when the store's own cache was used).
        public var modelVersion: String
        /// Objects read per entity.
        public var read: [String: Int]
        /// Objects written per entity.
        public var written: [String: Int]
        /// The output path, as given.
        public var output: String
        /// What the run noticed and let pass: missing external files read under `keep` or `null`, derived
        /// attributes without a trigger, values the output cannot store.
        public var warnings: [Diagnostic]
    }

    /// Converts `input` into a new store at `output`.
    ///
    /// The model is the version of `bundle` whose hashes match the input, or without a bundle the input's
    /// `Z_MODELCACHE`. The output is written beside its destination and renamed into place when complete; on any
    /// error it is not created (an existing file there is left as it was).
    /// - Throws: ``DecantError``: `.usage` when input and output are the same file, `.modelMismatch` when no
    ///   version matches, the reader's and writer's errors otherwise, `.internalError` when the counts do not
    ///   reconcile.
    public static func convert(
        from input: URL, to output: URL, bundle: ModelBundle?, journalMode: SQLiteStoreWriter.JournalMode = .wal,
        missingExternalData: MissingExternalDataPolicy = .fail, logger: Logger = Logger(label: "decant.convert")
    ) throws -> Report {
        guard input.standardizedFileURL.resolvingSymlinksInPath() != output.standardizedFileURL.resolvingSymlinksInPath()
        else {
            throw DecantError(
                .usage, "the output must be a different file from the input", at: Location(path: output.displayPath))
        }
        let store = try SQLiteStore(contentsOf: input)
        let model = try store.resolveModel(bundle: bundle)
        logger.debug(
            "Model resolved",
            metadata: [
                "store.path": "\(input.displayPath)", "model.version": "\(model.versionName ?? "Z_MODELCACHE")",
                "store.framework": "\(store.metadata.frameworkVersion ?? 0)",
            ])
        var reader = try SQLiteStoreReader(store: store, model: model, missingExternalData: missingExternalData)
        var writer = try SQLiteStoreWriter(creating: output, model: model, journalMode: journalMode)
        let transfer = try RecordTransfer.copy(from: &reader, to: &writer)
        for (entity, count) in transfer.written.sorted(by: { $0.key < $1.key }) {
            logger.debug("Entity copied", metadata: ["entity": "\(entity)", "records.written": "\(count)"])
        }
        guard transfer.isReconciled else {
            try? FileManager.default.removeItem(at: output)
            throw DecantError(
                .internalError,
                "objects read and written do not reconcile (read \(transfer.read), written \(transfer.written))",
                at: Location(path: output.displayPath))
        }
        return Report(
            modelVersion: model.versionName ?? "Z_MODELCACHE", read: transfer.read, written: transfer.written,
            output: output.displayPath, warnings: transfer.diagnostics)
    }
}
