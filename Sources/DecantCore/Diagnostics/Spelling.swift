/// The nearest spelling of a misspelt name, for messages that say what was meant (`did you mean --to-version?`).
///
/// ```swift
/// Spelling.nearest(to: "continnent", among: ["continent", "moods"])   // "continent"
/// ```
public enum Spelling: Sendable {
    /// The Levenshtein distance between two names, by UTF-8 bytes.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The name of `names` nearest to `name`, when it is near enough to be what was meant (at most a third of its
    /// letters apart, and at least 2, or `tolerance` when given); nil otherwise.
    public static func nearest(to name: String, among names: some Sequence<String>, tolerance: Int? = nil) -> String? {
        let allowed = tolerance ?? max(2, name.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in names {
            let found = distance(name, candidate)
            if found <= allowed, found < best?.distance ?? .max { best = (candidate, found) }
        }
        return best?.name
    }
}
