/// Counts per entity of one transfer, so every run can reconcile: per entity, objects read and created equal
/// objects written, rejected, removed and filtered out.
///
/// ```swift
/// let report = try RecordTransfer.copy(from: &reader, to: &writer)
/// precondition(report.isReconciled)
/// ```
public struct TransferReport: Sendable, Hashable {
    /// Records read, per entity.
    public var read: [String: Int] = [:]
    /// Records written, per entity.
    public var written: [String: Int] = [:]
    /// Records written in all.
    public var writtenInAll = 0
    /// Records rejected (each with its reason in ``rejects``), per entity.
    public var rejected: [String: Int] = [:]
    /// Records a transform removed on purpose, per entity.
    public var removed: [String: Int] = [:]
    /// Records a transform created beyond one per input object, per entity.
    public var created: [String: Int] = [:]
    /// Records a selection left out (`--entity`, `--where`), at the source or in the stream, per entity.
    public var filteredOut: [String: Int] = [:]
    /// Every reject, in the order they happened.
    public var rejects: [Reject] = []
    /// Problems found in objects that were written all the same (see ``TransformOutput/findings``).
    public var findings: [Reject] = []
    /// What the reader and the writer noticed and let pass.
    public var diagnostics: [Diagnostic] = []

    /// Creates an empty report.
    public init() {}

    /// Whether every entity reconciles: read + created = written + rejected + removed + filtered out.
    public var isReconciled: Bool {
        let names = Set(read.keys).union(written.keys).union(rejected.keys).union(removed.keys).union(created.keys)
            .union(filteredOut.keys)
        return names.allSatisfy { name in
            read[name, default: 0] + created[name, default: 0]
                == written[name, default: 0] + rejected[name, default: 0] + removed[name, default: 0]
                + filteredOut[name, default: 0]
        }
    }

    /// Adds what one transform call produced.
    mutating func add(_ output: TransformOutput) {
        for reject in output.rejects {
            rejected[reject.entity, default: 0] += 1
            rejects.append(reject)
        }
        findings += output.findings
        for (entity, count) in output.removed { removed[entity, default: 0] += count }
        for (entity, count) in output.created { created[entity, default: 0] += count }
        for (entity, count) in output.filtered { filteredOut[entity, default: 0] += count }
        diagnostics += output.diagnostics
    }
}
