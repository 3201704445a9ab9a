public import Foundation

/// Where in the input something is: a file, and within it a line, a byte offset, an entity or an object.
///
/// ```swift
/// let here = Location(path: "Notes.sqlite", entity: "Note", object: "Note/p12")
/// print(here)   // Notes.sqlite: entity Note, object Note/p12
/// ```
public struct Location: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file, as the user named it.
    public var path: String?
    /// A 1-based line number in a text file.
    public var line: Int?
    /// A 1-based column in a text file.
    public var column: Int?
    /// A 0-based byte offset in a binary file.
    public var offset: Int?
    /// The entity concerned.
    public var entity: String?
    /// The object concerned, as its identity (`Entity/p<pk>`) or an archive index.
    public var object: String?
    /// A key path or property name inside the object.
    public var keyPath: String?

    /// Creates a location; every part is optional.
    public init(
        path: String? = nil,
        line: Int? = nil,
        column: Int? = nil,
        offset: Int? = nil,
        entity: String? = nil,
        object: String? = nil,
        keyPath: String? = nil
    ) {
        self.path = path
        self.line = line
        self.column = column
        self.offset = offset
        self.entity = entity
        self.object = object
        self.keyPath = keyPath
    }

    public var description: String {
        var text = path ?? "<input>"
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        var parts: [String] = []
        if let offset { parts.append("offset \(offset)") }
        if let entity { parts.append("entity \(entity)") }
        if let object { parts.append("object \(object)") }
        if let keyPath { parts.append("key \(keyPath)") }
        if !parts.isEmpty { text += ": " + parts.joined(separator: ", ") }
        return text
    }
}

extension URL {
    /// The path as the user typed it, for messages: relative paths stay relative (without a leading `./`),
    /// absolute ones stay absolute. A job's staging location (``DestinationLease/staging``), or a file in it, is
    /// shown as the destination it stands for.
    public var displayPath: String {
        if let shown = StagingNames.shared.shown(path) { return shown }
        let path = relativePath
        return path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    }
}
