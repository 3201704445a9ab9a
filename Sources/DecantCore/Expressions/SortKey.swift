import Foundation

/// One sort key: what `--sort key[:desc],…` takes.
///
/// ```swift
/// let order = try SortKey.list(parsing: "date:desc,title")
/// order.map(\.keyPath)    // [["date"], ["title"]]
/// ```
public struct SortKey: Sendable, Hashable {
    /// The attribute (a key path of one component for stored order; more go through to-one relationships).
    public var keyPath: [String]
    /// Ascending unless false.
    public var ascending: Bool

    /// Creates a sort key.
    public init(keyPath: [String], ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Parses `key[:asc|:desc],…`.
    /// - Throws: `.usage` naming the position of a malformed key.
    public static func list(parsing text: String, source: String = "--sort") throws -> [SortKey] {
        var result: [SortKey] = []
        var column = 1
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            let key = pieces[0].trimmingCharacters(in: .whitespaces)
            let direction = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces).lowercased() : "asc"
            let path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !key.isEmpty, pieces.count <= 2, ["asc", "desc"].contains(direction),
                path.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } })
            else {
                throw DecantError(
                    .usage, "expected key[:asc|:desc] here, found \"\(part)\"",
                    at: Location(path: source, line: 1, column: column))
            }
            result.append(SortKey(keyPath: path, ascending: direction == "asc"))
            column += part.count + 1
        }
        return result
    }
}
