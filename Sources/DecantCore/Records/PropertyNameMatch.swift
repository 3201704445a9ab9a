/// How a key or column header from a file finds the property it stands for, the same for every format: exactly,
/// then ignoring case, then ignoring case and the separators `_` and `-` (so `created_at` finds `createdAt`).
///
/// ```swift
/// PropertyNameMatch.match("Created_At", among: [("createdAt", 0), ("title", 1)])   // [("createdAt", 0)]
/// ```
public enum PropertyNameMatch: Sendable {
    /// The number of rules.
    public static let ruleCount = 3

    /// `name` as rule `rule` compares it.
    public static func normalized(_ name: String, rule: Int) -> String {
        switch rule {
        case 0: name
        case 1: name.lowercased()
        default: String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
        }
    }

    /// The candidates `name` fits under the first rule any fits (empty when none does; more than one is
    /// ambiguous, for the caller to report).
    public static func match<Target>(
        _ name: String, among candidates: [(name: String, target: Target)]
    ) -> [(name: String, target: Target)] {
        for rule in 0..<ruleCount {
            let key = normalized(name, rule: rule)
            let found = candidates.filter { normalized($0.name, rule: rule) == key }
            if !found.isEmpty { return found }
        }
        return []
    }
}
