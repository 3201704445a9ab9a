public import Foundation
import DecantCodecs

/// What a keyed archive holds, without a model: every class with its object count, the coder keys of the app
/// classes with the kinds of value seen under each, and a starting ``ArchiveMapping`` (each app class to the entity
/// of its short name) for a user to edit.
///
/// ```swift
/// let survey = try ArchiveSurvey(data: Data(contentsOf: url), path: "LegacyNotes.archive")
/// for archivedClass in survey.classes { print(archivedClass.name, archivedClass.count) }
/// ```
///
/// Every object's class and references are checked on the way, so a damaged archive throws ``DecantError``
/// `.malformedInput` naming the object and key; collections are looked into one level only, so cyclic containers
/// are fine.
public struct ArchiveSurvey: Sendable, Hashable, Encodable {
    /// One class of the archive.
    public struct ArchivedClass: Sendable, Hashable, Encodable {
        /// The `$classname`.
        public var name: String
        /// The superclasses from `$classes`, nearest first.
        public var superclasses: [String]
        /// How many objects of the class the archive holds.
        public var count: Int
        /// Whether the class is a Foundation value or collection class, decoded to values rather than objects.
        public var isValueClass: Bool
        /// For classes that are not value classes: their coder keys, sorted.
        public var keys: [Key]
    }

    /// One coder key of a class.
    public struct Key: Sendable, Hashable, Encodable {
        /// The coder key.
        public var name: String
        /// In how many of the class's objects the key appears.
        public var count: Int
        /// The kinds of value seen, sorted, with how often: `string`, `integer`, `date`, `nil`, `array of
        /// LegacyNote`, `→ LegacyFolder` (a reference to an object of that class), ….
        public var kinds: [String: Int]
    }

    /// The file, as named.
    public var path: String
    /// The property-list form: `binary` or `xml`.
    public var encoding: String
    /// The number of `$objects` entries.
    public var objectCount: Int
    /// The `$top` keys.
    public var topKeys: [String]
    /// The class of the root object (`$top.root`), if it is an object.
    public var rootClass: String?
    /// Every class, app classes first, then by name.
    public var classes: [ArchivedClass]
    /// A starting mapping: each app class to the entity named as the part of its name after its last `.`.
    public var mapping: ArchiveMapping

    /// Surveys an archive from its bytes.
    /// - Throws: ``DecantError`` `.malformedInput` naming the object and key that are wrong.
    public init(data: Data, path: String) throws {
        let archive = try KeyedArchive(data: data, path: path)
        self.path = path
        self.encoding = BinaryPropertyListReader.isBinaryPropertyList(data) ? "binary" : "xml"
        self.objectCount = archive.objectCount
        self.topKeys = archive.topKeys
        if case .uid? = archive.topValue(forKey: "root"),
            let root = try archive.topReference(forKey: "root")
        {
            self.rootClass = try archive.object(at: root).className
        }
        var byName: [String: ArchivedClass] = [:]
        var keyCounts: [String: [String: Int]] = [:]
        var kindCounts: [String: [String: [String: Int]]] = [:]
        for index in 0..<archive.objectCount {
            let object = try archive.object(at: index)
            guard let name = object.className else { continue }
            let isValueClass = ArchiveField.isValueClass(object)
            byName[
                name,
                default: ArchivedClass(
                    name: name, superclasses: Array(object.classes.drop { $0 == name }), count: 0,
                    isValueClass: isValueClass, keys: [])
            ].count += 1
            if isValueClass {
                // Decoding the value checks its encoding (a dictionary's keys and objects, an NSValue's kind, …).
                _ = try ArchiveField.resolve(object, in: archive)
                continue
            }
            for (key, value) in object.fields {
                keyCounts[name, default: [:]][key, default: 0] += 1
                let kind = try archive.inField(key, of: object) { try Self.kind(of: value, in: archive) }
                kindCounts[name, default: [:]][key, default: [:]][kind, default: 0] += 1
            }
        }
        for (name, keys) in keyCounts {
            byName[name]?.keys = keys.keys.sorted().map { key in
                Key(name: key, count: keys[key] ?? 0, kinds: kindCounts[name]?[key] ?? [:])
            }
        }
        self.classes = byName.values.sorted {
            ($0.isValueClass ? 1 : 0, $0.name) < ($1.isValueClass ? 1 : 0, $1.name)
        }
        var mapping = ArchiveMapping()
        for archivedClass in classes
        where !archivedClass.isValueClass && !ArchiveReader.isFoundationClass(archivedClass.name) {
            mapping.classes[archivedClass.name] = ArchiveMapping.ClassMapping(
                entity: ArchiveReader.shortName(archivedClass.name))
        }
        self.mapping = mapping
    }

    /// The kind of a coder key's value: a Foundation value's kind, a collection with the kinds of its elements
    /// (`array of LegacyNote, string`), or `→ Class` for a reference to another object.
    static func kind(of value: PropertyListValue, in archive: KeyedArchive) throws -> String {
        let field = try ArchiveField.resolve(value, in: archive)
        guard case .collection(let kind, _, let elements) = field else { return field.kindName }
        var elementKinds = Set<String>()
        for element in elements {
            let resolved = try ArchiveField.resolve(element, in: archive)
            switch resolved {
            case .object(let object): elementKinds.insert(object.className ?? "?")
            case .collection(let inner, _, _): elementKinds.insert(inner)
            default: elementKinds.insert(resolved.kindName)
            }
        }
        let label = kind == "orderedSet" ? "ordered set" : kind
        return elementKinds.isEmpty
            ? label : "\(label) of \(elementKinds.sorted().joined(separator: ", "))"
    }
}
