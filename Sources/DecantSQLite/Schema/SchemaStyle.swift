/// Which generation of Core Data's SQLite schema rules to follow (coredata-formats.md 4.14): the rules changed
/// with the framework version, so reproducing an old store needs that store's `NSPersistenceFrameworkVersion`.
///
/// ```swift
/// let schema = try StoreSchema(model: model, style: SchemaStyle(frameworkVersion: 637))
/// ```
public struct SchemaStyle: Sendable, Hashable {
    /// The `NSPersistenceFrameworkVersion` whose rules apply.
    public var frameworkVersion: Int

    /// The rules of framework 1044 and later (every current OS).
    public static let current = SchemaStyle(frameworkVersion: 1344)

    /// The style a store written by this framework version has.
    public init(frameworkVersion: Int) {
        self.frameworkVersion = frameworkVersion
    }

    /// Uniqueness constraints become `CREATE UNIQUE INDEX Z_<Entity>_UNIQUE_…` (1044 and later); before that a
    /// `CONSTRAINT … UNIQUE (…)` clause ends the root's `CREATE TABLE` (observed at 637; 638–1043 unobserved).
    public var usesUniqueIndexes: Bool { frameworkVersion >= 1044 }

    /// Index descriptions become `Z_<Entity>_<name>` indexes with `COLLATE BINARY ASC|DESC` (after 754; observed
    /// from 847); up to 754 indexed attributes and compound indexes use legacy `Z<TABLE>_…` names.
    public var usesModernIndexDescriptions: Bool { frameworkVersion > 754 }

    /// Many-to-many join tables get their slave-column index (after 519: artsy's `oss_stubbed_data.sqlite`, framework
    /// 519, has five join tables and no such index; observed from 640).
    public var hasJoinTableIndex: Bool { frameworkVersion > 519 }

    /// The store has a `Z_MODELCACHE` table (after 519; observed from 637).
    public var hasModelCache: Bool { frameworkVersion > 519 }
}
