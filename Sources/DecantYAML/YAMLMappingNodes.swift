public import DecantCore
import Yams

/// Reads YAML text into ``MappingNode``s (the only thing Decant uses YAML for: mapping files).
///
/// ```swift
/// let root = try YAMLMappingNodes.parse("source: Notes\ndestination: Notes 2\n", path: "v1-v2.yaml")
/// ```
public enum YAMLMappingNodes: Sendable {
    /// The most aliases (`*name`) one file may expand, counting those inside expanded aliases.
    public static let maximumAliases = 10_000
    /// The most nodes alias expansion may add to a file's own.
    public static let maximumExpandedNodes = 100_000
    /// The most bytes of text alias expansion may add.
    public static let maximumExpandedBytes = 8 << 20

    /// Parses one YAML document.
    ///
    /// Aliases are expanded within bounds (``maximumAliases``, ``maximumExpandedNodes``, ``maximumExpandedBytes``),
    /// as XML entity expansion is: a few hundred bytes of nested aliases ("billion laughs") would otherwise expand
    /// to gigabytes.
    /// - Throws: `.malformedInput` naming the file and line of the YAML error, or of the entry whose aliases
    ///   expand past the bounds.
    public static func parse(_ text: String, path: String) throws -> MappingNode {
        let parser: Parser
        let node: Node?
        do {
            parser = try Parser(yaml: text)
            node = try parser.singleRoot()
        } catch let error as YamlError {
            throw DecantError(
                .malformedInput,
                "not valid YAML: \(Self.reason(error))",
                at: Location(path: path, line: Self.line(error))
            )
        } catch {
            throw DecantError(.malformedInput, "not valid YAML: \(error)", at: Location(path: path))
        }
        guard let node else { return MappingNode(.null, line: 1) }
        // The parser holds the anchors; a node's anchor (weak) tells where an alias repeats an anchored node.
        return try withExtendedLifetime(parser) {
            var expansion = Expansion(path: path)
            return try convert(node, expanding: false, origin: 1, &expansion)
        }
    }

    /// What alias expansion has added so far.
    private struct Expansion {
        let path: String
        var anchorsSeen: Set<ObjectIdentifier> = []
        var aliases = 0
        var nodes = 0
        var bytes = 0

        /// Counts `node`; returns whether it (and everything under it) is an alias's copy.
        mutating func count(_ node: Node, expanding: Bool, line: Int) throws -> Bool {
            var expanding = expanding
            if let anchor = node.anchor, !anchorsSeen.insert(ObjectIdentifier(anchor)).inserted {
                expanding = true
                aliases += 1
            }
            guard expanding else { return false }
            nodes += 1
            if case .scalar(let scalar) = node { bytes += scalar.string.utf8.count }
            guard aliases <= maximumAliases, nodes <= maximumExpandedNodes, bytes <= maximumExpandedBytes else {
                throw DecantError(
                    .malformedInput,
                    "YAML aliases expand past the limit (\(maximumAliases) aliases, \(maximumExpandedNodes) nodes "
                        + "or \(maximumExpandedBytes >> 20) MiB of text expanded); write the values out instead",
                    at: Location(path: path, line: line)
                )
            }
            return true
        }
    }

    /// `origin` is the line of the nearest node the file itself writes (an alias's copy has its anchor's lines).
    private static func convert(
        _ node: Node, expanding: Bool, origin: Int, _ expansion: inout Expansion
    ) throws -> MappingNode {
        let line = node.mark?.line ?? 1
        let expanding = try expansion.count(node, expanding: expanding, line: origin)
        let here = expanding ? origin : line
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain, node.tag == Tag(.null) { return MappingNode(.null, line: line) }
            return MappingNode(.scalar(scalar.string), line: line)
        case .mapping(let mapping):
            var entries: [MappingNode.Entry] = []
            for pair in mapping {
                let keyLine = pair.key.mark?.line ?? line
                let key = try convert(pair.key, expanding: expanding, origin: expanding ? here : keyLine, &expansion)
                let keyText: String
                switch key.content {
                case .scalar(let text): keyText = text
                case .null: keyText = pair.key.string ?? "null"
                default:
                    throw DecantError(
                        .malformedInput, "a key must be a name, not a list or a map",
                        at: Location(path: expansion.path, line: keyLine))
                }
                let origin = expanding ? here : keyLine
                let value = try convert(pair.value, expanding: expanding, origin: origin, &expansion)
                entries.append(MappingNode.Entry(key: keyText, line: keyLine, value: value))
            }
            return MappingNode(.map(entries), line: line)
        case .sequence(let sequence):
            var items: [MappingNode] = []
            for item in sequence { items.append(try convert(item, expanding: expanding, origin: here, &expansion)) }
            return MappingNode(.list(items), line: line)
        case .alias:
            return MappingNode(.null, line: line)
        }
    }

    private static func line(_ error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default:
            return nil
        }
    }

    private static func reason(_ error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
            .composer(let context, let problem, _, _):
            return [context?.text, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
        default:
            return "\(error)"
        }
    }
}
