/// The string functions Core Data's schema generator relies on, implemented without Foundation's locale.
enum SchemaNaming {
    /// Foundation's `caseInsensitiveCompare:` ordering: compares case-folded UTF-16 code units, ties broken by the
    /// literal code units so the order is total.
    static func caseInsensitiveLess(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.lowercased().utf16)
        let right = Array(rhs.lowercased().utf16)
        if left != right { return left.lexicographicallyPrecedes(right) }
        return Array(lhs.utf16).lexicographicallyPrecedes(Array(rhs.utf16))
    }

    /// Name order for properties within an entity (`compare:`, literal UTF-16 order).
    static func literalLess(_ lhs: String, _ rhs: String) -> Bool {
        Array(lhs.utf16).lexicographicallyPrecedes(Array(rhs.utf16))
    }

    /// Upper-cases ASCII letters only, as Core Data does for attribute columns.
    static func asciiUppercased(_ name: String) -> String {
        var units = Array(name.utf16)
        for index in units.indices where units[index] >= 0x61 && units[index] <= 0x7A { units[index] -= 0x20 }
        return String(decoding: units, as: UTF16.self)
    }

    /// Full Unicode upper-casing, used for every name derived from a relationship.
    static func unicodeUppercased(_ name: String) -> String {
        name.uppercased()
    }

    /// The 32-bit hash of a name's UTF-16 code units that orders Core Data's property hash tables (4.14).
    static func hash(_ name: String) -> UInt32 {
        let units = Array(name.utf16).map(UInt32.init)
        let length = units.count
        var result = UInt32(truncatingIfNeeded: length)
        func step(_ start: Int) {
            result = result &* 67_503_105 &+ units[start] &* 16_974_593 &+ units[start + 1] &* 66_049
                &+ units[start + 2] &* 257 &+ units[start + 3]
        }
        if length <= 23 {
            var index = 0
            while index + 4 <= length {
                step(index)
                index += 4
            }
            while index < length {
                result = result &* 257 &+ units[index]
                index += 1
            }
        } else {
            step(0)
            step(4)
            var index = length - 16
            while index < length {
                step(index)
                index += 4
            }
        }
        return (result << UInt32(length % 32)) &+ result
    }

    /// The bucket count of a property hash table holding `count` entries (4.14's capacity→prime pairs; beyond 521
    /// entries the pairs are extrapolated, which is UNCERTAIN).
    static func bucketCount(forEntries count: Int) -> Int {
        let pairs: [(capacity: Int, prime: Int)] = [
            (4, 5), (8, 11), (17, 23), (29, 41), (47, 67), (76, 113), (123, 199), (199, 317), (322, 521), (521, 839),
        ]
        if let pair = pairs.first(where: { $0.capacity >= count }) { return pair.prime }
        var previous = 322
        var capacity = 521
        while capacity < count { (previous, capacity) = (capacity, previous + capacity) }
        var candidate = capacity * 161 / 100
        while !isPrime(candidate) { candidate += 1 }
        return candidate
    }

    private static func isPrime(_ value: Int) -> Bool {
        if value < 2 { return false }
        var divisor = 2
        while divisor * divisor <= value {
            if value % divisor == 0 { return false }
            divisor += 1
        }
        return true
    }
}

/// Core Data's per-hierarchy column name generator (`uniqueNameWithBase:`): a base asked for again gets the next
/// numeric suffix that is not itself a recorded name.
struct SchemaNameGenerator {
    private var lastSuffix: [String: Int] = [:]

    /// Creates a generator with some names already taken.
    init(reserved: [String] = []) {
        for name in reserved { lastSuffix[name] = 0 }
    }

    /// Returns `base`, or `base` followed by the next free number, and records the result.
    mutating func uniqueName(base: String) -> String {
        guard let last = lastSuffix[base] else {
            lastSuffix[base] = 0
            return base
        }
        var suffix = last + 1
        while lastSuffix["\(base)\(suffix)"] != nil { suffix += 1 }
        lastSuffix[base] = suffix
        lastSuffix["\(base)\(suffix)"] = 0
        return "\(base)\(suffix)"
    }
}
