public import DecantCore
import DecantCodecs
public import Foundation

/// The Core Data XML store (`NSXMLStoreType`) as a ``RecordFormat``: recognised by its `<database>` root element
/// (or the `CoreData.dtd` DOCTYPE), whatever the file is called; the `.xml` extension is only a hint when the
/// content does not decide. Read with the model its metadata hashes match (a version of the given bundle), or
/// schema-less with the model the file declares; written as Core Data writes it. See ``XMLStoreReader`` and
/// ``XMLStoreWriter``.
///
/// ```swift
/// var reader = try XMLStoreFormat().makeReader(at: url, options: FormatOptions())   // e.g. an xcmapping.xml
/// ```
public struct XMLStoreFormat: RecordFormat {
    public let name = "xml"
    /// A Core Data persistent store: objects brought in from records meet the model's rules.
    public var isPersistentStore: Bool { true }
    public let fileExtensions = ["xml"]

    /// The format.
    public init() {}

    /// An XML document whose root element is `<database>`, or whose DOCTYPE names it.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard !probe.isDirectory, probe.firstNonBlankByte == UInt8(ascii: "<") else { return false }
        let head = String(decoding: probe.header, as: UTF8.self)
        if head.contains("<!DOCTYPE database") { return true }
        var rest = Substring(head)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            if rest.hasPrefix("?") || rest.hasPrefix("!") { continue }
            guard rest.hasPrefix("database"), let next = rest.dropFirst(8).first else { return false }
            return next == ">" || next == "/" || next.isWhitespace
        }
        return false
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try XMLStoreReader(contentsOf: url, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try XMLStoreWriter(writingAt: url, model: model)
    }
}
