/// What a dry run of a migration finds, counted without reading the objects: the objects per source entity, the
/// objects that would be rejected (and the references that would dangle) per `Entity.property rule`, and whether
/// violations the source already had would be carried over.
///
/// ```swift
/// if let counts = try format.preflightCounts(plan: plan, reader: reader, settings: settings) {
///     print(counts.objects, counts.rejects)       // ["Note": 2000000] ["Note.title max": 12]
/// }
/// ```
public struct PreflightCounts: Sendable, Hashable {
    /// Objects per source entity (entities without objects are absent).
    public var objects: [String: Int]
    /// Objects that would be rejected, and references that would dangle, per `Entity.property rule`, as the record
    /// stream's dry run counts them (entries are never zero).
    public var rejects: [String: Int]
    /// Whether some object already broke a rule at the source version that the migration carries over (the record
    /// stream warns about those, and `migrate` runs through it).
    public var carriesViolations: Bool

    /// Counts.
    public init(objects: [String: Int], rejects: [String: Int], carriesViolations: Bool) {
        self.objects = objects
        self.rejects = rejects
        self.carriesViolations = carriesViolations
    }
}

/// A format that counts what a migration's dry run would find inside the store, with queries, instead of reading
/// every object through the record stream: `decant plan` on a large store then costs what those queries cost.
///
/// The counts must be exactly those of the record stream's dry run (``RecordStreamEngine`` into a writer that keeps
/// nothing); where the format cannot tell them exactly (a rule its queries cannot express, a value it cannot judge),
/// it answers nil and the dry run reads the objects.
///
/// ```swift
/// let counts = try (format as? any InStoreCountingFormat)?
///     .preflightCounts(plan: plan, reader: reader, settings: settings)
/// ```
public protocol InStoreCountingFormat: RecordFormat {
    /// The dry run's counts for `plan` on the store `reader` reads, nil when they cannot be told exactly without
    /// reading the objects. Nothing is written.
    /// - Throws: `.ioError` when the disk or the file system fails; a store or plan the queries do not fit is nil.
    func preflightCounts(plan: MigrationPlan, reader: any RecordReader, settings: MigrationSettings) throws
        -> PreflightCounts?
}
