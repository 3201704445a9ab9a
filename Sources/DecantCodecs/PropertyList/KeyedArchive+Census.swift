/// The classes of the objects an archive holds, counted by walking its object graph from `$top`.
///
/// ```swift
/// let census = try KeyedArchive(data: blob).classCensus()
/// census.counts          // ["NSMutableDictionary": 1, "NSString": 4, "NSNumber": 2]
/// census.chains["NSMutableDictionary"]   // ["NSMutableDictionary", "NSDictionary", "NSObject"]
/// ```
///
/// Every object reachable from a `$top` value counts once, however many objects refer to it. An object of a class
/// counts under its `$classname`; plain `$objects` entries, which Foundation writes without a class, count as the
/// class they stand for: a string as `NSString`, a number or Boolean as `NSNumber`, bytes as `NSData` (and a date as
/// `NSDate`). Nil (UID 0 or a `$null` entry) counts as nothing. Keyed archives held in a data value are bytes here:
/// they are not opened.
public struct ArchiveClassCensus: Sendable, Hashable {
    /// Objects per class name.
    public internal(set) var counts: [String: Int] = [:]
    /// Each class's chain as `$classes` writes it: the class, then its superclasses, most specific first.
    public internal(set) var chains: [String: [String]] = [:]

    /// An empty census.
    public init() {}

    package mutating func count(_ name: String, chain: [String]) {
        counts[name, default: 0] += 1
        if chains[name] == nil { chains[name] = chain.isEmpty ? [name] : chain }
    }
}

extension KeyedArchive {
    /// Counts the classes of the objects reachable from `$top` (see ``ArchiveClassCensus``), with the rules Decant
    /// reads transformable values by (``decodeTree(_:maximumDepth:)``): references nested deeper than `maximumDepth`
    /// and an object that contains itself are refused.
    ///
    /// The walk keeps one frame per level of the path it is on and visits each object once, so its time and memory
    /// follow the archive's size, whatever its shape.
    /// - Throws: `.malformedInput` naming the object: a reference cycle, nesting deeper than `maximumDepth`, or
    ///   an object ``object(at:)`` refuses.
    public func classCensus(maximumDepth: Int = 64) throws -> ArchiveClassCensus {
        var census = ArchiveClassCensus()
        /// `false` while an object is on the path being walked, `true` once everything below it was.
        var finished: [Int: Bool] = [:]
        var path: [(index: Int, children: [Int])] = []

        func enter(_ value: PropertyListValue) throws {
            guard case .uid = value else {
                if let name = Self.plainClassName(of: value) { census.count(name, chain: [name, "NSObject"]) }
                return
            }
            guard let index = try reference(value) else { return }
            switch finished[index] {
            case true?: return
            case false?: throw error("object contains itself (reference cycle)", object: index, key: nil)
            case nil: break
            }
            guard path.count < maximumDepth else {
                throw error("values nested deeper than \(maximumDepth) levels", object: index, key: nil)
            }
            let object = try object(at: index)
            var children: [Int] = []
            if let className = object.className {
                census.count(className, chain: object.classes)
                for (_, field) in object.fields { collectReferences(in: field, into: &children, depth: 0) }
            } else {
                let entry = object.value
                if let name = Self.plainClassName(of: entry) { census.count(name, chain: [name, "NSObject"]) }
                collectReferences(in: entry, into: &children, depth: 0)
            }
            finished[index] = false
            path.append((index, children.reversed()))
        }

        for key in topKeys {
            guard let value = topValue(forKey: key) else { continue }
            try enter(value)
            while let last = path.indices.last {
                guard let child = path[last].children.popLast() else {
                    finished[path[last].index] = true
                    path.removeLast()
                    continue
                }
                try enter(.uid(UInt64(child)))
            }
        }
        return census
    }

    /// The class a plain `$objects` entry or inline value stands for; nil for the `$null` string and for
    /// containers (whose elements are counted instead).
    private static func plainClassName(of value: PropertyListValue) -> String? {
        switch value {
        case .string(let string): string == "$null" ? nil : "NSString"
        case .integer, .real, .bool: "NSNumber"
        case .data: "NSData"
        case .date: "NSDate"
        case .null, .uid, .array, .set, .dictionary: nil
        }
    }

    /// The references in a field value, inline containers included (their depth was checked when the object was
    /// read: ``object(at:)``).
    private func collectReferences(in value: PropertyListValue, into found: inout [Int], depth: Int) {
        switch value {
        case .uid(let uid):
            if uid != 0, uid < UInt64(objectCount) { found.append(Int(uid)) }
        case .array(let elements), .set(let elements):
            guard depth < 64 else { return }
            for element in elements { collectReferences(in: element, into: &found, depth: depth + 1) }
        case .dictionary(let dictionary):
            guard depth < 64 else { return }
            for element in dictionary.values { collectReferences(in: element, into: &found, depth: depth + 1) }
        default:
            break
        }
    }
}
