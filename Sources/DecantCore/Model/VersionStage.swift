/// A step from one version of a model to the next that the model's own source declares: a SwiftData
/// `SchemaMigrationPlan`'s `MigrationStage`. Bundles read from Xcode models have none (Core Data infers each
/// step, or a mapping model gives it).
///
/// ```swift
/// let stage = VersionStage(from: "V1", to: "V2", kind: .lightweight)
/// ```
public struct VersionStage: Sendable, Hashable {
    /// The version the stage starts from (a ``ObjectModel/versionName``).
    public var from: String
    /// The version the stage ends at.
    public var to: String
    /// What the stage does.
    public var kind: Kind
    /// Where the source declares the stage (file and line), when it came from a source file.
    public var location: Location?

    /// What a stage does.
    public enum Kind: Sendable, Hashable {
        /// `MigrationStage.lightweight`: the step Core Data infers.
        case lightweight
        /// `MigrationStage.custom`: app code runs around the step (`willMigrate` / `didMigrate`), which Decant cannot
        /// run. Each closure the stage gives is named with where it is declared.
        case custom(closures: [CustomClosure])
    }

    /// One closure of a custom stage (`willMigrate` or `didMigrate`) and where it is declared.
    public struct CustomClosure: Sendable, Hashable {
        /// `willMigrate` or `didMigrate`.
        public var name: String
        /// Where the closure is declared.
        public var location: Location?

        /// Creates a closure description.
        public init(name: String, location: Location? = nil) {
            self.name = name
            self.location = location
        }
    }

    /// Creates a stage.
    public init(from: String, to: String, kind: Kind, location: Location? = nil) {
        self.from = from
        self.to = to
        self.kind = kind
        self.location = location
    }
}
