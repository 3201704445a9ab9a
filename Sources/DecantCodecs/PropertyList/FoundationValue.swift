import DecantCore
public import Foundation

/// A value made only of Foundation's plain classes — the ones `NSSecureUnarchiveFromData` allows by default
/// (``secureAllowedClasses``) and their mutable subclasses — as a keyed archive holds it, exactly enough to archive it
/// back as `NSKeyedArchiver` lays it out: the class of every collection, string and data (mutable or not), and every
/// dictionary's keys in archive order.
///
/// ```swift
/// let value = try FoundationValue(archive: KeyedArchive(data: blob))   // [name: "n", tags: ["a", 2]]
/// let data = try value.archivedData()                                  // NSKeyedArchiver's layout again
/// ```
///
/// What it cannot hold is refused with ``Refusal``, which says why: a class outside the list (an app class,
/// `NSOrderedSet`, `NSAttributedString`, `NSDecimalNumber`), nil where a value is expected, a dictionary key that is
/// not a string, a URL relative to a base URL, a `$top` with other keys than `root`, or a damaged archive.
public indirect enum FoundationValue: Sendable, Hashable {
    /// `NSNull`.
    case null
    /// A Boolean `NSNumber`.
    case bool(Bool)
    /// An integer `NSNumber`.
    case integer(Int64)
    /// A floating-point `NSNumber`.
    case real(Double)
    /// An `NSString` (written inline), or an `NSMutableString`.
    case string(String, isMutable: Bool = false)
    /// An `NSData` (written inline), or an `NSMutableData`.
    case data(Data, isMutable: Bool = false)
    /// An `NSDate`, as seconds since 2001-01-01.
    case date(Double)
    /// An `NSURL` without a base URL: its string.
    case url(String)
    /// An `NSUUID`.
    case uuid(UUID)
    /// An `NSArray`, `NSMutableArray`, `NSSet` or `NSMutableSet`, elements in archive order.
    case collection([FoundationValue], CollectionClass = .array)
    /// An `NSDictionary` or `NSMutableDictionary` with string keys, in archive order.
    case dictionary([Entry], isMutable: Bool = false)

    /// The classes `NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses` allows by default; a subclass of
    /// one (`NSMutableDictionary`, `NSDecimalNumber`) passes too.
    public static let secureAllowedClasses = [
        "NSArray", "NSDictionary", "NSSet", "NSString", "NSNumber", "NSDate", "NSData", "NSURL", "NSUUID", "NSNull",
    ]

    /// The class of a ``collection(_:_:)``.
    public enum CollectionClass: String, Sendable, Hashable, CaseIterable {
        case array = "NSArray"
        case mutableArray = "NSMutableArray"
        case set = "NSSet"
        case mutableSet = "NSMutableSet"

        /// Whether this is a set class.
        public var isSet: Bool { self == .set || self == .mutableSet }
        /// Whether this is a mutable class.
        public var isMutable: Bool { self == .mutableArray || self == .mutableSet }
    }

    /// One key-value pair of a ``dictionary(_:isMutable:)``.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value.
        public var value: FoundationValue

        /// Creates an entry.
        public init(_ key: String, _ value: FoundationValue) {
            self.key = key
            self.value = value
        }
    }

    /// Why an archive is not a ``FoundationValue``: one sentence without a trailing period.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was found.
        public var reason: String
        /// The first class outside Foundation's plain ones, when that is the reason.
        public var className: String?

        /// Creates a refusal.
        public init(_ reason: String, className: String? = nil) {
            self.reason = reason
            self.className = className
        }

        public var description: String { reason }
    }

    /// Values nested deeper than this are refused.
    public static let maximumDepth = 64
    /// Archives holding more values than this are refused (a shared object counts once per parent).
    public static let maximumValueCount = 1_000_000

    /// The value `$top.root` of `archive` refers to.
    /// - Throws: ``Refusal`` saying why the archive holds something else.
    public init(archive: KeyedArchive) throws(Refusal) {
        guard archive.topKeys == ["root"], let root = archive.topValue(forKey: "root") else {
            throw Refusal("$top holds \(archive.topKeys.map { "'\($0)'" }.joined(separator: ", ")), not only 'root'")
        }
        var decoder = FoundationValueDecoder(archive: archive)
        self = try decoder.decode(root, depth: 0)
    }

    /// The value of the keyed archive `data`.
    /// - Throws: ``Refusal``: the bytes are no keyed archive, a damaged one, or one holding something else.
    public init(archivedData data: Data) throws(Refusal) {
        guard KeyedArchive.looksLikeKeyedArchive(data) else { throw Refusal("not a keyed archive") }
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch let error as DecantError {
            throw Refusal("damaged archive: " + error.message + (error.location?.object.map { " (at \($0))" } ?? ""))
        } catch {
            throw Refusal("damaged archive: \(error)")
        }
        try self.init(archive: archive)
    }
}

extension KeyedArchive {
    /// Whether `data` is a property list (binary or XML) that names `$archiver`: a keyed archive, or what is left of
    /// one. Anything else (another transformer's bytes, a plain property list) is no archive.
    public static func looksLikeKeyedArchive(_ data: Data) -> Bool {
        let isPropertyList =
            BinaryPropertyListReader.isBinaryPropertyList(data)
            || data.prefix(256).range(of: Data("<plist".utf8)) != nil
        return isPropertyList && data.range(of: Data("$archiver".utf8)) != nil
    }
}

/// The walk behind ``FoundationValue/init(archive:)``: recursive, with the objects on the path to refuse cycles.
private struct FoundationValueDecoder {
    package let archive: KeyedArchive
    package var onPath: Set<Int> = []
    package var produced = 0

    package typealias Refusal = FoundationValue.Refusal

    package mutating func decode(_ value: PropertyListValue, depth: Int) throws(Refusal) -> FoundationValue {
        produced += 1
        guard produced <= FoundationValue.maximumValueCount else {
            throw Refusal("more than \(FoundationValue.maximumValueCount) values")
        }
        guard depth <= FoundationValue.maximumDepth else {
            throw Refusal("values nested deeper than \(FoundationValue.maximumDepth) levels")
        }
        let resolved: KeyedArchive.Resolved?
        do { resolved = try archive.resolve(value) } catch { throw Self.damaged(error) }
        switch resolved {
        case nil:
            throw Refusal("nil where a value is expected (only NSNull stands for nothing)")
        case .inline(let inline)?:
            switch inline {
            case .string(let text): return .string(text)
            case .integer(let integer): return .integer(integer)
            case .real(let real): return .real(real)
            case .bool(let flag): return .bool(flag)
            case .data(let data): return .data(data)
            case .date(let seconds): return .date(seconds)
            default: throw Refusal("an inline \(inline.kindName), which NSKeyedArchiver does not write")
            }
        case .object(let object)?:
            guard onPath.insert(object.index).inserted else {
                throw Refusal("object $objects[\(object.index)] contains itself (reference cycle)")
            }
            defer { onPath.remove(object.index) }
            return try decode(object, depth: depth)
        }
    }

    private mutating func decode(_ object: ArchivedObject, depth: Int) throws(Refusal) -> FoundationValue {
        let name = object.className ?? ""
        let keys = Set(object.fields.keys)
        func require(_ expected: Set<String>, optional: Set<String> = []) throws(Refusal) {
            guard expected.isSubset(of: keys), keys.isSubset(of: expected.union(optional)) else {
                throw Refusal(
                    "an \(name) with the keys \(object.fields.keys.sorted().joined(separator: ", ")), not Foundation's",
                    className: name)
            }
        }
        do {
            switch name {
            case "NSNull":
                try require([])
                return .null
            case "NSString", "NSMutableString":
                try require(["NS.string"])
                guard case .inline(.string(let text))? = try archive.resolve(object["NS.string"]) else {
                    throw Refusal("an \(name) whose NS.string is not a string", className: name)
                }
                return .string(text, isMutable: name == "NSMutableString")
            case "NSData", "NSMutableData":
                try require(["NS.data"])
                guard case .inline(.data(let bytes))? = try archive.resolve(object["NS.data"]) else {
                    throw Refusal("an \(name) whose NS.data is not data", className: name)
                }
                return .data(bytes, isMutable: name == "NSMutableData")
            case "NSDate":
                try require(["NS.time"])
                guard let seconds = object["NS.time"]?.doubleValue else {
                    throw Refusal("an NSDate whose NS.time is not a number", className: name)
                }
                return .date(seconds)
            case "NSURL":
                try require(["NS.relative"], optional: ["NS.base"])
                if case .some = try archive.resolve(object["NS.base"]) {
                    throw Refusal("an NSURL relative to a base URL", className: name)
                }
                guard case .inline(.string(let text))? = try archive.resolve(object["NS.relative"]) else {
                    throw Refusal("an NSURL whose NS.relative is not a string", className: name)
                }
                return .url(text)
            case "NSUUID":
                guard let uuid = try archive.uuid(.uid(UInt64(object.index))) else {
                    throw Refusal("an NSUUID without bytes", className: name)
                }
                try require(["NS.uuidbytes"])
                return .uuid(uuid)
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet":
                try require([], optional: ["NS.objects"])
                let elements = try archive.elements(.uid(UInt64(object.index))) ?? []
                var values: [FoundationValue] = []
                values.reserveCapacity(elements.count)
                for element in elements { values.append(try decode(element, depth: depth + 1)) }
                return .collection(values, FoundationValue.CollectionClass(rawValue: name) ?? .array)
            case "NSDictionary", "NSMutableDictionary":
                try require([], optional: ["NS.keys", "NS.objects"])
                let entries = try archive.dictionaryEntries(.uid(UInt64(object.index))) ?? []
                var values: [FoundationValue.Entry] = []
                values.reserveCapacity(entries.count)
                for entry in entries {
                    guard case .inline(.string(let key))? = try archive.resolve(entry.key) else {
                        throw Refusal("an \(name) with a key that is not a string", className: name)
                    }
                    values.append(FoundationValue.Entry(key, try decode(entry.value, depth: depth + 1)))
                }
                return .dictionary(values, isMutable: name == "NSMutableDictionary")
            default:
                throw Refusal("an object of class \(name), not one of Foundation's plain classes", className: name)
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Self.damaged(error)
        }
    }

    private static func damaged(_ error: any Error) -> Refusal {
        guard let error = error as? DecantError else { return Refusal("damaged archive: \(error)") }
        return Refusal("damaged archive: " + error.message + (error.location?.object.map { " (at \($0))" } ?? ""))
    }
}

extension FoundationValue {
    /// Equal values: floating-point numbers and dates by their bits (so `-0.0` is not `0.0`, and NaN equals itself, as
    /// an archive written again holds them), everything else as its case says.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)), (.date(let a), .date(let b)): a.bitPattern == b.bitPattern
        case (.string(let a, let m), .string(let b, let n)): a == b && m == n
        case (.data(let a, let m), .data(let b, let n)): a == b && m == n
        case (.url(let a), .url(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.collection(let a, let k), .collection(let b, let l)): k == l && a == b
        case (.dictionary(let a, let m), .dictionary(let b, let n)): m == n && a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .integer(let integer): hasher.combine(integer)
        case .real(let real), .date(let real): hasher.combine(real.bitPattern)
        case .string(let text, let isMutable): hasher.combine(text); hasher.combine(isMutable)
        case .data(let bytes, let isMutable): hasher.combine(bytes); hasher.combine(isMutable)
        case .url(let text): hasher.combine(text)
        case .uuid(let uuid): hasher.combine(uuid)
        case .collection(let elements, let kind): hasher.combine(elements); hasher.combine(kind)
        case .dictionary(let entries, let isMutable): hasher.combine(entries); hasher.combine(isMutable)
        }
    }
}
