import DecantCore
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One element of a parsed `contents` file: its name, XML attributes, children and the line it starts on.
struct XcdatamodelNode: Sendable {
    /// The element name.
    var name: String
    /// The XML attributes, by name.
    var attributes: [String: String]
    /// The 1-based line the start tag is on.
    var line: Int
    /// Child elements, in document order.
    var children: [XcdatamodelNode]

    /// The children with this element name.
    func children(named name: String) -> [XcdatamodelNode] {
        children.filter { $0.name == name }
    }

    /// Whether the XML attribute is the literal `YES`.
    func flag(_ key: String) -> Bool {
        attributes[key] == "YES"
    }

    /// Parses a whole document into its root element, throwing `.malformedInput` with the line on bad XML.
    ///
    /// The bytes are checked first (``XMLInput/check(_:path:)``), and elements nested deeper than
    /// ``XMLInput/maximumElementDepth`` are refused, so neither building nor dropping the tree can exhaust the stack.
    static func parseDocument(_ data: Data, path: String) throws -> XcdatamodelNode {
        let parser = try XMLInput.makeParser(data, path: path)
        let builder = TreeBuilder(path: path)
        parser.delegate = builder
        let succeeded = parser.parse()
        if let failure = builder.failure { throw failure }
        // libxml2 recovers from some errors and reports success; any reported error counts.
        if !succeeded || builder.error != nil || builder.root == nil {
            let line = builder.errorLine ?? max(parser.lineNumber, 1)
            let column = builder.errorColumn ?? (parser.columnNumber > 0 ? parser.columnNumber : nil)
            let error = builder.error ?? parser.parserError
            throw DecantError(
                .malformedInput, "the model's XML is not well-formed: \(XMLInput.reason(for: error))",
                at: Location(path: path, line: line, column: column), underlyingError: error)
        }
        guard let root = builder.root else {
            throw DecantError(.malformedInput, "the model's XML has no root element", at: Location(path: path))
        }
        return root
    }
}

/// Builds the element tree from parser callbacks; used by one parse on one thread.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    let path: String
    var stack: [XcdatamodelNode] = []
    var root: XcdatamodelNode?
    /// The first error the parser reported, and where.
    package var error: (any Error)?
    var errorLine: Int?
    var errorColumn: Int?
    /// An error of our own that stopped the parse (nesting too deep).
    var failure: DecantError?

    init(path: String) {
        self.path = path
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        let line = max(parser.lineNumber, 1)
        guard stack.count < XMLInput.maximumElementDepth else {
            failure = DecantError(
                .malformedInput, "elements nested deeper than \(XMLInput.maximumElementDepth) levels",
                at: Location(path: path, line: line))
            stack.removeAll()
            parser.abortParsing()
            return
        }
        stack.append(XcdatamodelNode(name: elementName, attributes: attributeDict, line: line, children: []))
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        guard failure == nil, let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if error == nil {
            error = parseError
            errorLine = max(parser.lineNumber, 1)
            errorColumn = parser.columnNumber > 0 ? parser.columnNumber : nil
        }
    }
}
