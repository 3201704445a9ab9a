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

    /// Creates a problem.
    public init(
        entity: String,
        property: String? = nil,
        message: String,
        advice: String? = nil,
        location: Location? = nil
    ) {
        self.entity = entity
        self.property = property
        self.message = message
        self.advice = advice
        self.location = location
    }

    public var description: String {
        var text = (location.map { "\($0): " } ?? "") + entity + (property.map { ".\($0)" } ?? "") + ": " + message
        if let advice { text += "; " + advice }
        return text
    }
}
