/// What a store reader does with an externally stored value whose file is missing from the store's
/// `_EXTERNAL_DATA` folder (`--missing-external-data`).
///
/// ```swift
/// let reader = try SQLiteStoreReader(store: store, model: model, missingExternalData: .keep)
/// ```
public enum MissingExternalDataPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// Stop with bad input data (exit 65), naming the object, the attribute and the file. The default.
    case fail
    /// Keep the reference to the missing file (``Value/externalDataReference(_:)``): a Core Data SQLite output
    /// stores the same reference, so it is exactly as complete as the input. Every affected object is reported.
    case keep
    /// Read the value as nil. Every affected object is reported.
    case null
}
