import Foundation

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
    /// With `overlapping` (the default) the reader fills the next batch on a second thread while the writer
    /// writes the current one; at most `depth` filled batches wait between them, and batches are recycled, so
    /// memory stays bounded and nothing is allocated per record. Reader and writer are each used by one thread
    /// only, never at the same time by two.
    /// - Returns: The per-entity counts.
    /// - Throws: Whatever the reader or writer throws (``DecantError``); a reader error stops the writer before
    ///   `finish()`, so an incomplete output is never completed.
    public static func copy(
        from reader: inout some RecordReader, to writer: inout some RecordWriter, overlapping: Bool = true,
        depth: Int = 2
    ) throws -> TransferReport {
        var report = TransferReport()
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else {
            try writer.finish()
            return report
        }
        if overlapping {
            try copyOverlapping(from: &reader, to: &writer, layout: layout, depth: max(1, depth), report: &report)
        } else {
            var batch = RecordBatch(layout: layout)
            while try reader.nextBatch(into: &batch) {
                report.read[batch.layout.entityName, default: 0] += batch.count
                try writer.write(batch)
                report.written[batch.layout.entityName, default: 0] += batch.count
            }
        }
        try writer.finish()
        return report
    }

    private static func copyOverlapping(
        from reader: inout some RecordReader, to writer: inout some RecordWriter, layout: RecordLayout, depth: Int,
        report: inout TransferReport
    ) throws {
        let channel = BatchChannel(depth: depth, layout: layout)
        // The reader moves to the producer thread for the duration of the copy (this thread does not touch it
        // meanwhile) and is left there, consumed: a reader is single-pass.
        nonisolated(unsafe) var producerReader: any RecordReader = reader
        let producer = Thread {
            do {
                while var batch = channel.emptyBatch() {
                    guard try producerReader.nextBatch(into: &batch) else {
                        channel.finish(error: nil)
                        return
                    }
                    channel.push(batch)
                }
            } catch {
                channel.finish(error: error)
            }
        }
        producer.start()
        defer {
            channel.cancel()
            channel.waitUntilProducerStops()
        }
        while let batch = try channel.pop() {
            report.read[batch.layout.entityName, default: 0] += batch.count
            try writer.write(batch)
            report.written[batch.layout.entityName, default: 0] += batch.count
            channel.recycle(batch)
        }
    }
}

/// The bounded hand-over between the reading thread and the writing thread.
private final class BatchChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var filled: [RecordBatch] = []
    private var spare: [RecordBatch] = []
    private var created = 0
    private let depth: Int
    private let layout: RecordLayout
    private var finished = false
    private var cancelled = false
    private var producerStopped = false
    private var failure: (any Error)?

    init(depth: Int, layout: RecordLayout) {
        self.depth = depth
        self.layout = layout
    }

    /// A batch for the producer to fill, waiting while `depth` filled batches are queued; nil once cancelled.
    func emptyBatch() -> RecordBatch? {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && spare.isEmpty && created >= depth + 1 { condition.wait() }
        if cancelled {
            producerStopped = true
            condition.broadcast()
            return nil
        }
        if let batch = spare.popLast() { return batch }
        created += 1
        return RecordBatch(layout: layout)
    }

    func push(_ batch: RecordBatch) {
        condition.lock()
        filled.append(batch)
        condition.broadcast()
        condition.unlock()
    }

    func finish(error: (any Error)?) {
        condition.lock()
        finished = true
        producerStopped = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next filled batch, or nil at the end; rethrows the producer's error.
    func pop() throws -> RecordBatch? {
        condition.lock()
        defer { condition.unlock() }
        while filled.isEmpty && !finished { condition.wait() }
        if !filled.isEmpty { return filled.removeFirst() }
        if let failure { throw failure }
        return nil
    }

    func recycle(_ batch: RecordBatch) {
        condition.lock()
        spare.append(batch)
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilProducerStops() {
        condition.lock()
        while !producerStopped { condition.wait() }
        condition.unlock()
    }
}
