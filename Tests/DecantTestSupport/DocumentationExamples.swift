import Foundation

/// The code examples and symbol links of DocC articles, for the tests that keep them compiling and resolving.
public enum DocumentationExamples {
    /// The bodies of the ```` ```swift ```` blocks of a Markdown text, in order.
    public static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if let lines = current, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// A block as a test file compiles it: without its `import` lines and leading blank lines, and with a test
    /// function's `@Test` attribute removed (compiled, not run).
    public static func compiledForm(of block: String) -> String {
        block.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("import ") }
            .map { $0.hasPrefix("@Test ") ? String($0.dropFirst(6)) : String($0) }
            .joined(separator: "\n")
            .trimmingCharacters(in: .newlines)
    }

    /// `code` with every non-empty line indented by `spaces`.
    public static func indent(_ code: String, by spaces: Int) -> String {
        let pad = String(repeating: " ", count: spaces)
        return code.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : pad + $0 }.joined(separator: "\n")
    }

    /// The symbol links (``` ``Name`` ```, ``` ``Name/member(label:)`` ```) of a Markdown text outside its fenced
    /// code blocks, in order of first appearance, each once. An unclosed link runs to the next pair of backticks,
    /// so it comes back spanning lines.
    public static func symbolLinks(in markdown: String) -> [String] {
        var prose: [Substring] = []
        var inFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
            } else if !inFence {
                prose.append(line)
            }
        }
        var links: [String] = []
        let text = prose.joined(separator: "\n")
        var rest = text[...]
        while let open = rest.range(of: "``") {
            let after = rest[open.upperBound...]
            guard let close = after.range(of: "``") else { break }
            let link = String(after[..<close.lowerBound])
            if !links.contains(link) { links.append(link) }
            rest = after[close.upperBound...]
        }
        return links
    }
}
