public import DecantCore

/// What `decant infer-mapping --json` prints: which hop was inferred, where its mapping file was written, and what
/// inference refused (the command exits 1 when that is not empty).
public struct InferredMappingDocument: Codable, Sendable, Hashable {
    /// The source version's name.
    public var source: String
    /// The destination version's name.
    public var destination: String
    /// The mapping file, as given with `--output`.
    public var output: String
    /// `yaml` or `json`.
    public var format: String
    /// How many entity mappings the file holds.
    public var entityMappings: Int
    /// What inference cannot do: the file leaves these properties without a value, to be written by hand.
    public var problems: [MigrationProblem]

    public init(
        source: String, destination: String, output: String, format: String, result: MappingInference.Result
    ) {
        self.source = source
        self.destination = destination
        self.output = output
        self.format = format
        entityMappings = result.mapping.entityMappings.count
        problems = result.problems
    }
}
