/// Why a hop cannot run as planned: the entity and property concerned, what is wrong, and what to write in a
/// mapping file instead.
///
/// ```swift
/// print(problem)   // Note.count: Integer 64 → String is not inferred; in a mapping file write …
/// ```
public struct MigrationProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The entity concerned (destination, or source for a removed entity).
    public var entity: String
    /// The property concerned, if one.
    public var property: String?
    /// What is wrong.
    public var message: String
    /// What to write instead, when a mapping file can fix it.
    public var advice: String?
    /// The mapping file and line, when the problem is in one.
    public var location: Location?
    /// Whether the problem is a mistake in what a mapping file says (a property, entity or entry it names that the
    /// models do not have, a `$source` where there is none, a fetch that does not parse), found from the file and
    /// the models alone: reported when the file is read (exit 65 at its line), as a misspelt key is.
    public var isMappingFileMistake = false

    private enum CodingKeys: String, CodingKey {
        case entity, property, message, advice, location
    }

    /// Creates a problem.
    public init(
        entity: String,
        property: String? = nil,
        message: String,
        advice: String? = nil,
        location: Location? = nil,
        isMappingFileMistake: Bool = false
    ) {
        self.entity = entity
        self.property = property
        self.message = message
        self.advice = advice
        self.location = location
        self.isMappingFileMistake = isMappingFileMistake
    }

    public var description: String {
        var text = (location.map { "\($0): " } ?? "") + entity + (property.map { ".\($0)" } ?? "") + ": " + message
        if let advice { text += "; " + advice }
        return text
    }
}
