/// A parsed mapping file before it is read as a mapping: maps, lists and scalars, each with its 1-based line, so that
/// every error can name the file, line and key. YAML (`DecantYAML`) and JSON (`DecantFormats`) both parse into it.
///
/// ```swift
/// let source = MappingNode(.scalar("Notes"), line: 1)
/// let node = MappingNode(.map([.init(key: "source", line: 1, value: source)]), line: 1)
/// ```
public struct MappingNode: Sendable, Hashable {
    /// One key of a map, with the line the key is on.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The key's line.
        public var line: Int
        /// The value.
        public var value: MappingNode

        /// Creates an entry.
        public init(key: String, line: Int, value: MappingNode) {
            self.key = key
            self.line = line
            self.value = value
        }
    }

    /// What the node holds.
    public enum Content: Sendable, Hashable {
        /// `null` (or `~`, or nothing).
        case null
        /// A string, number or boolean, as written.
        case scalar(String)
        /// A map, keys in file order.
        case map([Entry])
        /// A list.
        case list([MappingNode])
    }

    /// What the node holds.
    public var content: Content
    /// The node's 1-based line.
    public var line: Int

    /// Creates a node.
    public init(_ content: Content, line: Int) {
        self.content = content
        self.line = line
    }
}
