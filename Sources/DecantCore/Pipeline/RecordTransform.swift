/// A stage between a reader and a writer: takes one batch in, gives batches out (of the same or other entities),
/// and may refuse objects as rejects. Migration fills this stage; a plain copy has none.
///
/// ```swift
/// struct DropEmpty: RecordTransform {
///     mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
///         output.emit(batch)
///     }
/// }
/// ```
public protocol RecordTransform {
    /// Transforms one input batch: every batch put into `output` is written, every reject is counted.
    mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws
    /// Called once after the last input batch, for what the transform held back. Does nothing by default.
    mutating func finish(into output: inout TransformOutput) throws
}

extension RecordTransform {
    public mutating func finish(into output: inout TransformOutput) throws {}
}

/// What one call of a ``RecordTransform`` produced: batches to write and objects refused.
public struct TransformOutput: Sendable {
    /// The batches to write, in order.
    public var batches: [RecordBatch] = []
    /// The objects refused, with the reason.
    public var rejects: [Reject] = []
    /// Input objects that were removed on purpose (a mapping that drops an entity), per entity.
    public var removed: [String: Int] = [:]
    /// Problems found in objects that were written all the same (a reference to an object that does not exist): listed
    /// with the rejects, not counted as rejected.
    public var findings: [Reject] = []
    /// Output objects that no input object corresponds to one-to-one (a mapping that creates extra objects),
    /// per entity.
    public var created: [String: Int] = [:]
    /// Input objects a selection left out (`--entity`, `--where`), per entity.
    public var filtered: [String: Int] = [:]
    /// What the transform noticed and let pass.
    public var diagnostics: [Diagnostic] = []

    /// Creates an empty output.
    public init() {}

    /// Adds a batch to write.
    public mutating func emit(_ batch: RecordBatch) { batches.append(batch) }

    /// Refuses an object.
    public mutating func reject(_ reject: Reject) { rejects.append(reject) }
}

/// An object that could not be written, and why: what `--rejects` files list.
public struct Reject: Sendable, Hashable, Codable {
    /// The object's entity.
    public var entity: String
    /// The object's identity (`Note/p12`).
    public var object: String
    /// The property concerned, if one.
    public var property: String?
    /// The rule that failed (`optional`, `max`, `regex`, …).
    public var rule: String
    /// The offending value, as text.
    public var value: String?

    /// Creates a reject.
    public init(entity: String, object: String, property: String? = nil, rule: String, value: String? = nil) {
        self.entity = entity
        self.object = object
        self.property = property
        self.rule = rule
        self.value = value
    }
}
