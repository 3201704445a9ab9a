public import DecantCore
import DecantCodecs
public import Foundation

/// Which entity each archived class becomes, and coder keys renamed where the name rules do not find a property:
/// the mapping file of `decant convert --class-mapping`, and what `decant inspect ARCHIVE` prints as a start.
///
/// The file is JSON. Each class maps to an entity name, or to an object with the entity and renamed keys:
///
/// ```json
/// {
///   "classes": {
///     "LegacyNote": "Note",
///     "MyApp.LegacyFolder": { "entity": "Folder", "keys": { "title": "name" } }
///   }
/// }
/// ```
///
/// ```swift
/// let mapping = try ArchiveMapping(contentsOf: URL(fileURLWithPath: "notes-mapping.json"))
/// var options = FormatOptions(bundle: notes)
/// mapping.apply(to: &options)
/// ```
///
/// A class mapped to `null` is left out. Keys not renamed are found as JSON keys are: exactly, then ignoring case,
/// then as snake_case for camelCase (`created_at` fills `createdAt`).
public struct ArchiveMapping: Sendable, Hashable {
    /// What one class becomes.
    public struct ClassMapping: Sendable, Hashable {
        /// The entity, or `nil` to leave the class's objects out.
        public var entity: String?
        /// Coder key → property name, for keys the name rules do not find.
        public var keys: [String: String]

        /// Creates a class mapping.
        public init(entity: String?, keys: [String: String] = [:]) {
            self.entity = entity
            self.keys = keys
        }
    }

    /// Per archived class name (as in `$classname`), what its objects become.
    public var classes: [String: ClassMapping]

    /// Creates a mapping.
    public init(classes: [String: ClassMapping] = [:]) {
        self.classes = classes
    }

    /// Reads a mapping file.
    /// - Throws: `.fileNotFound` when it is missing, `.malformedInput` naming the key that is not as described.
    public init(contentsOf url: URL) throws {
        let data = try JSONMappingFile.data(at: url, describing: "class mapping")
        try self.init(json: data, location: Location(path: url.displayPath))
    }

    /// Reads a mapping from JSON bytes.
    /// - Throws: `.malformedInput` naming the key that is not as described.
    public init(json data: Data, location: Location = Location()) throws {
        func failure(_ message: String, key: String) -> DecantError {
            JSONMappingFile.failure(message, key: key, at: location)
        }
        let root = try JSONMappingFile.object(
            data, at: location, describing: "class mapping", shape: "an object with a \"classes\" object", key: "classes")
        if let unknown = root.keys.first(where: { $0 != "classes" }) {
            throw failure(
                "unknown key \(unknown.debugDescription) (expected only \"classes\")", key: unknown)
        }
        guard let classes = root["classes"] as? [String: Any] else {
            throw failure("\"classes\" must be an object of class name → entity", key: "classes")
        }
        var mappings: [String: ClassMapping] = [:]
        for (name, value) in classes {
            let key = "classes.\(name)"
            if value is NSNull {
                mappings[name] = ClassMapping(entity: nil)
            } else if let entity = value as? String {
                mappings[name] = ClassMapping(entity: entity)
            } else if let object = value as? [String: Any] {
                if let unknown = object.keys.first(where: { $0 != "entity" && $0 != "keys" }) {
                    throw failure(
                        "unknown key \(unknown.debugDescription) (expected entity and keys)", key: key)
                }
                let entity = object["entity"]
                guard entity == nil || entity is NSNull || entity is String else {
                    throw failure("\"entity\" must be a string or null", key: "\(key).entity")
                }
                let keys = object["keys"] ?? [String: String]()
                guard let renamed = keys as? [String: String] else {
                    throw failure(
                        "\"keys\" must be an object of coder key → property name", key: "\(key).keys")
                }
                mappings[name] = ClassMapping(
                    entity: entity as? String ?? (entity == nil ? name : nil), keys: renamed)
            } else {
                throw failure("a class maps to an entity name, null, or {\"entity\", \"keys\"}", key: key)
            }
        }
        self.classes = mappings
    }

    /// Adds this mapping to `options`: the class → entity map and the renamed keys. A class left out (`null`)
    /// maps to the empty entity name, which the reader skips.
    public func apply(to options: inout FormatOptions) {
        for (name, mapping) in classes {
            options.archive.classEntities[name] = mapping.entity ?? ""
            if !mapping.keys.isEmpty { options.archive.classKeys[name] = mapping.keys }
        }
    }

    /// Adds a mapping file (when given), then `--class Class=Entity` arguments, to `options`.
    /// - Throws: `.usage` for an argument without `=`, the file's errors otherwise.
    public static func options(file: URL?, classes: [String], into options: inout FormatOptions)
        throws
    {
        if let file { try ArchiveMapping(contentsOf: file).apply(to: &options) }
        for argument in classes {
            let parts = argument.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw DecantError(.usage, "--class takes Class=Entity, not \(argument.debugDescription)")
            }
            options.archive.classEntities[parts[0]] = parts[1]
        }
    }

    /// The mapping as the JSON a user edits: keys sorted, a class without renamed keys as a plain entity name.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

extension ArchiveMapping: Encodable {
    private struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes as the mapping file reads: `{"classes": {"LegacyNote": "Note", …}}`.
    public func encode(to encoder: any Encoder) throws {
        var root = encoder.container(keyedBy: Name.self)
        var container = root.nestedContainer(keyedBy: Name.self, forKey: Name(stringValue: "classes"))
        for (name, mapping) in classes.sorted(by: { $0.key < $1.key }) {
            let key = Name(stringValue: name)
            if mapping.keys.isEmpty {
                try container.encode(mapping.entity, forKey: key)
            } else {
                var nested = container.nestedContainer(keyedBy: Name.self, forKey: key)
                try nested.encode(mapping.entity, forKey: Name(stringValue: "entity"))
                try nested.encode(mapping.keys, forKey: Name(stringValue: "keys"))
            }
        }
    }
}
