public import DecantCore
public import Foundation
public import Logging

/// `decant convert`: copies every object of an input into a new output of the same model version through the
/// record pipeline, in any pair of registered formats, and reconciles the counts.
///
/// ```swift
/// let report = try StoreConversion.convert(from: input, to: output, options: FormatOptions(bundle: notes))
/// print(report.written)
/// ```
public enum StoreConversion: Sendable {
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
        /// The output path, as given.
        public var output: String
        /// What the run noticed and let pass: missing external files read under `keep` or `null`, derived
        /// attributes without a trigger, values the output cannot store.
        public var warnings: [Diagnostic]
    }

    /// Converts `input` into a new output at `output`.
    ///
    /// The input format is `inputFormat` or told by the input's content and extension; the output format is
    /// `outputFormat` or told by the output's extension, a SQLite store by default. The model is the one the input
    /// matches (a store's hashes against `options.bundle`, or its own `Z_MODELCACHE`), or for model-less inputs
    /// `options.version` of the bundle. The output is built beside its destination and moved into place when
    /// complete; on any error it is not created (an existing file there is left as it was).
    /// - Throws: ``DecantError``: `.usage` when input and output are the same file or a format name is unknown,
    ///   `.modelMismatch` when no version matches, the reader's and writer's errors otherwise, `.internalError`
    ///   when the counts do not reconcile.
    public static func convert(
        from input: URL, to output: URL, inputFormat: String? = nil, outputFormat: String? = nil,
        options: FormatOptions = FormatOptions(), registry: FormatRegistry = .builtIn,
        logger: Logger = Logger(label: "decant.convert")
    ) throws -> Report {
        guard input.standardizedFileURL.resolvingSymlinksInPath() != output.standardizedFileURL.resolvingSymlinksInPath()
        else {
            throw DecantError(
                .usage, "the output must be a different file from the input", at: Location(path: output.displayPath))
        }
        let source = try registry.inputFormat(of: input, named: inputFormat)
        let sink = try registry.outputFormat(for: output, named: outputFormat, fallback: "sqlite")
        var reader = try source.makeReader(at: input, options: options)
        let model = reader.model
        logger.debug(
            "Model resolved",
            metadata: [
                "input.path": "\(input.displayPath)", "input.format": "\(source.name)",
                "output.format": "\(sink.name)", "model.version": "\(model.versionName ?? "Z_MODELCACHE")",
            ])
        var writer = try sink.makeWriter(at: output, model: model, options: options)
        let transfer = try RecordTransfer.copy(from: &reader, to: &writer)
        for (entity, count) in transfer.written.sorted(by: { $0.key < $1.key }) {
            logger.debug("Entity copied", metadata: ["entity": "\(entity)", "records.written": "\(count)"])
        }
        guard transfer.isReconciled else {
            throw DecantError(
                .internalError,
                "objects read and written do not reconcile (read \(transfer.read), written \(transfer.written))",
                at: Location(path: output.displayPath))
        }
        return Report(
            inputFormat: source.name, outputFormat: sink.name, modelVersion: model.versionName ?? "Z_MODELCACHE",
            read: transfer.read, written: transfer.written, output: output.displayPath, warnings: transfer.diagnostics)
    }
}
