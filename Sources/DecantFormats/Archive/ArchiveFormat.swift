public import DecantCore
import DecantCodecs
public import Foundation

/// NSKeyedArchiver archives (binary or XML property lists) as a ``RecordFormat`` Decant reads: the app objects of
/// an archive written with `NSKeyedArchiver.archiveRootObject(_:toFile:)` or `archivedData(withRootObject:)`
/// become records of a model (``ArchiveReader`` says how classes and keys map). Decant does not write archives.
///
/// ```swift
/// var options = FormatOptions(bundle: notes, version: "Notes")
/// options.archive.classEntities = ["LegacyNote": "Note"]
/// var reader = try ArchiveFormat().makeReader(at: URL(fileURLWithPath: "LegacyNotes.archive"), options: options)
/// ```
public struct ArchiveFormat: RecordFormat {
    public let name = "archive"
    public let fileExtensions = ["archive", "keyedarchive", "nskeyedarchive"]

    /// The format.
    public init() {}

    /// A file whose first bytes are a property list naming `$archiver` (binary plists written by Foundation put the
    /// top-level keys first; XML ones start with them). A compiled model (`.mom`, `.cdm`) is left to the model
    /// readers.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard !probe.isDirectory, !["mom", "cdm", "omo"].contains(probe.url.pathExtension.lowercased())
        else {
            return false
        }
        return Self.looksLikeKeyedArchive(probe.header)
    }

    /// Whether `header` (the first bytes of a file) starts a property list that mentions `$archiver`.
    public static func looksLikeKeyedArchive(_ header: Data) -> Bool {
        let isPropertyList =
            BinaryPropertyListReader.isBinaryPropertyList(header)
            || header.range(of: Data("<plist".utf8)) != nil
        return isPropertyList && header.range(of: Data("$archiver".utf8)) != nil
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try ArchiveReader(contentsOf: url, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws
        -> any RecordWriter
    {
        throw DecantError(
            .unsupportedFormat,
            "Decant reads keyed archives but does not write them; choose another output format",
            at: Location(path: url.displayPath))
    }
}
