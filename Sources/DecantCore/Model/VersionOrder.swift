import Foundation

/// The order of a bundle's versions, oldest first. Core Data itself has none (it opens a store with the version
/// whose entity hashes match, and infers one step to the current version); apps walk their versions in the order
/// they made them, which Xcode's names follow: the first version carries the bundle's name (`Model`), later ones a
/// number (`Model 2` … `Model 13`, or `2` … `13`).
///
/// ```swift
/// let order = VersionOrder.byName(["Model", "Model 10", "Model 2"], bundleName: "Model")
/// // .byName, names ["Model", "Model 2", "Model 10"]
/// ```
public enum VersionOrder: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Xcode's naming convention: the version named like the bundle (or the one with no number) first, then the
    /// others with their numbers compared as numbers (`Model 2` < `Model 10`, `1.9.0` < `1.10.0`).
    case byName = "by-name"
    /// The order the user gave (`--version-order`), or the order a bundle built in code was given.
    case given
    /// The names follow no common scheme (a bundle renamed over the years): no version is known to be older than
    /// another, except that the current version is the newest.
    case unknown

    public var description: String {
        switch self {
        case .byName: "by name (Xcode's numbering)"
        case .given: "as given"
        case .unknown: "unknown (the names follow no common scheme; the current version is the newest)"
        }
    }

    /// Whether the order says which of two versions is older.
    public var isKnown: Bool { self != .unknown }

    /// Sorts version names by Xcode's conventions: the names in order and ``byName``, or, when the names follow no
    /// common scheme, sorted numerically for display and ``unknown``.
    ///
    /// The scheme: the name of the bundle, else the one name without a number, comes first; every other name
    /// starts with the same text before its first digit (`Model 2`, `Model 10`; `2`, `10`; `v1.9.0`, `v1.10.0`)
    /// and they compare with their digit runs as numbers. A first version and one other are in order whatever the
    /// other's name.
    public static func byName(_ names: [String], bundleName: String) -> (names: [String], order: VersionOrder) {
        let sorted = names.sorted(by: precedesNumerically)
        guard names.count > 1 else { return (sorted, .byName) }
        let first = names.filter { $0 == bundleName }
        let unnumbered = names.filter { name in !name.contains { $0.isASCII && $0.isNumber } }
        let lead: [String]
        if first.count == 1 {
            lead = first
        } else if unnumbered.count == 1 {
            lead = unnumbered
        } else {
            lead = []
        }
        let rest = sorted.filter { !lead.contains($0) }
        let prefixes = Set(rest.map { name in String(name.prefix { !($0.isASCII && $0.isNumber) }) })
        let numbered = rest.allSatisfy { name in name.contains { $0.isASCII && $0.isNumber } }
        // One version besides the first needs no number (`Migration`, then `New`).
        guard prefixes.count <= 1, numbered || (rest.count == 1 && !lead.isEmpty) else { return (sorted, .unknown) }
        return (lead + rest, .byName)
    }

    /// The names in a list the user wrote: separated by commas or lines, blanks trimmed, empty entries and lines
    /// starting with `#` left out.
    public static func names(inList text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Orders `names` as `given` lists them (every name once).
    /// - Throws: `.usage` naming a version the list lacks or names that are not versions.
    public static func given(_ given: [String], names: [String], bundleName: String) throws -> [String] {
        let unknown = given.filter { !names.contains($0) }
        let missing = names.filter { !given.contains($0) }
        let repeated = Set(given.filter { name in given.filter { $0 == name }.count > 1 })
        guard unknown.isEmpty, missing.isEmpty, repeated.isEmpty else {
            var parts: [String] = []
            if !unknown.isEmpty { parts.append("names no version of \(bundleName): \(unknown.joined(separator: ", "))") }
            if !missing.isEmpty { parts.append("lacks \(missing.joined(separator: ", "))") }
            if !repeated.isEmpty { parts.append("repeats \(repeated.sorted().joined(separator: ", "))") }
            throw DecantError(
                .usage,
                "the version order " + parts.joined(separator: "; ") + " (the versions are "
                    + names.sorted(by: precedesNumerically).joined(separator: ", ") + ")")
        }
        return given
    }

    /// Numeric-aware ordering of names: runs of digits compare by value (`Model 2` < `Model 10`), a name that is a
    /// prefix of another comes first (`Model` < `Model 2`).
    public static func precedesNumerically(_ lhs: String, _ rhs: String) -> Bool {
        let left = chunks(lhs)
        let right = chunks(rhs)
        for (a, b) in zip(left, right) where a != b {
            if let x = Int(a), let y = Int(b), x != y { return x < y }
            return a.utf16.lexicographicallyPrecedes(b.utf16)
        }
        if left.count != right.count { return left.count < right.count }
        return lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    private static func chunks(_ text: String) -> [String] {
        var result: [String] = []
        var current = ""
        var inDigits = false
        for character in text {
            let digit = character.isASCII && character.isNumber
            if !current.isEmpty && digit != inDigits {
                result.append(current)
                current = ""
            }
            inDigits = digit
            current.append(character)
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

extension ModelBundle {
    /// The bundle with its versions in `names`' order (``VersionOrder/given(_:names:bundleName:)``), marked
    /// ``VersionOrder/given``.
    /// - Throws: `.usage` when `names` is not every version once.
    public func ordered(as names: [String]) throws -> ModelBundle {
        let order = try VersionOrder.given(names, names: versions.map { $0.versionName ?? "" }, bundleName: name)
        var copy = self
        copy.versions = order.compactMap { name in versions.first { $0.versionName == name } }
        copy.order = .given
        return copy
    }

    /// The position of the version a mapping names, by its name or its version checksum.
    public func index(ofVersionNamed name: String) -> Int? {
        versions.firstIndex { $0.isNamed(name) }
    }

    /// The position of a version in ``versions`` (its age when ``order`` is known).
    public func index(of version: ObjectModel) -> Int? {
        versions.firstIndex { $0.versionName == version.versionName && $0 == version }
            ?? versions.firstIndex { $0.versionName == version.versionName }
    }

    /// The current version: the one `.xccurrentversion` or `VersionInfo.plist` names, else the newest (the last
    /// when the order is known).
    public var currentIndex: Int? {
        guard !versions.isEmpty else { return nil }
        return versions.firstIndex { $0.versionName == currentVersionName } ?? versions.count - 1
    }
}

extension ObjectModel {
    /// Whether a mapping's `name` (a version name or a version checksum) names this version.
    public func isNamed(_ name: String) -> Bool { versionName == name || versionChecksum == name }
}
