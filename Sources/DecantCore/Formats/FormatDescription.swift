public import Foundation

/// What `decant inspect` says about an input in a record format without reading it through a model: its format,
/// the entities it holds with their object counts, and the model version it names, if any.
///
/// ```swift
/// if let csv = format as? any DescribableFormat {
///     print(try csv.describe(at: folder, options: FormatOptions()).entityCounts)
/// }
/// ```
public struct FormatDescription: Sendable, Hashable, Codable {
    /// The format's name.
    public var format: String
    /// Objects per entity.
    public var entityCounts: [String: Int]
    /// The model version the input names (CSV folders and JSON documents written by Decant carry it).
    public var modelVersion: String?
    /// Other facts worth a line (files, links), in order.
    public var notes: [String]

    /// Creates a description.
    public init(format: String, entityCounts: [String: Int], modelVersion: String? = nil, notes: [String] = []) {
        self.format = format
        self.entityCounts = entityCounts
        self.modelVersion = modelVersion
        self.notes = notes
    }
}

/// A format that can describe an input without a model (the objects per entity it holds).
public protocol DescribableFormat: RecordFormat {
    /// Describes the input at `url`, reading it without a model.
    func describe(at url: URL, options: FormatOptions) throws -> FormatDescription
}
