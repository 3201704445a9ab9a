public import DecantCore
import DecantCodecs

/// The settings of keyed-archive input: which entity each archived class becomes and which coder keys fill which
/// property (the `--class` and `--class-mapping` of the command line; ``ArchiveMapping`` reads the mapping file).
///
/// ```swift
/// var options = FormatOptions(bundle: notes, version: "Notes")
/// options.archive.classEntities = ["LegacyNote": "Note"]
/// options.archive.classKeys = ["LegacyNote": ["body": "content"]]
/// ```
public struct ArchiveOptions: FormatSpecificOptions {
    /// Per archived class name, the entity its objects become; the empty name leaves the class out. Classes not
    /// listed become the entity of the same name (the whole class name or the part after its last `.`).
    public var classEntities: [String: String] = [:]
    /// Per archived class name, coder keys renamed to the property they fill, for keys the name rules (exact, any
    /// case, snake_case) do not find.
    public var classKeys: [String: [String: String]] = [:]

    /// No classes mapped: each class becomes the entity of its name.
    public init() {}
}

extension FormatOptions {
    /// The settings of keyed-archive input.
    public var archive: ArchiveOptions {
        get { self[ArchiveOptions.self] }
        set { self[ArchiveOptions.self] = newValue }
    }
}
