public import Foundation

/// Something a run noticed and let pass: it goes to standard error as a warning and into `--json` reports.
///
/// ```swift
/// let note = Diagnostic(.missingExternalData, "externally stored value kept as a reference",
///                       at: Location(path: "Notes.sqlite", entity: "Note", object: "Note/p3", keyPath: "image"))
/// print(note)   // warning: Notes.sqlite: entity Note, object Note/p3, key image: externally stored value …
/// ```
public struct Diagnostic: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of thing was noticed; a stable name for scripts reading `--json`.
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An externally stored value's file is missing; the value was kept as a reference or written as nil.
        public static let missingExternalData = Kind(rawValue: "missing-external-data")
        /// A derived attribute whose derivation Decant cannot express as a trigger: values are copied as
        /// stored and not kept up to date by the store.
        public static let unsupportedDerivation = Kind(rawValue: "unsupported-derivation")
        /// References to objects a selection (`--entity`, `--where`) left out; written as nil.
        public static let leftOutReference = Kind(rawValue: "left-out-reference")
        /// A property the destination cannot store (no column for it); its values are not written.
        public static let unstoredProperty = Kind(rawValue: "unstored-property")
        /// Objects that broke a rule of the destination model, and already broke it in the source: a lightweight
        /// migration carries them over, as Core Data's does.
        public static let preexistingViolation = Kind(rawValue: "preexisting-violation")
        /// A store's model cache (`Z_MODELCACHE`) that cannot be decoded, in a run given the model: not needed.
        public static let unreadableModelCache = Kind(rawValue: "unreadable-model-cache")
        /// Rows of a store table whose `Z_ENT` names no entity Core Data fetches from that table there: read as the
        /// table's one entity (an entity without sub-entities, whose fetches do not read `Z_ENT`), or, in a table
        /// an entity shares with its sub-entities, left out as Core Data's fetches leave them (section 1.9).
        public static let strayEntityNumber = Kind(rawValue: "stray-entity-number")
        /// A `--where` comparison between an attribute and a constant of another kind (text and number): it matches
        /// no object.
        public static let selectionMatchesNothing = Kind(rawValue: "where-matches-nothing")
        /// Links a migration's mapping set only on a to-many side, to objects made from other source objects,
        /// whose inverse to-one (the column a SQLite store keeps a one-to-many in) was left nil: not stored there.
        public static let oneSidedLink = Kind(rawValue: "one-sided-link")
        /// Staged files of a run whose process is gone (killed, crashed), found beside the destination and removed.
        public static let deadRunLeftovers = Kind(rawValue: "dead-run-leftovers")
    }

    /// What kind of thing was noticed.
    public var kind: Kind
    /// What happened, in one sentence without a trailing period.
    public var message: String
    /// Where.
    public var location: Location?
    /// The file involved besides the input itself (an external-data file), as looked for.
    public var file: String?

    /// Creates a diagnostic.
    public init(_ kind: Kind, _ message: String, at location: Location? = nil, file: String? = nil) {
        self.kind = kind
        self.message = message
        self.location = location
        self.file = file
    }

    public var description: String {
        "warning: " + (location.map { "\($0): " } ?? "") + message
    }

    /// The diagnostic with `file` as its location's path, where it names none.
    public func located(at file: URL) -> Diagnostic {
        var copy = self
        var location = copy.location ?? Location()
        if location.path == nil { location.path = file.displayPath }
        copy.location = location
        return copy
    }
}
