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
    static func parseDocument(_ data: Data, path: String) throws -> XcdatamodelNode {
        let parser = XMLParser(data: data)
        let builder = TreeBuilder()
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        if !succeeded || builder.root == nil {
            let line = builder.errorLine ?? max(parser.lineNumber, 1)
            let column = builder.errorColumn ?? (parser.columnNumber > 0 ? parser.columnNumber : nil)
            let reason = parser.parserError.map { String(describing: $0) } ?? "no root element"
            throw DecantError(
                .malformedInput, "the model's XML cannot be parsed (\(reason))",
                at: Location(path: path, line: line, column: column), underlyingError: parser.parserError)
        }
        guard let root = builder.root else {
            throw DecantError(.malformedInput, "the model's XML has no root element", at: Location(path: path))
        }
        return root
    }
}

/// Builds the element tree from parser callbacks; used by one parse on one thread.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var stack: [XcdatamodelNode] = []
    var root: XcdatamodelNode?
    var errorLine: Int?
    var errorColumn: Int?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        stack.append(
            XcdatamodelNode(name: elementName, attributes: attributeDict, line: max(parser.lineNumber, 1), children: []))
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if errorLine == nil {
            errorLine = max(parser.lineNumber, 1)
            errorColumn = parser.columnNumber > 0 ? parser.columnNumber : nil
        }
    }
}
