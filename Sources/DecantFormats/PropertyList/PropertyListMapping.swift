public import DecantCore
import DecantCodecs
public import Foundation

/// Which array of a property list becomes the objects, the entity each array of dictionaries becomes, and keys
/// renamed where the name rules do not find a property: the mapping file of `decant convert --plist-mapping`, and
/// what `decant inspect FILE.plist` prints as a start.
///
/// ```json
/// {
///   "keyPath": "Library.Bookmarks",
///   "arrays": {
///     "Library.Bookmarks": { "entity": "Bookmark", "keys": { "URLString": "url", "Cache": null } },
///     "Library.Bookmarks.Children": "Bookmark"
///   }
/// }
/// ```
///
/// An array mapped to `null` is left out, and so is a key renamed to `null`. Keys not renamed are found as JSON keys
/// are (``PropertyNameMatch``).
public struct PropertyListMapping: Sendable, Hashable {
    /// What one array of dictionaries becomes.
    public struct ArrayMapping: Sendable, Hashable {
        /// The entity, or `nil` to leave the array out.
        public var entity: String?
        /// Key → property name (`nil`: left out), for keys the name rules do not find.
        public var keys: [String: String?]

        /// Creates an array mapping.
        public init(entity: String?, keys: [String: String?] = [:]) {
            self.entity = entity
            self.keys = keys
        }
    }

    /// The array whose dictionaries become the objects (`nil`: the top-level array, or the only one).
    public var keyPath: String?
    /// Per array key path, what its dictionaries become.
    public var arrays: [String: ArrayMapping]

    /// Creates a mapping.
    public init(keyPath: String? = nil, arrays: [String: ArrayMapping] = [:]) {
        self.keyPath = keyPath
        self.arrays = arrays
    }

    /// Reads a mapping file.
    /// - Throws: `.fileNotFound` when it is missing, `.malformedInput` naming the key that is not as described.
    public init(contentsOf url: URL) throws {
        let data = try JSONMappingFile.data(at: url, describing: "property-list mapping")
        try self.init(json: data, location: Location(path: url.displayPath))
    }

    /// Reads a mapping from JSON bytes.
    /// - Throws: `.malformedInput` naming the key that is not as described.
    public init(json data: Data, location: Location = Location()) throws {
        func failure(_ message: String, key: String) -> DecantError {
            JSONMappingFile.failure(message, key: key, at: location)
        }
        let root = try JSONMappingFile.object(
            data, at: location, describing: "property-list mapping", shape: "an object with \"keyPath\" and \"arrays\"", key: "arrays")
        if let unknown = root.keys.sorted().first(where: { $0 != "keyPath" && $0 != "arrays" }) {
            throw failure("unknown key \(unknown.debugDescription) (expected keyPath and arrays)", key: unknown)
        }
        let keyPath = root["keyPath"]
        guard keyPath == nil || keyPath is NSNull || keyPath is String else {
            throw failure("\"keyPath\" must be a string or null", key: "keyPath")
        }
        self.keyPath = keyPath as? String
        guard let arrays = (root["arrays"] ?? [String: Any]()) as? [String: Any] else {
            throw failure("\"arrays\" must be an object of key path → entity", key: "arrays")
        }
        var mappings: [String: ArrayMapping] = [:]
        for (path, value) in arrays {
            let key = "arrays.\(path)"
            if value is NSNull {
                mappings[path] = ArrayMapping(entity: nil)
            } else if let entity = value as? String {
                mappings[path] = ArrayMapping(entity: entity)
            } else if let object = value as? [String: Any] {
                if let unknown = object.keys.sorted().first(where: { $0 != "entity" && $0 != "keys" }) {
                    throw failure("unknown key \(unknown.debugDescription) (expected entity and keys)", key: key)
                }
                let entity = object["entity"]
                guard entity is NSNull || entity is String else {
                    throw failure("\"entity\" must be a string or null", key: "\(key).entity")
                }
                guard let keys = (object["keys"] ?? [String: Any]()) as? [String: Any] else {
                    throw failure("\"keys\" must be an object of key → property name", key: "\(key).keys")
                }
                var renamed: [String: String?] = [:]
                for (name, property) in keys {
                    if property is NSNull {
                        renamed[name] = .some(nil)
                    } else if let property = property as? String {
                        renamed[name] = property
                    } else {
                        throw failure("a key maps to a property name or null", key: "\(key).keys.\(name)")
                    }
                }
                mappings[path] = ArrayMapping(entity: entity as? String, keys: renamed)
            } else {
                throw failure("an array maps to an entity name, null, or {\"entity\", \"keys\"}", key: key)
            }
        }
        self.arrays = mappings
    }

    /// Adds this mapping to `options`; an array or key left out maps to the empty name, which the reader skips.
    public func apply(to options: inout FormatOptions) {
        if let keyPath { options.propertyList.keyPath = keyPath }
        for (path, mapping) in arrays {
            options.propertyList.arrayEntities[path] = mapping.entity ?? ""
            if !mapping.keys.isEmpty {
                options.propertyList.arrayKeys[path] = mapping.keys.mapValues { $0 ?? "" }
            }
        }
    }

    /// Adds a mapping file (when given), then `--key-path` (when given), to `options`.
    public static func options(file: URL?, keyPath: String?, into options: inout FormatOptions) throws {
        if let file { try PropertyListMapping(contentsOf: file).apply(to: &options) }
        if let keyPath { options.propertyList.keyPath = keyPath }
    }

    /// The mapping as the JSON a user edits: keys sorted, an array without renamed keys as a plain entity name.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

extension PropertyListMapping: Encodable {
    private struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes as the mapping file reads: `{"keyPath": …, "arrays": {"Bookmarks": "Bookmark", …}}`.
    public func encode(to encoder: any Encoder) throws {
        var root = encoder.container(keyedBy: Name.self)
        try root.encode(keyPath, forKey: Name(stringValue: "keyPath"))
        var container = root.nestedContainer(keyedBy: Name.self, forKey: Name(stringValue: "arrays"))
        for (path, mapping) in arrays.sorted(by: { $0.key < $1.key }) {
            let key = Name(stringValue: path)
            if mapping.keys.isEmpty {
                try container.encode(mapping.entity, forKey: key)
            } else {
                var nested = container.nestedContainer(keyedBy: Name.self, forKey: key)
                try nested.encode(mapping.entity, forKey: Name(stringValue: "entity"))
                var keys = nested.nestedContainer(keyedBy: Name.self, forKey: Name(stringValue: "keys"))
                for (name, property) in mapping.keys.sorted(by: { $0.key < $1.key }) {
                    try keys.encode(property, forKey: Name(stringValue: name))
                }
            }
        }
    }
}
