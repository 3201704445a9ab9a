public import DecantCore
import DecantCodecs
public import Foundation

/// The Core Data binary store (`NSBinaryStoreType`) as a ``RecordFormat``, in the layout Apple's framework writes
/// (section 6 of the formats spec, checked against an Apple-written file). Recognised by its `CoreData` magic;
/// `.binarystore` is only a hint. See ``BinaryStoreReader`` and ``BinaryStoreWriter``.
///
/// ```swift
/// var writer = try BinaryStoreFormat().makeWriter(at: url, model: model, options: FormatOptions())
/// ```
public struct BinaryStoreFormat: RecordFormat {
    public let name = "binary"
    /// A Core Data persistent store: objects brought in from records meet the model's rules.
    public var isPersistentStore: Bool { true }
    public let fileExtensions = ["binarystore"]

    /// The format.
    public init() {}

    /// A file starting with the `CoreData` magic.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        !probe.isDirectory && probe.header.starts(with: BinaryStoreHeader.magic)
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try BinaryStoreReader(contentsOf: url, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try BinaryStoreWriter(writingAt: url, model: model)
    }
}
