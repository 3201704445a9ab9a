import DecantCore
import DecantFormats
public import Foundation

/// What a path holds, told by its content: a model (source or compiled) or a Core Data SQLite store.
public enum InputKind: Sendable, Hashable {
    /// A model: `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`.
    case model
    /// A SQLite database (`SQLite format 3` header).
    case sqliteStore

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
        let header = FormatProbe.header(of: url, count: 16)
        if header == Data("SQLite format 3\0".utf8) {
            self = .sqliteStore
        } else if header.starts(with: Data("bplist00".utf8)) {
            self = .model
        } else {
            throw DecantError(
                .unsupportedFormat,
                "not a Core Data model or SQLite store: the file starts with neither the SQLite header nor a property list",
                at: Location(path: url.displayPath))
        }
    }
}
