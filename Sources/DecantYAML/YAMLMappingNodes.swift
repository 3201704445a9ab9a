public import DecantCore
import Yams

/// Reads YAML text into ``MappingNode``s (the only thing Decant uses YAML for: mapping files).
///
/// ```swift
/// let root = try YAMLMappingNodes.parse("source: Notes\ndestination: Notes 2\n", path: "v1-v2.yaml")
/// ```
public enum YAMLMappingNodes: Sendable {
    /// Parses one YAML document.
    /// - Throws: `.malformedInput` naming the file and line of the YAML error.
    public static func parse(_ text: String, path: String) throws -> MappingNode {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
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
        return convert(node)
    }

    private static func convert(_ node: Node) -> MappingNode {
        let line = node.mark?.line ?? 1
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain, node.tag == Tag(.null) { return MappingNode(.null, line: line) }
            return MappingNode(.scalar(scalar.string), line: line)
        case .mapping(let mapping):
            let entries = mapping.map { pair in
                MappingNode.Entry(
                    key: pair.key.string ?? "\(pair.key)",
                    line: pair.key.mark?.line ?? line,
                    value: convert(pair.value)
                )
            }
            return MappingNode(.map(entries), line: line)
        case .sequence(let sequence):
            return MappingNode(.list(sequence.map(convert)), line: line)
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
