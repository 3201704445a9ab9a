import Foundation

/// What a `--json` command prints on standard output when it fails: one JSON document (`schemas/error.schema.json`)
/// with the exit status, the error's code, the file and the place in it, the message and the cause. Every key is
/// always there; what the error does not know is `null`.
///
/// ```swift
/// let document = try ErrorDocument(error).jsonDocument()
/// ```
public struct ErrorDocument: Encodable, Sendable {
    /// Where in the file: only the parts the error knows.
    public struct Place: Encodable, Sendable {
        public var line: Int?
        public var column: Int?
        public var offset: Int?
        public var entity: String?
        public var object: String?
        public var key: String?
    }

    /// The process exit status the error maps to (DESIGN.md's sysexits codes, 1 for problems found).
    public var status: Int32
    /// The error's code as `description` spells it (`malformed input`, `file not found`, …).
    public var code: String
    /// The file as the user named it.
    public var file: String?
    /// The place in `file`, nil when the error knows none.
    public var place: Place?
    /// What was expected and what was found.
    public var message: String
    /// The lower-level error that caused this one.
    public var cause: String?

    /// The document for `error`.
    public init(_ error: DecantError) {
        status = error.code.exitCode
        code = error.code.description
        file = error.location?.path
        message = error.message
        cause = error.underlyingError.map { "\($0)" }
        if let location = error.location {
            let place = Place(
                line: location.line, column: location.column, offset: location.offset, entity: location.entity,
                object: location.object, key: location.keyPath)
            let known: [Any?] = [place.line, place.column, place.offset, place.entity, place.object, place.key]
            self.place = known.contains { $0 != nil } ? place : nil
        }
    }

    private enum CodingKeys: String, CodingKey {
        case status, code, file, place, message, cause
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(code, forKey: .code)
        try container.encode(file, forKey: .file)
        try container.encode(place, forKey: .place)
        try container.encode(message, forKey: .message)
        try container.encode(cause, forKey: .cause)
    }
}
