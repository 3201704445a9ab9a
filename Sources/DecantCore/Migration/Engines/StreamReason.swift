/// Why a migration ran through the record stream rather than inside its store (``InStoreMigratingFormat``): what an
/// in-store engine declined for, or what made it give up. Reports spell it as its ``description``.
///
/// ```swift
/// if case .mayBreakRule(let why) = report.streamReason { print("the stream names the objects: \(why)") }
/// ```
public enum StreamReason: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Running inside the store is turned off (`runsInStoreWhenPossible`); the engine's name (`SQLite`).
    case inStoreTurnedOff(engine: String)
    /// The plan asks for what the in-store engine does not do (a filter, a policy, a derived value, …): what.
    case planNotSupported(String)
    /// The source store does not fit what the in-store engine expects of it (rows of no entity, a table that does not
    /// match its model): the record stream reads it object by object and names what is wrong.
    case storeDoesNotFit(String)
    /// Rows written inside the store may break a rule of the destination model: the record stream names the objects
    /// (and lists rejects).
    case mayBreakRule(String)
    /// The dry run found objects that break a rule of the destination model.
    case dryRunFoundViolations

    /// The reason in words, as reports give it.
    public var description: String {
        switch self {
        case .inStoreTurnedOff(let engine): "running inside \(engine) is turned off"
        case .planNotSupported(let text), .storeDoesNotFit(let text), .mayBreakRule(let text): text
        case .dryRunFoundViolations: "the dry run found objects that break a rule of the destination model"
        }
    }

    /// The reason a report gives in words: those of a fixed wording are told apart, any other is a plan the engine
    /// did not take.
    public init(_ text: String) {
        if text == StreamReason.dryRunFoundViolations.description {
            self = .dryRunFoundViolations
        } else if text.hasPrefix("running inside "), text.hasSuffix(" is turned off") {
            self = .inStoreTurnedOff(
                engine: String(text.dropFirst("running inside ".count).dropLast(" is turned off".count)))
        } else {
            self = .planNotSupported(text)
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
