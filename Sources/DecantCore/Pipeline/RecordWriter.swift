/// A sink of records.
///
/// A writer either completes its output with ``finish()`` or gives it up with ``abandon()``: the destination is
/// then exactly as it was before the writer started, and everything the writer opened is released.
/// ```swift
/// do {
///     try writer.write(batch)
///     try writer.finish()
/// } catch {
///     writer.abandon()
///     throw error
/// }
/// ```
public protocol RecordWriter {
    /// Writes every record of the batch.
    mutating func write(_ batch: RecordBatch) throws
    /// Completes the output; after this the output is whole and closed.
    mutating func finish() throws
    /// Gives up the output after an error: releases what the writer holds, in a safe order, and removes what it
    /// wrote. Does nothing after ``finish()`` succeeded or a second time.
    mutating func abandon()
    /// What the writer noticed and let pass so far (for example derived attributes whose triggers it cannot
    /// create). Empty by default.
    var diagnostics: [Diagnostic] { get }
    /// The objects the output took so far, per entity, as the output counts them (rows a store inserted); nil when
    /// the writer cannot say (the default). A transfer checks them against the objects it gave the writer before it
    /// finishes: a writer that drops an object ends the run, and nothing is committed.
    var objectsStored: [String: Int]? { get }
}

extension RecordWriter {
    public var diagnostics: [Diagnostic] { [] }
    public var objectsStored: [String: Int]? { nil }
}
