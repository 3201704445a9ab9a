/// A source of records: yields them in batches, one entity per batch, reusing the caller's batch storage.
///
/// ```swift
/// var batch = RecordBatch(layout: firstLayout)
/// while try reader.nextBatch(into: &batch) { try writer.write(batch) }
/// ```
public protocol RecordReader {
    /// The model the records follow.
    var model: ObjectModel { get }
    /// Refills `batch` with the next records (switching its layout as needed); returns `false` at the end.
    mutating func nextBatch(into batch: inout RecordBatch) throws -> Bool
}

/// A sink of records.
public protocol RecordWriter {
    /// Writes every record of the batch.
    mutating func write(_ batch: RecordBatch) throws
    /// Completes the output; after this the output is whole and closed.
    mutating func finish() throws
}

/// Counts per entity of one copy, so every run can reconcile: read = written + rejected.
public struct TransferReport: Sendable, Hashable {
    /// Records read, per entity.
    public var read: [String: Int] = [:]
    /// Records written, per entity.
    public var written: [String: Int] = [:]
    /// Records rejected (with a reason elsewhere), per entity.
    public var rejected: [String: Int] = [:]

    /// Creates an empty report.
    public init() {}

    /// Whether every entity reconciles.
    public var isReconciled: Bool {
        Set(read.keys).union(written.keys).union(rejected.keys).allSatisfy {
            read[$0, default: 0] == written[$0, default: 0] + rejected[$0, default: 0]
        }
    }
}

/// Copies every record from a reader to a writer.
public enum RecordTransfer {
    /// Streams all batches from `reader` into `writer` and finishes the writer.
    ///
    /// - Returns: The per-entity counts.
    /// - Throws: Whatever the reader or writer throws (``DecantError``).
    public static func copy(from reader: inout some RecordReader, to writer: inout some RecordWriter) throws
        -> TransferReport
    {
        var report = TransferReport()
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else {
            try writer.finish()
            return report
        }
        var batch = RecordBatch(layout: layout)
        while try reader.nextBatch(into: &batch) {
            report.read[batch.layout.entityName, default: 0] += batch.count
            try writer.write(batch)
            report.written[batch.layout.entityName, default: 0] += batch.count
        }
        try writer.finish()
        return report
    }
}
