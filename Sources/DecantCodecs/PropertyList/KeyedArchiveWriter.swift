import DecantCore
public import Foundation

/// Builds an NSKeyedArchiver archive from objects the caller describes, and serialises it as a binary plist.
///
/// ```swift
/// var writer = KeyedArchiveWriter()
/// let model = writer.reserveObject()                  // reserve first, so children can point back (cycles)
/// let name = writer.addString("Note")
/// let entity = writer.addObject(className: "NSEntityDescription", classes: ["NSEntityDescription", "NSObject"],
///                               fields: ["NSEntityName": name.uid, "NSManagedObjectModel": model.uid])
/// writer.setObject(model, className: "NSManagedObjectModel", classes: ["NSManagedObjectModel", "NSObject"],
///                  fields: ["NSEntities": entity.uid])
/// let data = try writer.encodedData(root: model)
/// ```
///
/// `$objects[0]` is `$null`; class dictionaries are shared, one per class name; `$top` is `{root: UID}` and
/// `$version` is 100000.
public struct KeyedArchiveWriter: Sendable {
    /// A handle to an entry of `$objects`.
    public struct Reference: Sendable, Hashable {
        /// The index in `$objects`.
        public let index: Int

        package init(index: Int) { self.index = index }

        /// The `.uid` value that refers to this entry, for use as a field value.
        public var uid: PropertyListValue { .uid(UInt64(index)) }
    }

    /// The field value for nil (UID 0, the `$null` entry).
    public static let null: PropertyListValue = .uid(0)

    private var objects: [PropertyListValue?] = [.string("$null")]
    private var classReferences: [String: Int] = [:]
    private var strings: [[UInt8]: Int] = [:]

    /// Creates an archive holding only `$null`.
    public init() {}

    /// Reserves an entry to be filled later with ``setObject(_:className:classes:fields:)``.
    public mutating func reserveObject() -> Reference {
        objects.append(nil)
        return Reference(index: objects.count - 1)
    }

    /// Fills a reserved entry with an object of class `className`; `classes` is the class and its superclasses,
    /// most specific first (defaults to `[className, "NSObject"]`). Field values are inline scalars or `uid`s.
    public mutating func setObject(
        _ reference: Reference,
        className: String,
        classes: [String]? = nil,
        fields: PropertyListDictionary
    ) {
        let classReference = classEntry(className, classes: classes ?? [className, "NSObject"])
        var entry = fields
        entry["$class"] = .uid(UInt64(classReference))
        objects[reference.index] = .dictionary(entry)
    }

    /// Adds an object of class `className`; see ``setObject(_:className:classes:fields:)``.
    public mutating func addObject(
        className: String,
        classes: [String]? = nil,
        fields: PropertyListDictionary
    ) -> Reference {
        let reference = reserveObject()
        setObject(reference, className: className, classes: classes, fields: fields)
        return reference
    }

    /// Adds a plain string entry, or returns the existing entry for the same string.
    public mutating func addString(_ string: String) -> Reference {
        let key = Array(string.utf8)
        if let existing = strings[key] { return Reference(index: existing) }
        objects.append(.string(string))
        strings[key] = objects.count - 1
        return Reference(index: objects.count - 1)
    }

    /// Adds a plain scalar entry (an NSNumber or NSData written in place), not de-duplicated.
    public mutating func addValue(_ value: PropertyListValue) -> Reference {
        if case .string(let string) = value { return addString(string) }
        objects.append(value)
        return Reference(index: objects.count - 1)
    }

    /// Adds an `NSArray` (or `NSSet`, `NSMutableArray`, … by `className`) whose `NS.objects` are `elements`.
    public mutating func addArray(
        _ elements: [PropertyListValue],
        className: String = "NSArray",
        classes: [String]? = nil
    ) -> Reference {
        addObject(
            className: className,
            classes: classes ?? Self.defaultChain(className),
            fields: ["NS.objects": .array(elements)]
        )
    }

    /// Adds an `NSDictionary` (or `NSMutableDictionary` by `className`) with parallel `NS.keys` and `NS.objects`.
    public mutating func addDictionary(
        keys: [PropertyListValue],
        values: [PropertyListValue],
        className: String = "NSDictionary",
        classes: [String]? = nil
    ) -> Reference {
        addObject(
            className: className,
            classes: classes ?? Self.defaultChain(className),
            fields: ["NS.keys": .array(keys), "NS.objects": .array(values)]
        )
    }

    /// The `$classes` chains Foundation writes for its collection classes.
    package static func defaultChain(_ className: String) -> [String] {
        switch className {
        case "NSMutableArray": ["NSMutableArray", "NSArray", "NSObject"]
        case "NSMutableSet": ["NSMutableSet", "NSSet", "NSObject"]
        case "NSMutableDictionary": ["NSMutableDictionary", "NSDictionary", "NSObject"]
        case "NSMutableString": ["NSMutableString", "NSString", "NSObject"]
        case "NSMutableData": ["NSMutableData", "NSData", "NSObject"]
        default: [className, "NSObject"]
        }
    }

    private mutating func classEntry(_ className: String, classes: [String]) -> Int {
        if let existing = classReferences[className] { return existing }
        objects.append(
            .dictionary(["$classname": .string(className), "$classes": .array(classes.map(PropertyListValue.string))])
        )
        classReferences[className] = objects.count - 1
        return objects.count - 1
    }

    /// The archive as a property list: `$version`, `$archiver`, `$top = {root: UID}`, `$objects`.
    ///
    /// Throws ``DecantError`` `.usage` when a reserved entry was never filled or a reference points past the end.
    public func propertyList(root: Reference?) throws -> PropertyListValue {
        var filled: [PropertyListValue] = []
        filled.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            guard let object else {
                throw DecantError(
                    .usage,
                    "archive entry reserved but never set",
                    at: Location(object: "$objects[\(index)]")
                )
            }
            try checkReferences(object, owner: index)
            filled.append(object)
        }
        if let root, !objects.indices.contains(root.index) {
            throw DecantError(.usage, "root reference \(root.index) is not in this archive")
        }
        return [
            "$version": .integer(100_000),
            "$archiver": "NSKeyedArchiver",
            "$top": ["root": root?.uid ?? Self.null],
            "$objects": .array(filled),
        ]
    }

    /// The archive serialised as a binary property list.
    public func encodedData(root: Reference?) throws -> Data {
        BinaryPropertyListWriter().write(try propertyList(root: root))
    }

    private func checkReferences(_ value: PropertyListValue, owner: Int) throws {
        switch value {
        case .uid(let uid) where uid >= UInt64(objects.count):
            throw DecantError(
                .usage,
                "reference \(uid) is past the end of the archive",
                at: Location(object: "$objects[\(owner)]")
            )
        case .array(let elements), .set(let elements):
            for element in elements { try checkReferences(element, owner: owner) }
        case .dictionary(let dictionary):
            for element in dictionary.values { try checkReferences(element, owner: owner) }
        default:
            break
        }
    }
}
