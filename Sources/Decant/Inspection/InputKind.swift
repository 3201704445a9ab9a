import DecantCore
import DecantFormats
public import Foundation

/// What a path holds, told by its content: a model (source or compiled), a Core Data SQLite store or a keyed archive.
public enum InputKind: Sendable, Hashable {
    /// A model: `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`.
    case model
    /// A SQLite database (`SQLite format 3` header).
    case sqliteStore
    /// An NSKeyedArchiver archive of app objects (a binary or XML property list with `$archiver`).
    case keyedArchive

    /// Sniffs `url`: model bundles by folder kind and `.mom` content, stores by the SQLite magic bytes.
    /// - Throws: `.fileNotFound` for a missing path, `.unsupportedFormat` for anything else.
    public init(of url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such file or folder", at: Location(path: url.displayPath))
        }
        if isDirectory.boolValue || url.pathExtension.lowercased() == "mom" {
            self = .model
            return
        }
        let header = FormatProbe.header(of: url, count: 512)
        if header.prefix(16) == Data("SQLite format 3\0".utf8) {
            self = .sqliteStore
        } else if header.starts(with: Data("bplist00".utf8)) || ArchiveFormat.looksLikeKeyedArchive(header) {
            self = Self.holdsAppObjects(url, header: header) ? .keyedArchive : .model
        } else {
            throw DecantError(
                .unsupportedFormat,
                "not a Core Data model, SQLite store or keyed archive: the file starts with neither the SQLite "
                    + "header nor a property list",
                at: Location(path: url.displayPath))
        }
    }

    /// Whether a property list is a keyed archive of app objects rather than a compiled model or mapping model
    /// (a `.mom` or `.cdm` without its extension). A file that does not decode is told by its first bytes, so the
    /// right reader reports what is wrong with it.
    private static func holdsAppObjects(_ url: URL, header: Data) -> Bool {
        guard !["omo", "cdm"].contains(url.pathExtension.lowercased()) else { return false }
        guard let data = try? Data(contentsOf: url), let propertyList = try? PropertyListValue.decode(from: data)
        else { return ArchiveFormat.looksLikeKeyedArchive(header) }
        guard propertyList["$archiver"] != nil else { return false }
        guard let archive = try? KeyedArchive(propertyList: propertyList), let root = try? archive.rootObject() else {
            return true
        }
        return !root.isKind(of: "NSManagedObjectModel") && !root.isKind(of: "NSMappingModel")
    }
}
