public import Foundation
public import DecantCodecs

/// What a plain property list holds, without a model: its top-level shape, every array of dictionaries (key path,
/// how many dictionaries, their keys with the kinds of value seen), the values that hold keyed archives decoded in
/// place, and a starting ``PropertyListMapping`` (an entity per array, a property per key) for a user to edit.
///
/// ```swift
/// let survey = try PropertyListSurvey(data: Data(contentsOf: url), path: "Bookmarks.plist")
/// for array in survey.arrays { print(array.keyPath, array.count) }
/// ```
///
/// The property list is decoded whole with the codecs' limits (depth, size, reference cycles in binary lists,
/// UTF-8): a damaged file throws ``DecantError`` `.malformedInput` with its offset or line.
public struct PropertyListSurvey: Sendable, Hashable, Encodable {
    /// An array whose elements are all dictionaries.
    public struct ArrayOfDictionaries: Sendable, Hashable, Encodable {
        /// Its key path (``PropertyListOptions``): dictionary keys from the top, `""` for the top-level array.
        public var keyPath: String
        /// How many dictionaries it holds (over every dictionary of the enclosing array, for a nested one).
        public var count: Int
        /// Whether it is reached through dictionaries only, so `--key-path` can choose it.
        public var isTopLevel: Bool
        /// The keys of its dictionaries, sorted.
        public var keys: [Key]
    }

    /// One key of an array's dictionaries.
    public struct Key: Sendable, Hashable, Encodable {
        /// The key.
        public var name: String
        /// In how many of the dictionaries it appears.
        public var count: Int
        /// The kinds of value seen, with how often: `string`, `integer`, `date`, `data`, `archive of NSDate`,
        /// `array of dictionaries`, `array of string`, ….
        public var kinds: [String: Int]
    }

    /// A value holding a keyed archive.
    public struct ArchivedValue: Sendable, Hashable, Encodable {
        /// Where it is: `Bookmarks[2].Icon`.
        public var place: String
        /// The class of the archive's root object.
        public var rootClass: String?
        /// The root decoded: `date 2024-05-19T18:14:06Z`, `url https://…`, `object of class MyColor`.
        public var value: String
        /// The number of `$objects` entries.
        public var objectCount: Int
    }

    /// How many archived values are listed (``archiveCount`` counts them all).
    public static let listedArchives = 50

    /// The file, as named.
    public var path: String
    /// `binary` or `xml`.
    public var encoding: String
    /// The top-level value's kind: `array`, `dictionary`, `string`, ….
    public var top: String
    /// The number of elements or keys of the top-level value.
    public var topCount: Int
    /// The keys of a top-level dictionary with the kind of each value, in the file's order.
    public var topKeys: [Key]
    /// Every array of dictionaries, in the order met.
    public var arrays: [ArrayOfDictionaries]
    /// The first ``listedArchives`` values holding keyed archives.
    public var archives: [ArchivedValue]
    /// How many values hold keyed archives.
    public var archiveCount: Int
    /// A starting mapping: the array to convert, an entity per array, a property per key.
    public var mapping: PropertyListMapping

    /// Surveys a property list from its bytes.
    /// - Throws: ``DecantError`` `.malformedInput` naming the offset, line or value that is wrong.
    public init(data: Data, path: String) throws {
        let value = try PropertyListValue.decode(from: data, path: path)
        let encoding = BinaryPropertyListReader.isBinaryPropertyList(data) ? "binary" : "xml"
        try self.init(value: value, path: path, encoding: encoding)
    }

    /// Surveys a decoded property list.
    public init(value: PropertyListValue, path: String, encoding: String) throws {
        self.path = path
        self.encoding = encoding
        self.top = value.arrayValue != nil ? value.kindName : Self.kind(of: value)
        switch value {
        case .array(let elements), .set(let elements): topCount = elements.count
        case .dictionary(let dictionary): topCount = dictionary.count
        default: topCount = 1
        }
        var walk = Walk(path: path)
        try walk.visit(value, keyPath: "", place: "", isTopLevel: true)
        self.topKeys = (value.dictionaryValue ?? [:]).map { key, value in
            Key(name: key, count: 1, kinds: [walk.kinds[Self.join("", key)] ?? Self.kind(of: value): 1])
        }
        self.arrays = walk.order.compactMap { walk.arrays[$0] }.map { array in
            ArrayOfDictionaries(
                keyPath: array.keyPath, count: array.count, isTopLevel: array.isTopLevel,
                keys: array.keyOrder.map {
                    Key(name: $0, count: array.keyCounts[$0] ?? 0, kinds: array.kinds[$0] ?? [:])
                }.sorted { $0.name < $1.name })
        }
        self.archives = walk.archives
        self.archiveCount = walk.archiveCount
        self.mapping = Self.startingMapping(arrays: arrays, path: path)
    }

    /// The top-level arrays (reached through dictionaries only) of `value`, by key path, in the file's order.
    static func topLevelArrays(in value: PropertyListValue) -> [(keyPath: String, elements: [PropertyListValue])] {
        var found: [(keyPath: String, elements: [PropertyListValue])] = []
        func visit(_ value: PropertyListValue, keyPath: String, depth: Int) {
            guard depth < 1024 else { return }
            switch value {
            case .array(let elements), .set(let elements):
                if isArrayOfDictionaries(elements) { found.append((keyPath, elements)) }
            case .dictionary(let dictionary):
                for (key, inner) in dictionary { visit(inner, keyPath: join(keyPath, key), depth: depth + 1) }
            default: break
            }
        }
        visit(value, keyPath: "", depth: 0)
        return found
    }

    /// Whether every element is a dictionary (and there is one at least).
    static func isArrayOfDictionaries(_ elements: [PropertyListValue]) -> Bool {
        !elements.isEmpty && elements.allSatisfy { $0.dictionaryValue != nil }
    }

    /// `key` appended to a key path.
    static func join(_ keyPath: String, _ key: String) -> String {
        keyPath.isEmpty ? key : keyPath + "." + key
    }

    /// A value's kind, as `inspect` shows it (an archive's kind needs the walk, which decodes it).
    static func kind(of value: PropertyListValue) -> String {
        switch value {
        case .array(let elements), .set(let elements):
            let label = value.kindName
            if elements.isEmpty { return "empty \(label)" }
            if isArrayOfDictionaries(elements) { return "\(label) of dictionaries" }
            let kinds = Set(elements.map { $0.kindName })
            return "\(label) of \(kinds.sorted().joined(separator: ", "))"
        case .bool: return "boolean"
        default: return value.kindName
        }
    }

    /// The walk over the tree that collects arrays, keys and archives.
    private struct Walk {
        struct ArrayInfo {
            var keyPath: String
            var count = 0
            var isTopLevel: Bool
            var keyOrder: [String] = []
            var keyCounts: [String: Int] = [:]
            var kinds: [String: [String: Int]] = [:]
        }

        let path: String
        var arrays: [String: ArrayInfo] = [:]
        var order: [String] = []
        var archives: [ArchivedValue] = []
        var archiveCount = 0
        /// The kind of the top-level dictionary's values, where the walk decided it (archives).
        var kinds: [String: String] = [:]

        init(path: String) { self.path = path }

        /// Visits `value` and returns its kind.
        @discardableResult
        mutating func visit(_ value: PropertyListValue, keyPath: String, place: String, isTopLevel: Bool) throws
            -> String
        {
            switch value {
            case .dictionary(let dictionary):
                for (key, inner) in dictionary {
                    let kind = try visit(
                        inner, keyPath: join(keyPath, key), place: join(place, key), isTopLevel: isTopLevel)
                    if place.isEmpty { kinds[key] = kind }
                }
            case .array(let elements), .set(let elements):
                let isArrayOfDictionaries = PropertyListSurvey.isArrayOfDictionaries(elements)
                if isArrayOfDictionaries, arrays[keyPath] == nil {
                    arrays[keyPath] = ArrayInfo(keyPath: keyPath, isTopLevel: isTopLevel)
                    order.append(keyPath)
                }
                for (index, element) in elements.enumerated() {
                    let elementPlace = "\(place)[\(index)]"
                    guard isArrayOfDictionaries, let dictionary = element.dictionaryValue else {
                        try visit(element, keyPath: keyPath, place: elementPlace, isTopLevel: false)
                        continue
                    }
                    arrays[keyPath]?.count += 1
                    for (key, inner) in dictionary {
                        let kind = try visit(
                            inner, keyPath: join(keyPath, key), place: elementPlace + "." + key, isTopLevel: false)
                        if arrays[keyPath]?.keyCounts[key] == nil { arrays[keyPath]?.keyOrder.append(key) }
                        arrays[keyPath]?.keyCounts[key, default: 0] += 1
                        arrays[keyPath]?.kinds[key, default: [:]][kind, default: 0] += 1
                    }
                }
            case .data(let data):
                guard let archive = try PropertyListArchivedValue.archive(in: data, path: path, place: place) else {
                    break
                }
                let root = try PropertyListArchivedValue.root(of: archive, path: path, place: place)
                let rootClass: String? = (try? archive.rootObject())?.className ?? nil
                archiveCount += 1
                if archives.count < PropertyListSurvey.listedArchives {
                    archives.append(
                        ArchivedValue(
                            place: place, rootClass: rootClass,
                            value: PropertyListArchivedValue.summary(of: root), objectCount: archive.objectCount))
                }
                return "archive of \(rootClass ?? "?")"
            default:
                break
            }
            return PropertyListSurvey.kind(of: value)
        }
    }

    /// An entity per array (the array's last key, singular, capitalised; the file's name for the top-level array),
    /// a property per key (its name with a lower-case first letter).
    static func startingMapping(arrays: [ArrayOfDictionaries], path: String) -> PropertyListMapping {
        var mapping = PropertyListMapping()
        let topLevel = arrays.filter(\.isTopLevel)
        mapping.keyPath = topLevel.first.flatMap { $0.keyPath.isEmpty ? nil : $0.keyPath }
        for array in arrays {
            let last = array.keyPath.split(separator: ".").last.map(String.init)
                ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            var keys: [String: String?] = [:]
            for key in array.keys { keys[key.name] = propertyName(key.name) }
            mapping.arrays[array.keyPath] = PropertyListMapping.ArrayMapping(entity: entityName(last), keys: keys)
        }
        return mapping
    }

    /// `Bookmarks` → `Bookmark`, `categories` → `Category`, `my-items` → `MyItem`.
    static func entityName(_ key: String) -> String {
        let words = key.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        var name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if name.hasSuffix("ies"), name.count > 4 {
            name = name.dropLast(3) + "y"
        } else if name.hasSuffix("s"), !name.hasSuffix("ss"), name.count > 3 {
            name.removeLast()
        }
        if name.isEmpty || name.first?.isNumber == true { name = "Item" + name }
        return name
    }

    /// `URLString` → `urlString`, `Title` → `title`, `date_added` → `dateAdded`.
    static func propertyName(_ key: String) -> String {
        let words = key.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        guard let first = words.first else { return key }
        // The leading capitals of the first word are lowered, keeping the last when a lower-case letter follows.
        let characters = Array(first)
        var upper = 0
        while upper < characters.count, characters[upper].isUppercase { upper += 1 }
        let lowered = upper > 1 && upper < characters.count ? upper - 1 : upper
        let head = String(characters.prefix(lowered)).lowercased() + String(characters.dropFirst(lowered))
        return head + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
