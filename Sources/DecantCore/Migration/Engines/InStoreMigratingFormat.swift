/// A format that migrates one of its stores into a new store of its own inside the store, as Core Data's
/// lightweight migration runs SQL inside SQLite: faster than the record stream, for the plans it takes.
///
/// A migration whose input and output are both in this format asks its engine first, and runs the record stream
/// (``RecordStreamEngine``) when it declines; adding a format with such a fast path takes no change to the
/// migration itself (as ``DescribableFormat`` adds `inspect`'s description).
///
/// ```swift
/// if let fast = format as? any InStoreMigratingFormat,
///     case .ready(let migration) = try fast.inStoreEngine(settings).prepare(plan: plan, reader: reader, sink: format)
/// {
///     _ = try migration.run(into: output, progress: nil)
/// }
/// ```
public protocol InStoreMigratingFormat: RecordFormat {
    /// What the engine runs inside, for people: `SQLite` ("running inside SQLite is turned off").
    var inStoreEngineName: String { get }
    /// The engine that migrates inside this format's stores, with `settings`.
    func inStoreEngine(_ settings: MigrationSettings) -> any MigrationEngine
    /// What `decant migrate` says when this engine ran, for people; nil (the default): nothing.
    var inStoreRunNote: String? { get }
    /// What `decant plan` says when this engine would run, for people; nil (the default): nothing.
    var inStorePlanNote: String? { get }
}

extension InStoreMigratingFormat {
    public var inStoreRunNote: String? { nil }
    public var inStorePlanNote: String? { nil }
}
