public import DecantCore
import DecantCodecs
public import Foundation

/// Plain property lists (binary or XML) as a ``RecordFormat`` Decant reads (`plist`): the arrays of dictionaries
/// apps saved with `writeToFile:`, user defaults and exported bookmarks become records of a model
/// (``PropertyListReader`` says how). Decant does not write property lists.
///
/// ```swift
/// var options = FormatOptions(bundle: bookmarks)
/// options.propertyList.keyPath = "Bookmarks"
/// var reader = try PropertyListFormat().makeReader(at: URL(fileURLWithPath: "Bookmarks.plist"), options: options)
/// ```
public struct PropertyListFormat: RecordFormat {
    public let name = "plist"
    public let fileExtensions = ["plist"]

    /// The format.
    public init() {}

    /// A property list that is no keyed archive: an XML one (`<plist` in its first bytes) that does not name
    /// `$archiver` there, or a binary one whose top-level dictionary has no `$archiver` key (read from the file
    /// without decoding the rest: a plain list can hold an archive's bytes in a value, and so name `$archiver` in its
    /// first bytes). A binary list too damaged to tell is recognised only when named `.plist`, so its reader says what
    /// is wrong. Compiled models and mapping models (`.mom`, `.cdm`) are left to their readers; keyed archives to
    /// ``ArchiveFormat``, which comes after this format.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard !probe.isDirectory, !["mom", "cdm", "omo"].contains(probe.url.pathExtension.lowercased()),
            Self.looksLikePropertyList(probe.header)
        else { return false }
        guard BinaryPropertyListReader.isBinaryPropertyList(probe.header) else {
            return !ArchiveFormat.looksLikeKeyedArchive(probe.header)
        }
        switch Self.topLevelNamesArchiver(probe.url) {
        case false?: return true
        case true?: return false
        case nil: return probe.url.pathExtension.lowercased() == "plist"
        }
    }

    /// Whether the binary property list at `url` has a top-level dictionary with an `$archiver` key, read from the
    /// file a few blocks at a time; nil when that cannot be told (not a binary list, damaged, unreadable).
    static func topLevelNamesArchiver(_ url: URL) -> Bool? {
        do {
            guard let file = try FileBlocks(opening: url, path: url.displayPath) else { return nil }
            let list = try BinaryPropertyList(file: file, checksStructure: false)
            return try list.withCursor { cursor in
                guard let (keys, _) = try cursor.entries(of: list.topObject) else { return false }
                for item in 0..<keys.count where try cursor.string(at: cursor.reference(keys, item)) == "$archiver" {
                    return true
                }
                return false
            }
        } catch {
            return nil
        }
    }

    /// Whether `header` (a file's first bytes) starts a binary property list or an XML one.
    public static func looksLikePropertyList(_ header: Data) -> Bool {
        if BinaryPropertyListReader.isBinaryPropertyList(header) { return true }
        let probe = FormatProbe(url: URL(fileURLWithPath: "/"), isDirectory: false, header: header)
        return probe.firstNonBlankByte == UInt8(ascii: "<") && header.range(of: Data("<plist".utf8)) != nil
    }

    /// Whether `data` is a keyed archive (a property list whose top-level dictionary names `$archiver`): a
    /// `.plist` file can be one, and then it is read as one.
    public static func isKeyedArchive(_ data: Data) -> Bool {
        guard let value = try? PropertyListValue.decode(from: data) else { return false }
        return value["$archiver"] != nil
    }

    /// A ``PropertyListReader``; a keyed archive whose first bytes did not tell it (a `.plist` named one) is read
    /// by ``ArchiveReader``.
    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        let data = try Data(wholeFile: url, what: "the property list")
        if Self.isKeyedArchive(data) { return try ArchiveReader(contentsOf: url, options: options) }
        _ = try options.modelForModelLessInput(at: Location(path: url.displayPath))
        return try PropertyListReader(data: data, path: url.displayPath, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        throw DecantError(
            .unsupportedFormat,
            "Decant reads plain property lists but does not write them; choose another output format",
            at: Location(path: url.displayPath))
    }
}
