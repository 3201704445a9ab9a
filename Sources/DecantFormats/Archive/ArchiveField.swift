import DecantCore
import DecantCodecs
import Foundation

/// One coder-key value of an archived object, resolved one level: a Foundation value, a collection of
/// references, or a reference to another (app) object. Collections are not followed further, so cyclic
/// containers cannot make a walk loop.
enum ArchiveField {
    case null
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Double)
    case data(Data)
    case uuid(UUID)
    case url(String)
    /// An `NSValue`: its kind (`point`, `size`, `rect`, `range`, `edgeInsets`, `value`) and text form
    /// (`{1, 2}`, `{{0, 0}, {10, 20}}`).
    case nsValue(kind: String, text: String)
    /// An array, set or ordered set (`kind` says which) of references or inline values, unresolved.
    case collection(kind: String, index: Int, elements: [PropertyListValue])
    /// A dictionary, its entries unresolved.
    case dictionary(index: Int, count: Int)
    /// Any other object: an app class, or a Foundation class without a value form (NSAttributedString,
    /// NSDecimalNumber, an ObjC-encoded NSValue, …).
    case object(ArchivedObject)

    /// The classes whose objects are values, not entities, told by their class chain.
    static let valueClasses: Set<String> = [
        "NSString", "NSMutableString", "NSNumber", "NSData", "NSMutableData", "NSDate", "NSUUID",
        "NSURL", "NSNull",
        "NSValue", "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSCountedSet", "NSOrderedSet",
        "NSMutableOrderedSet", "NSDictionary", "NSMutableDictionary", "NSDecimalNumber",
    ]

    /// Whether an object of this class chain decodes to a value (a Foundation value or collection class).
    static func isValueClass(_ object: ArchivedObject) -> Bool {
        if let name = object.className, valueClasses.contains(name) { return true }
        return object.classes.contains { valueClasses.contains($0) }
    }

    /// Resolves `value` (a field of an object, a reference or an inline scalar).
    /// - Throws: `.malformedInput` naming the object whose encoding is broken.
    static func resolve(_ value: PropertyListValue?, in archive: KeyedArchive) throws -> ArchiveField {
        guard let resolved = try archive.resolve(value) else { return .null }
        switch resolved {
        case .inline(let inline):
            switch inline {
            case .string(let string): return .string(string)
            case .integer(let integer): return .integer(integer)
            case .real(let real): return .real(real)
            case .bool(let bool): return .bool(bool)
            case .date(let date): return .date(date)
            case .data(let data): return .data(data)
            case .null: return .null
            case .array(let elements): return .collection(kind: "array", index: -1, elements: elements)
            case .set(let elements): return .collection(kind: "set", index: -1, elements: elements)
            case .dictionary(let dictionary): return .dictionary(index: -1, count: dictionary.count)
            case .uid: return .null
            }
        case .object(let object):
            return try resolve(object, in: archive)
        }
    }

    /// Resolves an object of `$objects` by its class chain.
    static func resolve(_ object: ArchivedObject, in archive: KeyedArchive) throws -> ArchiveField {
        // The typed readers take the object as resolved, rather than a reference to look up and decode again.
        let reference = KeyedArchive.Resolved.object(object)
        func its(_ name: String) -> Bool { object.isKind(of: name) }
        if its("NSString") || its("NSMutableString") {
            return try archive.string(reference).map(ArchiveField.string) ?? .null
        }
        if its("NSData") || its("NSMutableData") {
            return try archive.data(reference).map(ArchiveField.data) ?? .null
        }
        if its("NSDate") { return try archive.date(reference).map(ArchiveField.date) ?? .null }
        if its("NSUUID") { return try archive.uuid(reference).map(ArchiveField.uuid) ?? .null }
        if its("NSURL") { return try archive.url(reference).map(ArchiveField.url) ?? .null }
        if its("NSNull") { return .null }
        if its("NSDictionary") || its("NSMutableDictionary") {
            let entries = try archive.dictionaryEntries(reference) ?? []
            return .dictionary(index: object.index, count: entries.count)
        }
        if its("NSOrderedSet") || its("NSMutableOrderedSet") {
            return .collection(
                kind: "orderedSet", index: object.index, elements: try archive.elements(reference) ?? [])
        }
        if its("NSCountedSet") {
            return .collection(
                kind: "set", index: object.index, elements: try countedSetElements(object, archive))
        }
        if its("NSSet") || its("NSMutableSet") {
            return .collection(
                kind: "set", index: object.index, elements: try archive.elements(reference) ?? [])
        }
        if its("NSArray") || its("NSMutableArray") {
            return .collection(
                kind: "array", index: object.index, elements: try archive.elements(reference) ?? [])
        }
        if its("NSValue") && !its("NSDecimalNumber") && !its("NSNumber") {
            return try nsValue(object, archive)
        }
        return .object(object)
    }

    /// `NSCountedSet`: `NS.object0`, `NS.object1`, … (each once, whatever its count).
    static func countedSetElements(_ object: ArchivedObject, _ archive: KeyedArchive) throws
        -> [PropertyListValue]
    {
        var elements: [PropertyListValue] = []
        while let element = object["NS.object\(elements.count)"] { elements.append(element) }
        return elements
    }

    /// `NSValue` by `NS.special` (section 7.2): points, sizes and rects as their strings, ranges and edge insets
    /// written the same way; other kinds stay objects.
    static func nsValue(_ object: ArchivedObject, _ archive: KeyedArchive) throws -> ArchiveField {
        // An ObjC-encoded value (`$0` type, `$1` bytes) has no text form: it stays an object.
        guard let special = try archive.integer(forKey: "NS.special", in: object) else {
            return .object(object)
        }
        func text(_ key: String) throws -> String {
            guard let string = try archive.string(forKey: key, in: object) else {
                throw archive.error("NSValue has no \(key)", object: object.index, key: key)
            }
            return string
        }
        func number(_ key: String) throws -> String {
            guard let value = try archive.double(forKey: key, in: object) else {
                throw archive.error("NSValue has no \(key)", object: object.index, key: key)
            }
            return Int64(exactly: value).map(String.init) ?? String(value)
        }
        switch special {
        case 1: return .nsValue(kind: "point", text: try text("NS.pointval"))
        case 2: return .nsValue(kind: "size", text: try text("NS.sizeval"))
        case 3: return .nsValue(kind: "rect", text: try text("NS.rectval"))
        case 4:
            let range = "{\(try number("NS.rangeval.location")), \(try number("NS.rangeval.length"))}"
            return .nsValue(kind: "range", text: range)
        case 12:
            let parts = try ["top", "left", "bottom", "right"].map { try number("NS.edgeval.\($0)") }
            return .nsValue(kind: "edgeInsets", text: "{\(parts.joined(separator: ", "))}")
        default:
            return .object(object)
        }
    }

    /// A short name of the kind, for `decant inspect` and error messages.
    var kindName: String {
        switch self {
        case .null: "nil"
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .uuid: "uuid"
        case .url: "url"
        case .nsValue(let kind, _): kind
        case .collection(let kind, _, _): kind
        case .dictionary: "dictionary"
        case .object(let object): "→ \(object.className ?? "?")"
        }
    }
}
