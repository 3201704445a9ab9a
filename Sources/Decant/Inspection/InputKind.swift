import DecantCore
import DecantCodecs
import DecantFormats
import DecantSwiftData
public import Foundation

/// What a path holds, told by its content: a model (source or compiled), a Core Data persistent store a registered
/// format describes (``StoreDescribingFormat``: SQLite, binary), a keyed archive, a plain property list
/// (``InputClassifyingFormat``), or records in another registered format (JSON, CSV, XML store, …). No format is
/// named here: each format says what its inputs are.
public enum InputKind: Sendable, Hashable {
    /// A model: `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`, or SwiftData Swift source (a `.swift` file, a
    /// folder of them, or `.swift` files separated by commas).
    case model
    /// An Xcode mapping model: a `.xcmappingmodel` folder or a compiled `.cdm` file.
    case mappingModel
    /// A Core Data persistent store that the registered format of this name describes (``StoreDescribingFormat``):
    /// `sqlite` for a SQLite database, `binary` for a Core Data binary store.
    case store(String)
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
            self = Self(format, content: (format as? any InputClassifyingFormat)?.content(of: probe) ?? .records)
        } else if BinaryPropertyListReader.isBinaryPropertyList(probe.header) {
            // A property list no record format claims: a compiled model or mapping model without its extension,
            // or an archive whose first bytes do not name `$archiver`.
            self = KeyedArchive.holdsAppObjects(at: url, header: probe.header) ? .keyedArchive : .model
        } else if let format = registry.format(forExtensionOf: url) {
            // By extension when the content decides nothing: a damaged store still reads as a store, so its error
            // says what the store's format found.
            self = Self(named: format)
        } else {
            throw DecantError(
                .unsupportedFormat,
                "not a Core Data model, SQLite store, keyed archive or other input Decant reads; name its format with "
                    + "--from (\(registry.names.joined(separator: ", ")))",
                at: Location(path: url.displayPath))
        }
    }

    /// What an input read as the format `name` of `registry` (`--from`) is: a store when the format describes stores,
    /// else what the format says an input named as it holds (``InputClassifyingFormat/contentByName``); records of an
    /// unknown name (their report names the known formats).
    public init(named name: String, registry: FormatRegistry = .builtIn) {
        guard let format = try? registry.format(named: name) else {
            self = .records(name)
            return
        }
        self = Self(named: format)
    }

    /// What an input named as `format` holds, its content deciding nothing.
    private init(named format: any RecordFormat) {
        self.init(format, content: (format as? any InputClassifyingFormat)?.contentByName ?? .records)
    }

    /// What an input of `format` holds, given what its content is.
    private init(_ format: any RecordFormat, content: InputContent) {
        if format is any StoreDescribingFormat {
            self = .store(format.name)
            return
        }
        switch content {
        case .records: self = .records(format.name)
        case .keyedArchive: self = .keyedArchive
        case .propertyList: self = .propertyList
        case .compiledModel: self = .model
        }
    }
}
