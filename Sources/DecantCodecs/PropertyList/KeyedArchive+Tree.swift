import DecantCore

extension KeyedArchive {
    /// Decodes the value `$top.root` refers to into a plain tree; see ``decodeTree(_:maximumDepth:)``.
    public func decodeRootTree(maximumDepth: Int = 64) throws -> ArchivedValue {
        guard let root = top["root"] else {
            throw error("$top has no key 'root'", object: nil, key: "$top")
        }
        return try decodeTree(root, maximumDepth: maximumDepth)
    }

    /// Decodes a reference or inline value into a Foundation-free ``ArchivedValue`` tree.
    ///
    /// Meant for small acyclic content (transformable values, metadata): an object that contains itself,
    /// directly or not, throws `.malformedInput` naming the object, and so does nesting deeper than `maximumDepth`.
    /// An object shared by several parents is decoded once per parent.
    public func decodeTree(_ value: PropertyListValue?, maximumDepth: Int = 64) throws -> ArchivedValue {
        var decoder = TreeDecoder(archive: self, maximumDepth: maximumDepth)
        return try decoder.decode(value, depth: 0)
    }
}

/// The recursive walk behind ``KeyedArchive/decodeTree(_:maximumDepth:)``, tracking the objects on the path.
private struct TreeDecoder {
    package let archive: KeyedArchive
    package let maximumDepth: Int
    package var onPath: Set<Int> = []
    /// Values produced so far; shared objects are decoded once per parent, so a hostile DAG could otherwise
    /// take exponential time.
    package var produced = 0
    package static let maximumValueCount = 1_000_000

    package mutating func decode(_ value: PropertyListValue?, depth: Int) throws -> ArchivedValue {
        produced += 1
        guard produced <= Self.maximumValueCount else {
            throw archive.error(
                "more than \(Self.maximumValueCount) values; shared objects make the tree too large",
                object: nil, key: nil)
        }
        guard depth <= maximumDepth else {
            throw archive.error("values nested deeper than \(maximumDepth) levels", object: nil, key: nil)
        }
        guard let resolved = try archive.resolve(value) else { return .null }
        switch resolved {
        case .inline(let inline):
            return try decodeInline(inline, depth: depth)
        case .object(let object):
            guard onPath.insert(object.index).inserted else {
                throw archive.error("object contains itself (reference cycle)", object: object.index, key: nil)
            }
            defer { onPath.remove(object.index) }
            return try decodeObject(object, depth: depth)
        }
    }

    package mutating func decodeInline(_ value: PropertyListValue, depth: Int) throws -> ArchivedValue {
        switch value {
        case .string(let string): return .string(string)
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .bool(let bool): return .bool(bool)
        case .date(let date): return .date(date)
        case .data(let data): return .data(data)
        case .null: return .null
        case .uid: return try decode(value, depth: depth)
        case .array(let elements), .set(let elements):
            return .array(try elements.map { try decode($0, depth: depth + 1) })
        case .dictionary(let dictionary):
            return .dictionary(
                try dictionary.map {
                    ArchivedValue.Entry(key: .string($0.key), value: try decode($0.value, depth: depth + 1))
                }
            )
        }
    }

    package mutating func decodeObject(_ object: ArchivedObject, depth: Int) throws -> ArchivedValue {
        let fields = object.fields
        let reference = PropertyListValue.uid(UInt64(object.index))
        if fields.contains("NS.uuidbytes"), let uuid = try archive.uuid(reference) {
            return .uuid(uuid)
        }
        if fields.contains("NS.relative"), let url = try archive.url(reference) {
            return .url(url)
        }
        if object.isKind(of: "NSDate"), fields.contains("NS.time"), let date = try archive.date(reference) {
            return .date(date)
        }
        if fields.contains("NS.string"), object.isKind(of: "NSString") || object.isKind(of: "NSMutableString") {
            if let string = try archive.string(reference) { return .string(string) }
        }
        if fields.contains("NS.data"), object.isKind(of: "NSData") || object.isKind(of: "NSMutableData") {
            if let data = try archive.data(reference) { return .data(data) }
        }
        if object.isKind(of: "NSDictionary"), let entries = try? archive.dictionaryEntries(reference) {
            return .dictionary(
                try entries.map {
                    ArchivedValue.Entry(
                        key: try decode($0.key, depth: depth + 1),
                        value: try decode($0.value, depth: depth + 1)
                    )
                }
            )
        }
        let isCollection =
            object.isKind(of: "NSArray") || object.isKind(of: "NSSet") || object.isKind(of: "NSOrderedSet")
        let hasOnlyElementKeys = fields.keys.allSatisfy { $0 == "NS.objects" || $0.hasPrefix("NS.object.") }
        if isCollection, hasOnlyElementKeys, let elements = try archive.elements(reference) {
            return .array(try elements.map { try decode($0, depth: depth + 1) })
        }
        var decodedFields: [ArchivedValue.Field] = []
        for (name, field) in fields {
            let decoded = try archive.inField(name, of: object) { try decode(field, depth: depth + 1) }
            decodedFields.append(ArchivedValue.Field(name: name, value: decoded))
        }
        return .object(className: object.className ?? "", fields: decodedFields)
    }
}
