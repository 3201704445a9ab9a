package import DecantCore
public import Foundation

/// Typed readers for the Foundation encodings of section 7.2: each takes a field value (a reference or an inline
/// scalar), returns `nil` for nil, and throws ``DecantError`` `.malformedInput` when the value has another type.
/// The `forKey:in:` forms read a field of an object and add the object index and key to errors.
extension KeyedArchive {
    /// How many references a scalar may be wrapped in (`NSMutableString` → `NS.string` → …) before giving up.
    package static let maximumWrapping = 16

    /// A resolved value: the inline plist value, or the object it refers to.
    package enum Resolved {
        case inline(PropertyListValue)
        case object(ArchivedObject)
    }

    /// Follows a reference; plain `$objects` entries (strings, numbers) come back inline.
    package func resolve(_ value: PropertyListValue?) throws -> Resolved? {
        guard let value, !value.isNull else { return nil }
        guard case .uid(let uid) = value else { return .inline(value) }
        // What `reference(_:)` checks, with the `$null` test made on the entry decoded anyway (one pass over the
        // bytes instead of two).
        guard uid != 0 else { return nil }
        guard uid < UInt64(objectCount) else {
            _ = try reference(value)  // throws: the reference is past the end of `$objects`
            return nil
        }
        let object = try object(at: Int(uid))
        guard object.className == nil else { return .object(object) }
        let entry = object.value
        return entry == .string("$null") ? nil : .inline(entry)
    }

    package func mismatch(_ expected: String, _ resolved: Resolved) -> DecantError {
        switch resolved {
        case .inline(let value):
            error("expected \(expected), found an inline \(value.kindName)", object: nil, key: nil)
        case .object(let object):
            error(
                "expected \(expected), found an object of class \(object.className ?? "?")",
                object: object.index,
                key: nil
            )
        }
    }

    /// Runs `body`, adding `object`'s index and `key` to a ``DecantError`` that has no object yet.
    package func inField<T>(_ key: String, of object: ArchivedObject, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var failure as DecantError {
            if failure.location?.object == nil {
                var location = failure.location ?? Location(path: path)
                location.object = object.index >= 0 ? "$objects[\(object.index)]" : nil
                location.keyPath = key
                failure.location = location
            }
            throw failure
        }
    }

    // MARK: Strings

    /// A string: inline, or an `NSString`/`NSMutableString` object (`NS.string`).
    public func string(_ value: PropertyListValue?) throws -> String? {
        try string(value, wrapping: 0)
    }

    package func string(_ value: PropertyListValue?, wrapping: Int) throws -> String? {
        guard let resolved = try resolve(value) else { return nil }
        return try string(resolved, wrapping: wrapping)
    }

    /// ``string(_:)`` of a value already resolved (what callers that hold the object use).
    package func string(_ resolved: Resolved, wrapping: Int = 0) throws -> String? {
        switch resolved {
        case .inline(.string(let string)):
            return string
        case .object(let object) where object.fields.contains("NS.string") && wrapping < Self.maximumWrapping:
            return try inField("NS.string", of: object) { try string(object["NS.string"], wrapping: wrapping + 1) }
        default:
            throw mismatch("a string", resolved)
        }
    }

    /// The string in field `key` of `object`.
    public func string(forKey key: String, in object: ArchivedObject) throws -> String? {
        try inField(key, of: object) { try string(object[key]) }
    }

    // MARK: Numbers

    /// An integer (NSNumber is always written inline); a real with an exact integer value is accepted.
    public func integer(_ value: PropertyListValue?) throws -> Int64? {
        guard let resolved = try resolve(value) else { return nil }
        if case .inline(let inline) = resolved, let integer = inline.integerValue { return integer }
        if case .inline(.bool(let bool)) = resolved { return bool ? 1 : 0 }
        throw mismatch("an integer", resolved)
    }

    /// The integer in field `key` of `object`.
    public func integer(forKey key: String, in object: ArchivedObject) throws -> Int64? {
        try inField(key, of: object) { try integer(object[key]) }
    }

    /// A floating-point number (an inline real or integer).
    public func double(_ value: PropertyListValue?) throws -> Double? {
        guard let resolved = try resolve(value) else { return nil }
        if case .inline(let inline) = resolved, let double = inline.doubleValue { return double }
        throw mismatch("a number", resolved)
    }

    /// The number in field `key` of `object`.
    public func double(forKey key: String, in object: ArchivedObject) throws -> Double? {
        try inField(key, of: object) { try double(object[key]) }
    }

    /// A Boolean (inline `true`/`false`, or the integers 0 and 1).
    public func bool(_ value: PropertyListValue?) throws -> Bool? {
        guard let resolved = try resolve(value) else { return nil }
        if case .inline(let inline) = resolved, let bool = inline.boolValue { return bool }
        throw mismatch("a Boolean", resolved)
    }

    /// The Boolean in field `key` of `object`.
    public func bool(forKey key: String, in object: ArchivedObject) throws -> Bool? {
        try inField(key, of: object) { try bool(object[key]) }
    }

    // MARK: Data, dates, UUIDs, URLs

    /// Bytes: inline data, or an `NSData`/`NSMutableData` object (`NS.data`).
    public func data(_ value: PropertyListValue?) throws -> Data? {
        try data(value, wrapping: 0)
    }

    package func data(_ value: PropertyListValue?, wrapping: Int) throws -> Data? {
        guard let resolved = try resolve(value) else { return nil }
        return try data(resolved, wrapping: wrapping)
    }

    /// ``data(_:)`` of a value already resolved.
    package func data(_ resolved: Resolved, wrapping: Int = 0) throws -> Data? {
        switch resolved {
        case .inline(.data(let data)):
            return data
        case .object(let object) where object.fields.contains("NS.data") && wrapping < Self.maximumWrapping:
            return try inField("NS.data", of: object) { try data(object["NS.data"], wrapping: wrapping + 1) }
        default:
            throw mismatch("data", resolved)
        }
    }

    /// The bytes in field `key` of `object`.
    public func data(forKey key: String, in object: ArchivedObject) throws -> Data? {
        try inField(key, of: object) { try data(object[key]) }
    }

    /// A date as seconds since 2001-01-01: an `NSDate` object (`NS.time`) or an inline date.
    public func date(_ value: PropertyListValue?) throws -> Double? {
        guard let resolved = try resolve(value) else { return nil }
        return try date(resolved)
    }

    /// ``date(_:)`` of a value already resolved.
    package func date(_ resolved: Resolved) throws -> Double? {
        switch resolved {
        case .inline(.date(let date)):
            return date
        case .object(let object) where object.fields.contains("NS.time"):
            guard let time = object["NS.time"]?.doubleValue else {
                throw error("NS.time is not a number", object: object.index, key: "NS.time")
            }
            return time
        default:
            throw mismatch("a date", resolved)
        }
    }

    /// The date in field `key` of `object`, as seconds since 2001-01-01.
    public func date(forKey key: String, in object: ArchivedObject) throws -> Double? {
        try inField(key, of: object) { try date(object[key]) }
    }

    /// A UUID: an `NSUUID` object (`NS.uuidbytes`, 16 bytes).
    public func uuid(_ value: PropertyListValue?) throws -> UUID? {
        guard let resolved = try resolve(value) else { return nil }
        return try uuid(resolved)
    }

    /// ``uuid(_:)`` of a value already resolved.
    package func uuid(_ resolved: Resolved) throws -> UUID? {
        guard case .object(let object) = resolved, object.fields.contains("NS.uuidbytes") else {
            throw mismatch("a UUID", resolved)
        }
        guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16 else {
            throw error("NS.uuidbytes is not 16 bytes of data", object: object.index, key: "NS.uuidbytes")
        }
        let b = [UInt8](bytes)
        return UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }

    /// The UUID in field `key` of `object`.
    public func uuid(forKey key: String, in object: ArchivedObject) throws -> UUID? {
        try inField(key, of: object) { try uuid(object[key]) }
    }

    /// A URL string: an `NSURL` object, its `NS.relative` string resolved against its `NS.base` URL when there is one.
    public func url(_ value: PropertyListValue?) throws -> String? {
        try url(value, wrapping: 0)
    }

    package func url(_ value: PropertyListValue?, wrapping: Int) throws -> String? {
        guard let resolved = try resolve(value) else { return nil }
        return try url(resolved, wrapping: wrapping)
    }

    /// ``url(_:)`` of a value already resolved.
    package func url(_ resolved: Resolved, wrapping: Int = 0) throws -> String? {
        guard case .object(let object) = resolved, object.fields.contains("NS.relative") else {
            throw mismatch("a URL", resolved)
        }
        let relative = try string(forKey: "NS.relative", in: object) ?? ""
        guard wrapping < Self.maximumWrapping else {
            throw error("NS.base URLs nested too deeply", object: object.index, key: "NS.base")
        }
        guard let base = try inField("NS.base", of: object, { try url(object["NS.base"], wrapping: wrapping + 1) })
        else {
            return relative
        }
        if let baseURL = URL(string: base), let resolvedURL = URL(string: relative, relativeTo: baseURL) {
            return resolvedURL.absoluteString
        }
        return base + relative
    }

    /// The URL string in field `key` of `object`.
    public func url(forKey key: String, in object: ArchivedObject) throws -> String? {
        try inField(key, of: object) { try url(object[key]) }
    }

    // MARK: Collections

    /// The elements of an array, set or ordered set, as references or inline values: an inline array, an object
    /// with `NS.objects`, or one with `NS.object.0`, `NS.object.1`, …; an `NSArray`/`NSSet`/`NSOrderedSet`
    /// object with none of these keys is empty.
    public func elements(_ value: PropertyListValue?) throws -> [PropertyListValue]? {
        guard let resolved = try resolve(value) else { return nil }
        return try elements(resolved)
    }

    /// ``elements(_:)`` of a value already resolved.
    package func elements(_ resolved: Resolved) throws -> [PropertyListValue]? {
        switch resolved {
        case .inline(.array(let elements)), .inline(.set(let elements)):
            return elements
        case .object(let object):
            if let objects = object["NS.objects"] {
                guard let elements = objects.arrayValue else {
                    throw error("NS.objects is not an array", object: object.index, key: "NS.objects")
                }
                return elements
            }
            if object.fields.contains("NS.object.0") {
                var elements: [PropertyListValue] = []
                while let element = object["NS.object.\(elements.count)"] { elements.append(element) }
                return elements
            }
            if object.isKind(of: "NSArray") || object.isKind(of: "NSSet") || object.isKind(of: "NSOrderedSet") {
                return []
            }
            throw mismatch("an array or set", resolved)
        default:
            throw mismatch("an array or set", resolved)
        }
    }

    /// The elements of the collection in field `key` of `object`.
    public func elements(forKey key: String, in object: ArchivedObject) throws -> [PropertyListValue]? {
        try inField(key, of: object) { try elements(object[key]) }
    }

    /// The entries of a dictionary, keys and values as references or inline values, in archive order: an inline
    /// dictionary, an object with `NS.keys`/`NS.objects`, or an `NSKnownKeysDictionary1` (section 4.5:
    /// `zip(searchMapping.keys, values)` without the `emptyToken` slots).
    public func dictionaryEntries(
        _ value: PropertyListValue?
    ) throws -> [(key: PropertyListValue, value: PropertyListValue)]? {
        guard let resolved = try resolve(value) else { return nil }
        return try dictionaryEntries(resolved)
    }

    /// ``dictionaryEntries(_:)`` of a value already resolved.
    package func dictionaryEntries(_ resolved: Resolved) throws -> [(key: PropertyListValue, value: PropertyListValue)]? {
        switch resolved {
        case .inline(.dictionary(let dictionary)):
            return dictionary.map { (key: .string($0.key), value: $0.value) }
        case .object(let object) where object.fields.contains("searchMapping"):
            return try knownKeysEntries(object)
        case .object(let object) where object.fields.contains("NS.keys") || object.fields.contains("NS.objects"):
            let keys = try inField("NS.keys", of: object) { try elements(object["NS.keys"] ?? .array([])) } ?? []
            let values =
                try inField("NS.objects", of: object) { try elements(object["NS.objects"] ?? .array([])) } ?? []
            guard keys.count == values.count else {
                throw error(
                    "NS.keys has \(keys.count) entries but NS.objects has \(values.count)",
                    object: object.index,
                    key: "NS.keys"
                )
            }
            return zip(keys, values).map { (key: $0, value: $1) }
        case .object(let object) where object.isKind(of: "NSDictionary"):
            return []
        default:
            throw mismatch("a dictionary", resolved)
        }
    }

    package func knownKeysEntries(_ object: ArchivedObject) throws -> [(key: PropertyListValue, value: PropertyListValue)] {
        guard let mapping = try inField("searchMapping", of: object, { try self.object(for: object["searchMapping"]) })
        else { return [] }
        let keys = try inField("keys", of: mapping) { try elements(mapping["keys"]) } ?? []
        let values = try inField("values", of: object) { try elements(object["values"]) } ?? []
        guard keys.count == values.count else {
            throw error(
                "searchMapping has \(keys.count) keys but values has \(values.count)",
                object: object.index,
                key: "values"
            )
        }
        let emptyToken = try string(forKey: "emptyToken", in: object)
        var entries: [(key: PropertyListValue, value: PropertyListValue)] = []
        for (key, value) in zip(keys, values) {
            if let emptyToken {
                if case .inline(.string(emptyToken))? = try resolve(value) { continue }
                if case .inline(.string(emptyToken))? = try resolve(key) { continue }
            }
            entries.append((key: key, value: value))
        }
        return entries
    }

    /// The entries of the dictionary in field `key` of `object`.
    public func dictionaryEntries(
        forKey key: String,
        in object: ArchivedObject
    ) throws -> [(key: PropertyListValue, value: PropertyListValue)]? {
        try inField(key, of: object) { try dictionaryEntries(object[key]) }
    }

    /// The entries of a dictionary whose keys are strings (plain or `NSMutableString`), values left unresolved.
    public func stringKeyedEntries(_ value: PropertyListValue?) throws -> [(key: String, value: PropertyListValue)]? {
        guard let entries = try dictionaryEntries(value) else { return nil }
        return try entries.map { entry in
            guard let key = try string(entry.key) else {
                throw error("dictionary key is nil", object: nil, key: nil)
            }
            return (key: key, value: entry.value)
        }
    }

    /// The string-keyed entries of the dictionary in field `key` of `object`.
    public func stringKeyedEntries(
        forKey key: String,
        in object: ArchivedObject
    ) throws -> [(key: String, value: PropertyListValue)]? {
        try inField(key, of: object) { try stringKeyedEntries(object[key]) }
    }

    /// The object that field `key` of `object` refers to, or `nil` for nil.
    public func object(forKey key: String, in object: ArchivedObject) throws -> ArchivedObject? {
        try inField(key, of: object) { try self.object(for: object[key]) }
    }

    // MARK: Nested archives

    /// Decodes a keyed archive stored in a data value (inline data or `NSData`), or returns `nil` when the value
    /// is nil or its bytes are not a property list holding `$archiver`.
    ///
    /// Throws when the bytes are a damaged property list or archive, or when archives nest deeper than
    /// ``maximumNestingDepth``.
    public func nestedArchive(_ value: PropertyListValue?) throws -> KeyedArchive? {
        guard let bytes = try data(value) else { return nil }
        let looksLikePropertyList =
            BinaryPropertyListReader.isBinaryPropertyList(bytes) || bytes.starts(with: Array("<?xml".utf8))
        guard looksLikePropertyList else { return nil }
        let propertyList = try PropertyListValue.decode(from: bytes, path: path)
        guard propertyList["$archiver"] != nil else { return nil }
        guard nestingDepth < Self.maximumNestingDepth else {
            throw error("keyed archives nested more than \(Self.maximumNestingDepth) deep", object: nil, key: nil)
        }
        return try KeyedArchive(propertyList: propertyList, path: path, nestingDepth: nestingDepth + 1)
    }

    /// The keyed archive stored in field `key` of `object`, if that field holds one.
    public func nestedArchive(forKey key: String, in object: ArchivedObject) throws -> KeyedArchive? {
        try inField(key, of: object) { try nestedArchive(object[key]) }
    }
}
