package import DecantCore
public import Foundation
import Synchronization

/// An NSKeyedArchiver archive read as an index-addressed object graph, without Foundation's unarchiver.
///
/// ```swift
/// let archive = try KeyedArchive(data: data, path: "SampleModel.mom")
/// guard let root = try archive.rootObject() else { return }
/// for (name, reference) in try archive.stringKeyedEntries(forKey: "NSEntities", in: root) ?? [] {
///     let entity = try archive.object(for: reference)
/// }
/// ```
///
/// Objects are addressed by their `$objects` index, so cyclic graphs (model ↔ entity ↔ property) need no special
/// care: walk by index and memoise. A reference is `nil` when it is UID 0 or points at any entry equal to the
/// string `$null`. Every error is a ``DecantError`` with code `.malformedInput` naming the object index.
public struct KeyedArchive: Sendable {
    /// How many archives deep ``nestedArchive(_:)`` may go. Defaults to 8.
    public static let maximumNestingDepth = 8

    /// The file name put into error locations.
    public let path: String?
    /// The `$archiver` value (always `NSKeyedArchiver` in Apple's files).
    public let archiverName: String
    /// The `$version` value (always 100000).
    public let version: Int64
    /// The `$top` dictionary as written: usually `{root: UID}`, sometimes several keys or inline scalars.
    public let top: PropertyListDictionary
    /// 0 for an archive read from a file, 1 for an archive nested in a data value of it, and so on.
    public let nestingDepth: Int
    /// The number of entries in `$objects`.
    public let objectCount: Int
    private let storage: Storage
    private let classCache = ClassCache()

    /// Where the `$objects` entries are.
    private enum Storage: Sendable {
        /// Decoded (XML archives, and archives built from a property-list value).
        case tree([PropertyListValue])
        /// In the bytes of a binary property list: the references of the `$objects` array.
        case binary(BinaryPropertyList, objects: BinaryPropertyList.References)
    }

    /// The `$objects` array as written, every entry decoded.
    ///
    /// A binary archive decodes its entries on each use of this property; large archives are better walked with
    /// ``objectCount`` and ``entry(at:)`` or ``object(at:)``.
    public var objects: [PropertyListValue] {
        switch storage {
        case .tree(let objects): objects
        // The entries were checked on opening, so decoding them cannot fail.
        case .binary: (0..<objectCount).map { (try? entry(at: $0)) ?? .null }
        }
    }

    /// Reads an archive from binary or XML property-list bytes; a binary one is read lazily.
    public init(data: Data, path: String? = nil) throws {
        try self.init(data: data, path: path, nestingDepth: 0)
    }

    package init(data: Data, path: String?, nestingDepth: Int) throws {
        guard BinaryPropertyListReader.isBinaryPropertyList(data) else {
            try self.init(
                propertyList: PropertyListValue.decode(from: data, path: path), path: path, nestingDepth: nestingDepth)
            return
        }
        try self.init(list: BinaryPropertyList(data: data, path: path), path: path, nestingDepth: nestingDepth)
    }

    /// Opens the archive in `file`: a binary one stays on disk and is read a block at a time (see ``FileBlocks``),
    /// anything else is read whole, as ``init(data:path:)`` reads it. A binary archive's structure check (a walk over
    /// every object) runs on a thread of its own: the caller may walk the objects meanwhile, and must finish the
    /// check before it trusts what it found, reporting the check's error first (``BinaryPropertyList/StructureCheck``).
    /// - Throws: as ``init(data:path:)``, and `.ioError` when the file cannot be read.
    package static func opening(file: FileBlocks) throws -> (KeyedArchive, BinaryPropertyList.StructureCheck?) {
        let isBinary = try file.withBlocks { blocks in
            file.size >= 6 && (0..<6).map { blocks.byte(at: $0) }.elementsEqual(Array("bplist".utf8))
        }
        guard isBinary else {
            return (try KeyedArchive(data: file.wholeFile(), path: file.path, nestingDepth: 0), nil)
        }
        let list = try BinaryPropertyList(file: file, checksStructure: false)
        let check = list.startStructureCheck()
        do {
            return (try KeyedArchive(list: list, path: file.path, nestingDepth: 0), check)
        } catch {
            try check.finish()
            throw error
        }
    }

    private init(list: BinaryPropertyList, path: String?, nestingDepth: Int) throws {
        // The top dictionary is read one level deep: every key but `$objects` is decoded (they are small), and
        // `$objects` stays a span of references into the bytes.
        let (header, objects) = try list.withCursor { cursor -> (PropertyListValue, BinaryPropertyList.References?) in
            guard let (keys, values) = try cursor.entries(of: list.topObject) else {
                return (try list.value(at: list.topObject), nil)
            }
            var header = PropertyListDictionary(minimumCapacity: keys.count)
            var objects: BinaryPropertyList.References?
            for item in 0..<keys.count {
                let keyReference = try cursor.reference(keys, item)
                guard let key = try cursor.string(at: keyReference) else { continue }
                let valueReference = try cursor.reference(values, item)
                if key == "$objects" {
                    let isArray = try cursor.marker(of: valueReference) >> 4 == 0xA
                    objects = isArray ? try cursor.elements(of: valueReference) : nil
                    header[key] = .array([])
                } else {
                    header[key] = try list.value(at: valueReference)
                }
            }
            return (.dictionary(header), objects)
        }
        let (archiver, version, top) = try Self.checkHeader(header, path: path)
        guard let objects, objects.count > 0 else {
            throw DecantError(
                .malformedInput, "keyed archive has no non-empty $objects array",
                at: Location(path: path, keyPath: "$objects"))
        }
        try self.init(
            path: path, archiverName: archiver, version: version, top: top, nestingDepth: nestingDepth,
            objectCount: objects.count, storage: .binary(list, objects: objects))
    }

    /// Reads an archive from an already decoded property list, checking `$archiver`, `$version`, `$top` and
    /// `$objects` and that every reference in `$top` lies inside `$objects`.
    public init(propertyList: PropertyListValue, path: String? = nil) throws {
        try self.init(propertyList: propertyList, path: path, nestingDepth: 0)
    }

    package init(propertyList: PropertyListValue, path: String?, nestingDepth: Int) throws {
        let (archiver, version, top) = try Self.checkHeader(propertyList, path: path)
        guard case .array(let objects)? = propertyList["$objects"], !objects.isEmpty else {
            throw DecantError(
                .malformedInput, "keyed archive has no non-empty $objects array",
                at: Location(path: path, keyPath: "$objects"))
        }
        try self.init(
            path: path, archiverName: archiver, version: version, top: top, nestingDepth: nestingDepth,
            objectCount: objects.count, storage: .tree(objects))
    }

    private init(
        path: String?, archiverName: String, version: Int64, top: PropertyListDictionary, nestingDepth: Int,
        objectCount: Int, storage: Storage
    ) throws {
        self.path = path
        self.archiverName = archiverName
        self.version = version
        self.top = top
        self.nestingDepth = nestingDepth
        self.objectCount = objectCount
        self.storage = storage
        for (key, value) in top {
            try checkReferences(in: value, owner: nil, key: "$top.\(key)", depth: 0)
        }
    }

    /// Checks `$archiver`, `$version` and `$top` of an archive's top-level value.
    private static func checkHeader(
        _ propertyList: PropertyListValue, path: String?
    ) throws -> (String, Int64, PropertyListDictionary) {
        func failure(_ message: String, key: String? = nil) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, keyPath: key))
        }
        guard case .dictionary(let archive) = propertyList else {
            throw failure("keyed archive is a \(propertyList.kindName), not a dictionary")
        }
        guard case .string(let archiver)? = archive["$archiver"] else {
            throw failure("keyed archive has no $archiver string", key: "$archiver")
        }
        guard archiver == "NSKeyedArchiver" else {
            throw failure("$archiver is '\(archiver)', not NSKeyedArchiver", key: "$archiver")
        }
        guard case .integer(let version)? = archive["$version"] else {
            throw failure("keyed archive has no $version integer", key: "$version")
        }
        guard version == 100_000 else {
            throw failure("$version is \(version), not 100000", key: "$version")
        }
        guard case .dictionary(let top)? = archive["$top"] else {
            throw failure("keyed archive has no $top dictionary", key: "$top")
        }
        return (archiver, version, top)
    }

    /// The `$objects` entry at `index` as written (an object is a dictionary of its coder keys and `$class`).
    ///
    /// Throws when the index is outside `$objects`.
    public func entry(at index: Int) throws -> PropertyListValue {
        guard index >= 0, index < objectCount else {
            throw error("object index \(index) is outside $objects (\(objectCount) entries)", object: nil, key: nil)
        }
        switch storage {
        case .tree(let objects):
            return objects[index]
        case .binary(let list, let objects):
            return try list.withCursor { cursor in
                var memo: [Int: PropertyListValue]? = nil
                return try cursor.value(at: cursor.reference(objects, index), memo: &memo)
            }
        }
    }

    /// Whether entry `index` is the string `$null`, without decoding other entries.
    private func isNullString(at index: Int) -> Bool {
        switch storage {
        case .tree(let objects):
            return objects[index] == .string("$null")
        case .binary(let list, let objects):
            return (try? list.withCursor { try $0.isString($0.reference(objects, index), "$null") }) ?? false
        }
    }

    /// The keys of `$top`, in archive order.
    public var topKeys: [String] { top.keys }

    /// The `$top` value for `key` as written (a UID or an inline scalar).
    public func topValue(forKey key: String) -> PropertyListValue? { top[key] }

    /// The object index that `$top[key]` refers to, or `nil` when it refers to nil.
    ///
    /// Throws when the key is missing or its value is not a reference.
    public func topReference(forKey key: String) throws -> Int? {
        guard let value = top[key] else {
            throw error("$top has no key '\(key)'", object: nil, key: "$top")
        }
        guard case .uid = value else {
            throw error("$top.\(key) is an inline \(value.kindName), not a reference", object: nil, key: "$top")
        }
        return try reference(value)
    }

    /// The object `$top.root` refers to (the root of `archivedData(withRootObject:)`), or `nil` for nil.
    public func rootObject() throws -> ArchivedObject? {
        guard let index = try topReference(forKey: "root") else { return nil }
        return try object(at: index)
    }

    /// Whether the entry at `index` stands for nil: index 0, or an entry equal to the string `$null`.
    public func isNull(at index: Int) -> Bool {
        index == 0 || (index > 0 && index < objectCount && isNullString(at: index))
    }

    /// The object index a `.uid` value refers to, or `nil` for UID 0 or a `$null` entry.
    ///
    /// Throws when `value` is not a UID or points outside `$objects`.
    public func reference(_ value: PropertyListValue) throws -> Int? {
        guard case .uid(let uid) = value else {
            throw error("expected an object reference, found an inline \(value.kindName)", object: nil, key: nil)
        }
        guard uid < UInt64(objectCount) else {
            throw error(
                "reference \(uid) is past the end of $objects (\(objectCount) entries)",
                object: nil,
                key: nil
            )
        }
        let index = Int(uid)
        return isNull(at: index) ? nil : index
    }

    /// The object a field value refers to: `nil` for a missing value or a nil reference.
    ///
    /// An inline scalar (a string or number written in place) comes back as a plain ``ArchivedObject`` with
    /// index -1, so callers can treat both forms alike.
    public func object(for value: PropertyListValue?) throws -> ArchivedObject? {
        guard let value, !value.isNull else { return nil }
        guard case .uid = value else {
            return ArchivedObject(index: -1, className: nil, classes: [], fields: [:], value: value)
        }
        guard let index = try reference(value) else { return nil }
        return try object(at: index)
    }

    /// The entry at `index`, with its class resolved and every reference in its fields checked.
    ///
    /// Throws when the index is outside `$objects`, `$class` does not point at a class dictionary
    /// (`{$classname, $classes}`), or a field refers outside `$objects`.
    public func object(at index: Int) throws -> ArchivedObject {
        guard case .binary(let list, let objects) = storage, index >= 0, index < objectCount else {
            return try object(at: index, entry: entry(at: index))
        }
        // Straight from the bytes: the fields are collected without building the entry first.
        let (fields, classEntry, plain) = try list.withCursor {
            cursor -> (PropertyListDictionary, ArchivedObject.ClassEntry?, PropertyListValue?) in
            let reference = try cursor.reference(objects, index)
            var memo: [Int: PropertyListValue]? = nil
            guard let (keys, values) = try cursor.entries(of: reference) else {
                return ([:], nil, try cursor.value(at: reference, memo: &memo))
            }
            var fields = PropertyListDictionary(minimumCapacity: keys.count)
            var classEntry: ArchivedObject.ClassEntry?
            for item in 0..<keys.count {
                let key = try cursor.string(at: cursor.reference(keys, item)) ?? ""
                let value = try cursor.value(at: cursor.reference(values, item), memo: &memo)
                if key == "$class" {
                    classEntry = ArchivedObject.ClassEntry(reference: value, position: fields.count)
                } else {
                    fields[key] = value
                }
            }
            return (fields, classEntry, nil)
        }
        guard let classEntry else {
            let value = plain ?? .dictionary(fields)
            return ArchivedObject(index: index, className: nil, classes: [], fields: [:], value: value)
        }
        let classIndex = try checkedClassIndex(classEntry.reference, owner: index)
        let (className, classes) = try classDescription(at: classIndex, owner: index)
        for (key, field) in fields {
            try checkReferences(in: field, owner: index, key: key, depth: 0)
        }
        return ArchivedObject(
            index: index, className: className, classes: classes, fields: fields, classEntry: classEntry)
    }

    /// Runs `body` with a cursor over a binary archive's bytes and the references of its `$objects` array: one cursor
    /// for many look-ups (a batch of records). Returns nil, without running `body`, for an archive decoded whole.
    /// - Throws: what `body` throws, and what reading the file found (see ``BinaryPropertyList/withCursor(_:)``).
    package func withBinaryCursor<T>(
        _ body: (BinaryPropertyList.Cursor, BinaryPropertyList.References) throws -> T
    ) throws -> T? {
        guard case .binary(let list, let objects) = storage else { return nil }
        return try list.withCursor { try body($0, objects) }
    }

    /// The key objects and class of an archived object's dictionary. NSKeyedArchiver writes each key string once,
    /// so the objects of a class share their key objects: a reader that decoded one object reads the next one's
    /// values by position (``fieldValues(at:shapedLike:)``), without decoding its keys and class again.
    package struct FieldShape: Sendable, Equatable {
        /// The dictionary's key objects in order, `$class` included.
        package var keyReferences: [Int]
        /// The position of `$class` among them, and the UID it holds.
        package var classPosition: Int
        package var classUID: UInt64
        /// Per key object, its bytes in the file (marker, count and characters; empty for a key that is not a
        /// string): Foundation's archiver on Linux writes every dictionary's key strings anew rather than once.
        package var keyEncodings: [[UInt8]] = []

        /// The value references of dictionary object `entry` when it has exactly these key objects and class; nil
        /// when it has not, or is not a dictionary.
        package func values(of entry: Int, cursor: BinaryPropertyList.Cursor) throws -> BinaryPropertyList.References? {
            guard let (keys, values) = try cursor.entries(of: entry), keys.count == keyReferences.count else {
                return nil
            }
            for item in 0..<keys.count where try cursor.reference(keys, item) != keyReferences[item] { return nil }
            guard try cursor.uid(of: cursor.reference(values, classPosition)) == classUID else { return nil }
            return values
        }

        /// The value references of dictionary object `entry` when it has these key objects in any order, each
        /// once, and this class; `order` then holds, per item of the entry, its key's position in
        /// ``keyReferences``. Nil when it has not, or is not a dictionary. Foundation's archiver writes each
        /// object's keys in the order of that object's own hash table, which differs from object to object of a
        /// class (swift-corelibs-foundation seeds every dictionary anew), so the objects of a class share their
        /// key objects but rarely their order.
        package func valuesInAnyOrder(
            of entry: Int, cursor: BinaryPropertyList.Cursor, order: inout [Int]
        ) throws -> BinaryPropertyList.References? {
            guard let (keys, values) = try cursor.entries(of: entry), keys.count == keyReferences.count,
                keys.count <= UInt64.bitWidth
            else { return nil }
            order.removeAll(keepingCapacity: true)
            var seen: UInt64 = 0
            var classItem = 0
            for item in 0..<keys.count {
                let key = try cursor.reference(keys, item)
                // Mostly in the same place as in the shape; otherwise one of a few keys to look through, by object
                // or else by its bytes (a key string written again: the same text, so the same key).
                let known = keyReferences[item] == key ? item : keyReferences.firstIndex(of: key)
                guard let position = try known ?? position(ofKeyWrittenLike: key, cursor: cursor, hint: item),
                    seen & (1 << UInt64(position)) == 0
                else { return nil }
                seen |= 1 << UInt64(position)
                order.append(position)
                if position == classPosition { classItem = item }
            }
            // Every position once: `$class` is among them.
            guard try cursor.uid(of: cursor.reference(values, classItem)) == classUID else { return nil }
            return values
        }

        /// The position of the key whose bytes are those of string object `key` (tried at `hint` first); nil when
        /// none is, or `key` is not a string. The same bytes are the same text; the same text written another way
        /// (UTF-16 for ASCII, a long count for a short one) is not found, and leaves its object to the full way.
        private func position(ofKeyWrittenLike key: Int, cursor: BinaryPropertyList.Cursor, hint: Int) throws -> Int? {
            guard let span = try KeyedArchive.stringSpan(key, cursor: cursor) else { return nil }
            return cursor.bytes.withBytes(span) { written in
                func matches(_ encoding: [UInt8]) -> Bool {
                    guard encoding.count == written.count else { return false }
                    return encoding.withUnsafeBytes { raw in
                        guard let known = raw.baseAddress, let found = written.baseAddress else { return raw.isEmpty }
                        return memcmp(known, found, raw.count) == 0
                    }
                }
                if hint < keyEncodings.count, matches(keyEncodings[hint]) { return hint }
                return keyEncodings.firstIndex(where: matches)
            }
        }
    }

    /// The bytes of string object `reference` in the file, marker to last character (checked to lie in the object
    /// area); nil when it is not a string.
    package static func stringSpan(_ reference: Int, cursor: BinaryPropertyList.Cursor) throws -> Range<Int>? {
        let offset = try cursor.objectOffset(reference)
        let marker = cursor.bytes[offset]
        guard marker >> 4 == 0x5 || marker >> 4 == 0x6 else { return nil }
        let width = marker >> 4 == 0x5 ? 1 : 2
        let (length, start) = try cursor.count(marker: marker, at: offset)
        try cursor.checkSpan(start, count: length, width: width, objectStart: offset)
        return offset..<(start + length * width)
    }

    /// The shape of binary entry `index`: nil for an archive decoded whole or an entry that is not a dictionary with
    /// a `$class` UID (and for anything odd: ``object(at:)`` then decides).
    package func fieldShape(at index: Int) -> FieldShape? {
        guard case .binary(let list, let objects) = storage, index >= 0, index < objectCount else { return nil }
        return try? list.withCursor { cursor -> FieldShape? in
            guard let (keys, values) = try cursor.entries(of: cursor.reference(objects, index)) else { return nil }
            var references: [Int] = []
            var encodings: [[UInt8]] = []
            var classPosition: Int?
            var classUID: UInt64 = 0
            for item in 0..<keys.count {
                let key = try cursor.reference(keys, item)
                references.append(key)
                let span = try Self.stringSpan(key, cursor: cursor)
                encodings.append(span.map { cursor.bytes.withBytes($0, Array.init) } ?? [])
                guard try cursor.isString(key, "$class") else { continue }
                guard let uid = try cursor.uid(of: cursor.reference(values, item)) else { return nil }
                classPosition = item
                classUID = uid
            }
            return classPosition.map {
                FieldShape(keyReferences: references, classPosition: $0, classUID: classUID, keyEncodings: encodings)
            }
        }
    }

    /// The field values of entry `index` in key order, `$class` left out, when its dictionary has exactly `shape`'s
    /// key objects and class, as ``object(at:)`` would decode them (every reference in them checked); nil when it
    /// has not, or for anything odd: then ``object(at:)`` decides and names the problem.
    package func fieldValues(at index: Int, shapedLike shape: FieldShape) -> [PropertyListValue]? {
        guard case .binary(let list, let objects) = storage, index >= 0, index < objectCount else { return nil }
        let fields = try? list.withCursor { cursor -> [PropertyListValue]? in
            guard let values = try shape.values(of: cursor.reference(objects, index), cursor: cursor) else {
                return nil
            }
            var memo: [Int: PropertyListValue]? = nil
            var fields: [PropertyListValue] = []
            fields.reserveCapacity(values.count - 1)
            for item in 0..<values.count where item != shape.classPosition {
                fields.append(try cursor.value(at: cursor.reference(values, item), memo: &memo))
            }
            return fields
        }
        guard let fields = fields ?? nil else { return nil }
        for field in fields {
            guard (try? checkReferences(in: field, owner: index, key: "", depth: 0)) != nil else { return nil }
        }
        return fields
    }

    /// What a quick look at binary entry `index` tells, read straight from the bytes through `cursor` (from
    /// ``withBinaryCursor(_:)``, with `objects`) without building any value: `.object` when the entry has a `$class`
    /// reference and every reference in its fields is inside `$objects` (what ``object(at:)`` checks, but for the
    /// class dictionary itself), `.plain` for an entry without `$class`, and `.unsure` when anything looks wrong:
    /// then ``object(at:)`` decides and names the problem. `keys` remembers which key objects are `$class`, for the
    /// next look.
    package func quickLook(
        at index: Int, cursor: BinaryPropertyList.Cursor, objects: BinaryPropertyList.References,
        keys: inout KeyKinds
    ) -> QuickLook {
        let objectCount = UInt64(objectCount)
        func referencesInside(_ reference: Int, depth: Int) throws -> Bool {
            let offset = try cursor.objectOffset(reference)
            let marker = cursor.bytes[offset]
            switch marker >> 4 {
            case 0x8:
                return try cursor.uid(marker: marker, at: offset).map { $0 < objectCount } ?? false
            case 0xA, 0xC:
                guard depth < 64 else { return false }
                let span = try cursor.elementReferences(marker: marker, at: offset)
                for item in 0..<span.count {
                    guard try referencesInside(cursor.reference(span, item), depth: depth + 1) else { return false }
                }
                return true
            case 0xD:
                guard depth < 64 else { return false }
                let (_, values) = try cursor.dictionaryReferences(marker: marker, at: offset)
                for item in 0..<values.count {
                    guard try referencesInside(cursor.reference(values, item), depth: depth + 1) else { return false }
                }
                return true
            default:
                return true
            }
        }
        do {
            let entry = try cursor.reference(objects, index)
            guard let (entryKeys, values) = try cursor.entries(of: entry) else { return .plain }
            var classIndex: Int?
            for item in 0..<entryKeys.count {
                let value = try cursor.reference(values, item)
                if try keys.isClassKey(cursor.reference(entryKeys, item), cursor) {
                    guard let uid = try cursor.uid(of: value), uid != 0, uid < objectCount else { return .unsure }
                    classIndex = Int(uid)
                } else {
                    guard try referencesInside(value, depth: 0) else { return .unsure }
                }
            }
            return classIndex.map(QuickLook.object) ?? .plain
        } catch {
            return .unsure
        }
    }

    /// Which key objects are the string `$class`, for ``quickLook(at:cursor:objects:keys:)``: an archive writes each
    /// key string once, so the objects of its classes share a few key objects, and each is compared once.
    package struct KeyKinds {
        /// The key objects seen, up to a few dozen.
        private var known: [(reference: Int, isClass: Bool)] = []
        /// Key objects not among them once they were full: Foundation's archiver on Linux writes every dictionary's
        /// key strings anew, so past a few dozen misses each key is compared without looking through them first.
        private var misses = 0

        package init() {}

        /// Whether key object `reference` is the string `$class`.
        package mutating func isClassKey(_ reference: Int, _ cursor: BinaryPropertyList.Cursor) throws -> Bool {
            if misses < 64 {
                for entry in known where entry.reference == reference { return entry.isClass }
                if known.count == 32 { misses += 1 }
            }
            let isClass = try cursor.isString(reference, "$class")
            if known.count < 32 { known.append((reference, isClass)) }
            return isClass
        }
    }

    /// The answer of ``quickLook(at:cursor:objects:keys:)``.
    package enum QuickLook {
        case plain
        case object(classIndex: Int)
        case unsure
    }

    /// The class dictionary index a `$class` value refers to.
    private func checkedClassIndex(_ classValue: PropertyListValue, owner index: Int) throws -> Int {
        guard case .uid(let classUID) = classValue, classUID < UInt64(objectCount), classUID != 0 else {
            throw error("$class is not a reference to a class dictionary", object: index, key: "$class")
        }
        return Int(classUID)
    }

    /// ``object(at:)`` for an entry the caller already has.
    package func object(at index: Int, entry value: PropertyListValue) throws -> ArchivedObject {
        guard case .dictionary(var fields) = value, let classValue = fields["$class"] else {
            return ArchivedObject(index: index, className: nil, classes: [], fields: [:], value: value)
        }
        fields["$class"] = nil
        let (className, classes) = try classDescription(at: checkedClassIndex(classValue, owner: index), owner: index)
        for (key, field) in fields {
            try checkReferences(in: field, owner: index, key: key, depth: 0)
        }
        return ArchivedObject(index: index, className: className, classes: classes, fields: fields, value: value)
    }

    /// Checks that every object in the archive resolves: each `$class`, and each reference in each field.
    public func validate() throws {
        for index in 0..<objectCount {
            _ = try object(at: index)
        }
    }

    /// Reads the class dictionary at `classIndex`: its `$classname` and `$classes` chain.
    /// Class dictionaries are shared by all objects of a class, so each is decoded once and remembered.
    package func classDescription(at classIndex: Int, owner: Int) throws -> (String, [String]) {
        if let known = classCache.descriptions.withLock({ $0[classIndex] }) { return known }
        guard case .dictionary(let description) = try entry(at: classIndex),
            case .string(let name)? = description["$classname"]
        else {
            throw error(
                "$class refers to $objects[\(classIndex)], which is not a class dictionary",
                object: owner,
                key: "$class"
            )
        }
        var chain: [String] = [name]
        if let classes = description["$classes"] {
            guard case .array(let names) = classes, let strings = Optional(names.compactMap(\.stringValue)),
                strings.count == names.count
            else {
                throw error(
                    "$classes of $objects[\(classIndex)] is not an array of strings",
                    object: owner,
                    key: "$class"
                )
            }
            chain = strings.isEmpty ? chain : strings
        }
        classCache.descriptions.withLock { $0[classIndex] = (name, chain) }
        return (name, chain)
    }

    package func checkReferences(in value: PropertyListValue, owner: Int?, key: String, depth: Int) throws {
        switch value {
        case .uid(let uid):
            guard uid < UInt64(objectCount) else {
                throw error(
                    "reference \(uid) is past the end of $objects (\(objectCount) entries)",
                    object: owner,
                    key: key
                )
            }
        case .array(let elements), .set(let elements):
            guard depth < 64 else { throw error("inline values nested too deeply", object: owner, key: key) }
            for element in elements { try checkReferences(in: element, owner: owner, key: key, depth: depth + 1) }
        case .dictionary(let dictionary):
            guard depth < 64 else { throw error("inline values nested too deeply", object: owner, key: key) }
            for element in dictionary.values {
                try checkReferences(in: element, owner: owner, key: key, depth: depth + 1)
            }
        default:
            break
        }
    }

    /// A malformed-input error located at `$objects[object]` and `key` in this archive's file.
    package func error(_ message: String, object: Int?, key: String?) -> DecantError {
        DecantError(
            .malformedInput,
            message,
            at: Location(path: path, object: object.map { "$objects[\($0)]" }, keyPath: key)
        )
    }
}

/// The class descriptions an archive has decoded, by `$objects` index; shared by copies of the archive.
private final class ClassCache: Sendable {
    package let descriptions = Mutex<[Int: (String, [String])]>([:])
}
