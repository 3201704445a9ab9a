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
