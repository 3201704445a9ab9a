public import Foundation

/// The one error type Decant throws: what went wrong, where, and what caused it.
///
/// ```swift
/// do { _ = try ModelBundle.load(from: url) }
/// catch let error as DecantError where error.code == .malformedInput { print(error) }
/// ```
///
/// `description` is one compiler-style line (`Notes.xcdatamodel/contents:12: malformed input: …`);
/// the underlying error, when there is one, is kept in ``underlyingError`` for verbose output.
public struct DecantError: Error, Sendable {
    /// A broad, stable classification that maps to a process exit code.
    public var code: Code
    /// What was expected and what was found, in one sentence without a trailing period.
    public var message: String
    /// Where in the input the problem is.
    public var location: Location?
    /// The lower-level error that caused this one, if any.
    public var underlyingError: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, at location: Location? = nil, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.location = location
        self.underlyingError = underlyingError
    }

    /// Returns a copy whose location is `location` where this error had none, or had no file.
    public func located(at location: Location) -> DecantError {
        var copy = self
        if var existing = copy.location {
            if existing.path == nil { existing.path = location.path }
            copy.location = existing
        } else {
            copy.location = location
        }
        return copy
    }
}

extension DecantError {
    /// A broad classification of errors. Adding a code is not a breaking change.
    public struct Code: Hashable, Sendable, CustomStringConvertible, CaseIterable {
        private enum Kind: Hashable, Sendable, CaseIterable {
            case fileNotFound, malformedInput, unsupportedFormat, modelMismatch, cannotCreateOutput, ioError,
                usage, internalError, planNotExecutable, validationFailed
        }

        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// Every code there is, so that a table keyed by code (the exit statuses, a test's) can be checked whole.
        public static var allCases: [Self] { Kind.allCases.map(Self.init) }

        /// An input file or folder does not exist.
        public static var fileNotFound: Self { Self(.fileNotFound) }
        /// The input exists but is not what it should be.
        public static var malformedInput: Self { Self(.malformedInput) }
        /// The input is a kind of file Decant recognises but cannot read (for example a store without `Z_MODELCACHE` given no model).
        public static var unsupportedFormat: Self { Self(.unsupportedFormat) }
        /// A store does not fit the model it was given.
        public static var modelMismatch: Self { Self(.modelMismatch) }
        /// An output file cannot be created.
        public static var cannotCreateOutput: Self { Self(.cannotCreateOutput) }
        /// Reading or writing failed below the format level.
        public static var ioError: Self { Self(.ioError) }
        /// The request itself is wrong (arguments that contradict each other).
        public static var usage: Self { Self(.usage) }
        /// Decant itself went wrong (a generated statement refused, counts that do not reconcile): a defect to
        /// report, not a problem with the input.
        public static var internalError: Self { Self(.internalError) }
        /// A migration plan cannot run (a change inference refuses, a mapping file that does not fit): the run found
        /// problems in what it was asked to do.
        public static var planNotExecutable: Self { Self(.planNotExecutable) }
        /// Objects break the destination model's rules (a required value that is nil, a value out of range).
        public static var validationFailed: Self { Self(.validationFailed) }

        public var description: String {
            switch kind {
            case .fileNotFound: "file not found"
            case .malformedInput: "malformed input"
            case .unsupportedFormat: "unsupported format"
            case .modelMismatch: "model mismatch"
            case .cannotCreateOutput: "cannot create output"
            case .ioError: "I/O error"
            case .usage: "usage"
            case .internalError: "internal error"
            case .planNotExecutable: "plan not executable"
            case .validationFailed: "validation failed"
            }
        }

        /// The sysexits code a command-line tool should exit with for this kind of error.
        public var exitCode: Int32 {
            switch kind {
            case .usage: 64
            case .malformedInput, .unsupportedFormat, .modelMismatch: 65
            case .fileNotFound: 66
            case .cannotCreateOutput: 73
            case .ioError: 74
            case .internalError: 70
            case .planNotExecutable, .validationFailed: 1
            }
        }

        /// Enables `catch DecantError.Code.malformedInput { … }`.
        public static func ~= (code: Self, error: any Error) -> Bool {
            (error as? DecantError)?.code == code
        }
    }
}

extension DecantError: CustomStringConvertible, LocalizedError {
    public var description: String {
        (location.map { "\($0): " } ?? "") + "\(code): \(message)"
    }

    public var errorDescription: String? { description }
}
