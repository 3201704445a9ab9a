import Foundation

/// Copies every record from a reader to a writer, optionally through a transform.
public enum RecordTransfer: Sendable {
    /// Streams all batches from `reader` (through `transform`, when given) into `writer` and finishes the writer.
    ///
    /// With `overlapping` (the default) the reader fills the next batch on a second thread while the writer
    /// writes the current one; at most `depth` filled batches wait between them, and batches are recycled, so
    /// memory stays bounded and nothing is allocated per record. The reader is lent to that thread for the
    /// duration of the call and is used by no other thread meanwhile; it is back with the caller, advanced,
    /// when the call returns or throws.
    ///
    /// On any error the writer is abandoned (``RecordWriter/abandon()``), after the reading thread has finished
    /// with the reader, so an incomplete output is never completed and never left behind.
    ///
    /// When the reader can deliver to-many lists in parts (``PartedRecordReader``) and the writer, and the transform
    /// when there is one, take them (``MemberPartsConsumer``), lists longer than `memberPartSize` members come in
    /// parts (``RecordBatch/Continuation``), so memory does not grow with the longest list; nil: whole records.
    ///
    /// `progress`, when given, is called on the calling thread after each batch is written, with the batch's
    /// entity and the number of objects written so far in all.
    /// - Returns: The per-entity counts, rejects and diagnostics.
    /// - Throws: Whatever the reader, the transform or the writer throws (``DecantError``).
    public static func copy(
        from reader: inout some RecordReader, through transform: (any RecordTransform)? = nil,
        to writer: inout some RecordWriter, overlapping: Bool = true, depth: Int = 2,
        memberPartSize: Int? = RecordTransfer.memberPartSize,
        progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> TransferReport {
        var report = TransferReport()
        var stage = transform
        let parted = askForParts(of: reader, size: memberPartSize, transform: transform, writer: writer)
        defer { parted?.memberPartSize = nil }
        do {
            if let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model) {
                if overlapping {
                    try copyOverlapping(
                        from: &reader, layout: layout, depth: max(1, depth),
                        consume: { try deliver($0, through: &stage, to: &writer, report: &report, progress: progress) })
                } else {
                    var batch = RecordBatch(layout: layout)
                    while try reader.nextBatch(into: &batch) {
                        try deliver(batch, through: &stage, to: &writer, report: &report, progress: progress)
                    }
                }
            }
            if var transform = stage {
                var output = TransformOutput()
                try transform.finish(into: &output)
                try write(output, to: &writer, report: &report, progress: progress)
            }
            if let selecting = reader as? any SelectingRecordReader {
                for (entity, count) in selecting.filteredOut {
                    report.read[entity, default: 0] += count
                    report.filteredOut[entity, default: 0] += count
                }
            }
            report.diagnostics = reader.diagnostics + report.diagnostics + writer.diagnostics
            try requireStored(report, by: writer)
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        return report
    }

    /// Checks that the writer took every object it was given, where it can say (``RecordWriter/objectsStored``).
    /// No input reaches a failure: it is a defect of Decant's, and the output must not be committed.
    /// - Throws: `.internalError` naming the entity and both counts.
    static func requireStored(_ report: TransferReport, by writer: some RecordWriter) throws {
        guard let stored = writer.objectsStored else { return }
        for (entity, given) in report.written.sorted(by: { $0.key < $1.key }) where stored[entity, default: 0] != given {
            throw DecantError(
                .internalError,
                "the output took \(stored[entity, default: 0]) of the \(given) \(entity) objects written to it; "
                    + "nothing is committed (a defect of Decant's: please report it)", at: Location(entity: entity))
        }
    }

    /// The members of one to-many list a record or continuation carries by default when the consumer takes parts:
    /// 65,536 members (1.5 MB of cells), where a tag of four million notes held 1.3 million.
    public static let memberPartSize = 1 << 16

    /// Sets the reader's part size when it can deliver parts and every consumer takes them; returns the reader so
    /// set, to reset it after the copy.
    private static func askForParts(
        of reader: some RecordReader, size: Int?, transform: (any RecordTransform)?, writer: some RecordWriter
    ) -> (any PartedRecordReader)? {
        guard let size, let parted = reader as? any PartedRecordReader,
            (writer as? any MemberPartsConsumer)?.takesMemberParts == true,
            transform.map({ ($0 as? any MemberPartsConsumer)?.takesMemberParts == true }) ?? true
        else { return nil }
        parted.memberPartSize = max(1, size)
        return parted
    }

    /// Counts one batch read, passes it through the transform, writes what comes out.
    private static func deliver(
        _ batch: RecordBatch, through transform: inout (any RecordTransform)?, to writer: inout some RecordWriter,
        report: inout TransferReport, progress: ((String, Int) -> Void)?
    ) throws {
        report.read[batch.layout.entityName, default: 0] += batch.count
        guard var stage = transform else {
            try write(batch, to: &writer, report: &report, progress: progress)
            return
        }
        // Only the local copy may hold the stage's state while it changes, or every batch would copy that state
        // (a migration's identity sets) before writing to it.
        transform = nil
        defer { transform = stage }
        var output = TransformOutput()
        try stage.transform(batch, into: &output)
        try write(output, to: &writer, report: &report, progress: progress)
    }

    private static func write(
        _ output: TransformOutput, to writer: inout some RecordWriter, report: inout TransferReport,
        progress: ((String, Int) -> Void)?
    ) throws {
        report.add(output)
        for batch in output.batches where batch.count > 0 || batch.continuation != nil {
            try write(batch, to: &writer, report: &report, progress: progress)
        }
    }

    private static func write(
        _ batch: RecordBatch, to writer: inout some RecordWriter, report: inout TransferReport,
        progress: ((String, Int) -> Void)?
    ) throws {
        try writer.write(batch)
        report.written[batch.layout.entityName, default: 0] += batch.count
        report.writtenInAll += batch.count
        progress?(batch.layout.entityName, report.writtenInAll)
    }

    /// Reads on a second thread and hands each filled batch to `consume` on this one.
    private static func copyOverlapping<Reader: RecordReader>(
        from reader: inout Reader, layout: RecordLayout, depth: Int, consume: (RecordBatch) throws -> Void
    ) throws {
        try withUnsafeMutablePointer(to: &reader) { pointer in
            let channel = BatchChannel(depth: depth, layout: layout)
            // The producer borrows the caller's reader through this pointer, which stays valid until
            // withUnsafeMutablePointer returns; this thread does not touch the reader until the producer has
            // signalled `stopped` as its very last act, so the reader is never used by two threads at once.
            let lent = LentReader { batch in try pointer.pointee.nextBatch(into: &batch) }
            let stopped = DispatchSemaphore(value: 0)
            let producer = Thread {
                defer { stopped.signal() }
                do {
                    while var batch = channel.emptyBatch() {
                        guard try lent.next(&batch) else {
                            channel.finish(error: nil)
                            return
                        }
                        channel.push(batch)
                    }
                    channel.finish(error: nil)
                } catch {
                    channel.finish(error: error)
                }
            }
            producer.start()
            defer {
                channel.cancel()
                stopped.wait()
            }
            while let batch = try channel.pop() {
                try consume(batch)
                channel.recycle(batch)
            }
        }
    }
}

/// The caller's reader, lent to the producer thread for the duration of one overlapped copy: only that thread
/// calls `next` while it is lent.
private final class LentReader: @unchecked Sendable {
    let next: (inout RecordBatch) throws -> Bool
    init(_ next: @escaping (inout RecordBatch) throws -> Bool) { self.next = next }
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
        if cancelled { return nil }
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
        if !finished {
            finished = true
            failure = error
        }
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
}
