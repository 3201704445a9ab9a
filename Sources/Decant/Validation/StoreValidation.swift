public import DecantCore
public import Foundation

/// `decant validate`: checks every object of a store against the rules of the model version it matches
/// (``ModelValidator``): required values, minimum and maximum, patterns, uniqueness constraints, relationship counts
/// and dangling references.
///
/// ```swift
/// var options = StoreValidation.Options(bundle: notes)
/// options.rejects = URL(fileURLWithPath: "rejects.ndjson")
/// let report = try StoreValidation.validate(store: url, options: options)
/// print(report.failures)      // ["Note.title optional": 2]
/// ```
public enum StoreValidation: Sendable {
    /// What to validate with.
    public struct Options: Sendable {
        /// The model bundle (the store's version is found by hash); nil: the store's own model cache.
        public var bundle: ModelBundle?
        /// The input's format name; told by its content when nil.
        public var inputFormat: String?
        /// Reader settings; the bundle is set from ``bundle``.
        public var formatOptions = FormatOptions()
        /// Where failing objects are listed (NDJSON); without it (and without ``countsEveryFailure``) the first
        /// failure stops the run.
        public var rejects: URL?
        /// Whether every failing object is counted in the report, as with ``rejects``, but listed nowhere (what
        /// `decant validate --json` reports: the whole report, not the first failure).
        public var countsEveryFailure = false
        /// The formats.
        public var registry: FormatRegistry = .builtIn
        /// Where the sets that grow with the store (the identities seen, the values of uniqueness constraints) are
        /// kept: by default a store's primary keys and integer values as bits, up to 131,072 other keys each in
        /// memory and the rest in a temporary file (``SpillingKeySet``).
        public var keySets: KeySetFactory = .spilling()

        /// Options for `bundle`. A reference to an externally stored value whose file is missing is checked as the
        /// reference it is (``MissingExternalDataPolicy/keep``), and the report's warnings say so once.
        public init(bundle: ModelBundle?) {
            self.bundle = bundle
            self.formatOptions.missingExternalData = .keep
        }
    }

    /// What a validation found.
    public struct Report: Sendable, Hashable, Codable {
        /// The model version the store matched.
        public var modelVersion: String
        /// Objects checked per entity.
        public var objects: [String: Int]
        /// Failures per `Entity.property rule`.
        public var failures: [String: Int]
        /// The rejects file, when one was written.
        public var rejectsFile: String?
        /// What the run noticed and let pass (externally stored values whose file is missing, said once).
        public var warnings: [Diagnostic] = []

        /// Whether every object passed.
        public var isValid: Bool { failures.isEmpty }
    }

    /// Validates `store`.
    ///
    /// `progress`, when given, is called on the calling thread as objects pass, with their entity and the number of
    /// objects that passed so far in all.
    /// - Throws: `.validationFailed` for the first failing object when neither a rejects file nor
    ///   ``Options/countsEveryFailure`` is given; the reader's errors.
    public static func validate(
        store: URL, options: Options, progress: ((_ entity: String, _ checked: Int) -> Void)? = nil
    ) throws -> Report {
        let format = try options.registry.inputFormat(of: store, named: options.inputFormat)
        // The rejects file is checked before any object is read, not after the whole run.
        if let rejects = options.rejects { try DestinationLease.checkCanCreate(rejects) }
        var readerOptions = options.formatOptions
        readerOptions.bundle = options.bundle
        var reader = try format.makeReader(at: store, options: readerOptions)
        let model = reader.model
        var sink = DiscardingWriter()
        let transfer: TransferReport
        do {
            transfer = try RecordTransfer.copy(
                from: &reader,
                through: ValidationTransform(
                    model: model, collectsRejects: options.rejects != nil || options.countsEveryFailure,
                    dropsRejected: false,
                    keySets: options.keySets),
                to: &sink,
                progress: progress
            )
        } catch let error as DecantError {
            // An object's error names its entity and object; the file is the store, as the user typed it.
            throw error.located(at: Location(path: store.displayPath))
        }
        let found = transfer.rejects + transfer.findings
        var failures: [String: Int] = [:]
        for reject in found {
            failures["\(reject.entity)\(reject.property.map { ".\($0)" } ?? "") \(reject.rule)", default: 0] += 1
        }
        if let rejects = options.rejects { try StoreMigration.writeRejects(found, to: rejects) }
        return Report(
            modelVersion: model.versionName ?? "Z_MODELCACHE",
            objects: transfer.read,
            failures: failures,
            rejectsFile: options.rejects?.displayPath,
            warnings: transfer.diagnostics.collapsingMissingExternalData()
        )
    }
}
