import DecantCore
import DecantFormats
public import Foundation

/// What a path holds, told by its content: a model (source or compiled), a Core Data SQLite store, or records in
/// another registered format (JSON, CSV, …).
public enum InputKind: Sendable, Hashable {
    /// A model: `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`.
    case model
    /// A SQLite database (`SQLite format 3` header).
    case sqliteStore
    /// Records in the registered format of this name.
    case records(String)

    /// Sniffs `url`: model bundles by folder kind and `.mom` content, stores by the SQLite magic bytes, other
    /// inputs through `registry`.
    /// - Throws: `.fileNotFound` for a missing path, `.unsupportedFormat` for anything else.
    public init(of url: URL, registry: FormatRegistry = .builtIn) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such file or folder", at: Location(path: url.displayPath))
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
        let header = FormatProbe.header(of: url, count: 16)
        if header == Data("SQLite format 3\0".utf8) {
            self = .sqliteStore
        } else if header.starts(with: Data("bplist00".utf8)) {
            self = .model
        } else if let format = try? registry.inputFormat(of: url, named: nil) {
            // By extension when the content decides nothing: a damaged store still reads as a store, so its error
            // says what SQLite found.
            self = format.name == "sqlite" ? .sqliteStore : .records(format.name)
        } else {
            throw DecantError(
                .unsupportedFormat,
                "not a Core Data model, SQLite store or other input Decant reads (\(registry.names.joined(separator: ", ")))",
                at: Location(path: url.displayPath))
        }
    }
}
