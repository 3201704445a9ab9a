/// Which engine moved a migration's objects, as reports name it: `stream` (the record stream), a format's name for
/// its in-store engine (`sqlite`: SQL inside SQLite), or `none` (nothing to do).
///
/// ```swift
/// if report.engine == .inStore(format: "sqlite") { print("ran inside SQLite") }
/// ```
public enum MigrationEngineKind: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The record stream (``RecordStreamEngine``).
    case stream
    /// The in-store engine of the format of this name (``InStoreMigratingFormat``).
    case inStore(format: String)
    /// No engine ran: the store was already at the destination version, in place.
    case nothing

    /// The name reports give: `stream`, the format's name, or `none`.
    public var description: String {
        switch self {
        case .stream: "stream"
        case .inStore(let format): format
        case .nothing: "none"
        }
    }

    /// The engine a report names.
    public init(_ name: String) {
        switch name {
        case "stream": self = .stream
        case "none": self = .nothing
        default: self = .inStore(format: name)
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
