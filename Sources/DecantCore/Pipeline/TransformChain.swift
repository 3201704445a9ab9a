/// Two stages in a row: every batch the first emits goes through the second; what either refuses, removes,
/// creates, filters or notices is reported as one stage's would be.
///
/// ```swift
/// let stage = TransformChain(SelectionTransform(residual), then: ValidationTransform(model: model, collectsRejects: true))
/// let report = try RecordTransfer.copy(from: &reader, through: stage, to: &writer)
/// ```
public struct TransformChain: RecordTransform {
    private var first: any RecordTransform
    private var second: any RecordTransform

    /// `first`, then `second`.
    public init(_ first: any RecordTransform, then second: any RecordTransform) {
        self.first = first
        self.second = second
    }

    public mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
        var between = TransformOutput()
        try first.transform(batch, into: &between)
        try pass(between, into: &output)
    }

    public mutating func finish(into output: inout TransformOutput) throws {
        var between = TransformOutput()
        try first.finish(into: &between)
        try pass(between, into: &output)
        try second.finish(into: &output)
    }

    /// Hands the first stage's batches to the second and its counts to `output`.
    private mutating func pass(_ between: TransformOutput, into output: inout TransformOutput) throws {
        output.rejects += between.rejects
        output.findings += between.findings
        output.diagnostics += between.diagnostics
        output.removed.merge(between.removed, uniquingKeysWith: +)
        output.created.merge(between.created, uniquingKeysWith: +)
        output.filtered.merge(between.filtered, uniquingKeysWith: +)
        for batch in between.batches { try second.transform(batch, into: &output) }
    }
}

@available(*, unavailable)
extension TransformChain: Sendable {}
