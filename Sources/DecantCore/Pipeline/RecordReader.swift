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
    /// What the reader noticed and let pass so far (for example externally stored values it could not find,
    /// read under a `keep` or `null` policy). Empty by default.
    var diagnostics: [Diagnostic] { get }
}

extension RecordReader {
    public var diagnostics: [Diagnostic] { [] }
}


/// A reader of an input that does not name its objects' entity (a plain JSON array, a single CSV file): it holds
/// the objects of the entity `FormatOptions.entity` names. For such inputs `--entity` names that entity rather than
/// selecting among several.
public protocol EntityNamingReader: RecordReader {
    /// The entity taken from `FormatOptions.entity`, when the reader used it.
    var entityFromOptions: String? { get }
}

/// A reader that can deliver long to-many lists in parts (``RecordBatch/Continuation``), so that no batch holds more
/// than ``memberPartSize`` members of one list however many a record has. A job sets it only for consumers that take
/// parts (``MemberPartsConsumer``); every other consumer gets whole records.
public protocol PartedRecordReader: RecordReader, AnyObject {
    /// The most members of one to-many relationship a record or a continuation carries; nil: records come whole.
    var memberPartSize: Int? { get set }
}

/// A writer or transform that takes records whose to-many lists come in parts (``RecordBatch/Continuation``): it
/// holds what it must of a record cut short until the record's last part, and its output is the same as for whole
/// records.
public protocol MemberPartsConsumer {
    /// Whether this consumer, as configured, takes parts.
    var takesMemberParts: Bool { get }
}
