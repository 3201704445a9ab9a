/// All versions of a model: an `.xcdatamodeld` or `.momd` bundle (or a single unversioned model).
public struct ModelBundle: Sendable, Hashable {
    /// The bundle name (`Notes` for `Notes.xcdatamodeld`).
    public var name: String
    /// Every version, oldest first when ``order`` is known (see ``VersionOrder``); by name otherwise.
    public var versions: [ObjectModel]
    /// How ``versions`` came to be in their order, and whether that order says which version is older.
    public var order: VersionOrder
    /// The current version's name.
    public var currentVersionName: String?
    /// The kind of file the bundle was read from.
    public var sourceKind: SourceKind
    /// The steps between consecutive versions that the source declares (a SwiftData `SchemaMigrationPlan`), oldest
    /// first; empty when the source declares none (every Xcode and compiled model).
    public var stages: [VersionStage] = []

    /// The kinds of model files Decant reads.
    public enum SourceKind: String, Sendable, Hashable, Codable {
        /// A versioned Xcode model source.
        case xcdatamodeld
        /// An unversioned Xcode model source.
        case xcdatamodel
        /// A compiled, versioned model.
        case momd
        /// A single compiled model.
        case mom
        /// A model recovered from a store's `Z_MODELCACHE`.
        case storeCache
        /// SwiftData `@Model` classes read from Swift source files.
        case swiftSource = "swift-source"
    }

    /// Creates a bundle whose versions are in the order given (oldest first) unless `order` says otherwise.
    public init(
        name: String, versions: [ObjectModel], currentVersionName: String?, sourceKind: SourceKind,
        order: VersionOrder = .given
    ) {
        self.name = name
        self.versions = versions
        self.order = order
        self.currentVersionName = currentVersionName
        self.sourceKind = sourceKind
    }

    /// The current version: the one `.xccurrentversion` or `VersionInfo.plist` names, else the last.
    public var currentVersion: ObjectModel? {
        versions.first { $0.versionName == currentVersionName } ?? versions.last
    }

    /// The version with this name.
    public func version(named name: String) -> ObjectModel? {
        versions.first { $0.versionName == name }
    }
}
