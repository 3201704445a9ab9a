import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantSwiftData
public import Foundation

/// What a path holds, told by its content: a model (source or compiled), a Core Data SQLite store, a keyed
/// archive, a plain property list, or records in another registered format (JSON, CSV, XML store, …).
public enum InputKind: Sendable, Hashable {
    /// A model: `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`, or SwiftData Swift source (a `.swift` file, a
    /// folder of them, or `.swift` files separated by commas).
    case model
    /// An Xcode mapping model: a `.xcmappingmodel` folder or a compiled `.cdm` file.
    case mappingModel
    /// A SQLite database (`SQLite format 3` header).
    case sqliteStore
    /// A Core Data binary store (`CoreData` header).
    case binaryStore
    /// An NSKeyedArchiver archive of app objects (a binary or XML property list with `$archiver`).
    case keyedArchive
    /// A plain property list (binary or XML) that is no keyed archive, compiled model or mapping model.
    case propertyList
    /// Records in the registered format of this name.
    case records(String)

    /// Tells what `url` holds: model bundles and mapping models by their extension, everything else by asking
    /// `registry` which format recognises the content (else the extension), and a property list that is no keyed
    /// archive of app objects as a compiled model.
    /// - Throws: `.fileNotFound` for a missing path, `.ioError` for a file that cannot be read,
    ///   `.unsupportedFormat` for anything else.
    public init(of url: URL, registry: FormatRegistry = .builtIn) throws {
        if SwiftSourceModelReader.sourceFiles(at: url) != nil {
            self = .model
            return
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such file or folder", at: Location(path: url.displayPath))
        }
        if ["xcmappingmodel", "cdm"].contains(url.pathExtension.lowercased()) {
            self = .mappingModel
            return
        }
        let modelExtensions = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]
        if modelExtensions.contains(url.pathExtension.lowercased()) {
            self = .model
            return
        }
        if isDirectory.boolValue {
            let format = try registry.inputFormat(of: url, named: nil)
            self = .records(format.name)
            return
        }
        // Each format owns its magic bytes: the registry tells a store, an archive or records by content.
        let probe = try FormatProbe(url: url)
        if let format = registry.format(recognizing: probe) {
            if format is SQLiteFormat {
                self = .sqliteStore
            } else if format is BinaryStoreFormat {
                self = .binaryStore
            } else if format is ArchiveFormat {
                self = Self.holdsAppObjects(url, header: probe.header) ? .keyedArchive : .model
            } else if format is PropertyListFormat {
                self = Self.propertyListKind(url, header: probe.header)
            } else {
                self = .records(format.name)
            }
        } else if BinaryPropertyListReader.isBinaryPropertyList(probe.header) {
            // A property list no record format claims: a compiled model or mapping model without its extension,
            // or an archive whose first bytes do not name `$archiver`.
            self = Self.holdsAppObjects(url, header: probe.header) ? .keyedArchive : .model
        } else if let format = registry.format(forExtensionOf: url) {
            // By extension when the content decides nothing: a damaged store still reads as a store, so its error
            // says what SQLite found.
            self =
                format is SQLiteFormat
                ? .sqliteStore : format is PropertyListFormat ? .propertyList : .records(format.name)
        } else {
            throw DecantError(
                .unsupportedFormat,
                "not a Core Data model, SQLite store, keyed archive or other input Decant reads; name its format with "
                    + "--from (\(registry.names.joined(separator: ", ")))",
                at: Location(path: url.displayPath))
        }
    }

    /// What a file the plain property-list format claimed is, decoded: a keyed archive all the same (an XML one
    /// whose first bytes do not name `$archiver`: of app objects, or a compiled model or mapping model without its
    /// extension), or a plain property list. A file that does not decode is a plain property list when named
    /// `.plist` (its reader says what is wrong), else taken for a compiled model, as before plain property lists
    /// were read.
    private static func propertyListKind(_ url: URL, header: Data) -> InputKind {
        let isNamedPlist = url.pathExtension.lowercased() == "plist"
        guard let data = try? Data(contentsOf: url), let propertyList = try? PropertyListValue.decode(from: data) else {
            return isNamedPlist ? .propertyList : .model
        }
        guard propertyList["$archiver"] != nil else { return .propertyList }
        return holdsAppObjects(url, header: header) ? .keyedArchive : .model
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
