import DecantCore
import DecantCodecs
import Foundation

/// An XML store parsed into its parts, values still as the text the file holds (section 5 of the formats spec).
struct XMLStoreDocument {
    /// One `<attribute>` or `<relationship>` of an object.
    struct Field {
        /// Whether this is a `<relationship>`.
        var isRelationship: Bool
        /// The `name` (lower-cased property name).
        var name: String
        /// The `type` token (`string`, `int32`, … or `1/1`, `0/0`).
        var type: String
        /// For a relationship, the `destination` (upper-cased entity name).
        var destination: String?
        /// The attribute's text, or the relationship's `idrefs` (empty when absent); empty when ``rawText`` is set.
        var text: String
        /// The line of the element.
        var line: Int
        /// For an attribute read raw (`rawTextOf`), the byte range of its text as written (entities and line ends
        /// not decoded), when it held plain text only.
        var rawText: Range<Int>? = nil
    }

    /// One `<object>`.
    struct Object {
        /// The `type` (upper-cased entity name).
        var type: String
        /// The `id` (`z102`).
        var id: String
        /// The line of the element.
        var line: Int
        /// Its attributes and relationships, in file order.
        var fields: [Field]
    }

    /// `databaseInfo/version`.
    var version: Int64?
    /// `databaseInfo/UUID`.
    var uuid: String?
    /// `databaseInfo/nextObjectID`.
    var nextObjectID: Int64?
    /// The metadata plist (empty for very old files).
    var metadata = PropertyListDictionary()
    /// The objects, in file order.
    var objects: [Object] = []

    /// Parses `bytes`; `path` labels errors. The text of attributes named in `rawTextOf` (lower-cased names) is not
    /// decoded but kept as a byte range (``Field/rawText``) when it is plain text, and then the document is not
    /// checked for UTF-8 up front (``XMLStoreScanner/init(bytes:path:maximumDepth:validatesText:)``): a reader that
    /// wants one or two values of a large file skips the rest at the speed of a byte search.
    ///
    /// With `objectTypes`, objects of other types (upper-cased) are skipped unread where the scanner can tell where
    /// they end (``XMLStoreScanner/skipElement()``), else read: ``objects`` then holds those types and perhaps others.
    init(
        bytes: [UInt8], path: String?, maximumDepth: Int = 128, rawTextOf rawFields: Set<String> = [],
        objectTypes: Set<String>? = nil
    ) throws {
        var scanner = try XMLStoreScanner(
            bytes: bytes, path: path, maximumDepth: maximumDepth,
            validatesText: rawFields.isEmpty && objectTypes == nil)
        guard case .start(let root, _)? = try scanner.next() else { throw scanner.error("no root element") }
        guard root == "database" else {
            throw scanner.error("the root element is <\(root)>, not <database>: this is not a Core Data XML store")
        }
        while let event = try scanner.next() {
            switch event {
            case .text: continue
            case .end: break
            case .start(let name, let attributes):
                switch name {
                case "databaseInfo": try readInfo(&scanner)
                case "metadata": metadata = try Self.readMetadata(&scanner)
                case "object":
                    if let objectTypes, let type = attributes["type"], !objectTypes.contains(type.uppercased()),
                        scanner.skipElement()
                    {
                        continue
                    }
                    objects.append(try Self.readObject(&scanner, attributes: attributes, rawFields: rawFields))
                default: throw scanner.error("unexpected <\(name)> in <database>", line: scanner.eventLine)
                }
            }
        }
    }

    private mutating func readInfo(_ scanner: inout XMLStoreScanner) throws {
        while let event = try scanner.next() {
            switch event {
            case .text: continue
            case .end: return
            case .start(let name, _):
                let line = scanner.eventLine
                switch name {
                case "version", "nextObjectID":
                    let text = try Self.readText(&scanner).trimmingCharacters(in: .whitespacesAndNewlines)
                    guard let number = Int64(text) else {
                        throw scanner.error("<\(name)> '\(text)' is not an integer", line: line)
                    }
                    if name == "version" { version = number } else { nextObjectID = number }
                case "UUID": uuid = try Self.readText(&scanner).trimmingCharacters(in: .whitespacesAndNewlines)
                case "metadata": metadata = try Self.readMetadata(&scanner)
                default: throw scanner.error("unexpected <\(name)> in <databaseInfo>", line: line)
                }
            }
        }
    }

    /// The text of an element without children, up to its end tag.
    private static func readText(_ scanner: inout XMLStoreScanner) throws -> String {
        var text = ""
        while let event = try scanner.next() {
            switch event {
            case .text(let part): text += part
            case .end: return text
            case .start(let name, _):
                throw scanner.error("unexpected <\(name)> inside a value", line: scanner.eventLine)
            }
        }
        return text
    }

    private static func readMetadata(_ scanner: inout XMLStoreScanner) throws -> PropertyListDictionary {
        var result = PropertyListDictionary()
        while let event = try scanner.next() {
            switch event {
            case .text: continue
            case .end: return result
            case .start(let name, _):
                guard name == "plist" else { throw scanner.error("unexpected <\(name)> in <metadata>") }
                var top: PropertyListValue?
                while let inner = try scanner.next() {
                    if case .end = inner { break }
                    if case .start(let element, _) = inner {
                        guard top == nil else { throw scanner.error("more than one value in <plist>") }
                        top = try readPlistValue(&scanner, element: element)
                    }
                }
                guard case .dictionary(let dictionary)? = top else {
                    throw scanner.error("the metadata plist is not a dictionary")
                }
                result = dictionary
            }
        }
        return result
    }

    /// One property list value whose start tag `element` was just read.
    private static func readPlistValue(_ scanner: inout XMLStoreScanner, element: String) throws -> PropertyListValue {
        let line = scanner.eventLine
        func fail(_ message: String) -> DecantError { scanner.error("metadata: \(message)", line: line) }
        switch element {
        case "dict":
            var dictionary = PropertyListDictionary()
            var key: String?
            while let event = try scanner.next() {
                switch event {
                case .text: continue
                case .end:
                    guard key == nil else { throw fail("<key>\(key ?? "")</key> has no value") }
                    return .dictionary(dictionary)
                case .start(let name, _):
                    if name == "key" {
                        guard key == nil else { throw fail("two <key>s in a row") }
                        key = try readText(&scanner)
                    } else {
                        guard let pending = key else { throw fail("a dictionary value without a <key>") }
                        dictionary[pending] = try readPlistValue(&scanner, element: name)
                        key = nil
                    }
                }
            }
            throw fail("unterminated <dict>")
        case "array":
            var elements: [PropertyListValue] = []
            while let event = try scanner.next() {
                switch event {
                case .text: continue
                case .end: return .array(elements)
                case .start(let name, _): elements.append(try readPlistValue(&scanner, element: name))
                }
            }
            throw fail("unterminated <array>")
        case "string": return .string(try readText(&scanner))
        case "integer":
            let text = try readText(&scanner).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Int64(text) else { throw fail("<integer> '\(text)' is not an integer") }
            return .integer(value)
        case "real":
            let text = try readText(&scanner).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Double(text) else { throw fail("<real> '\(text)' is not a number") }
            return .real(value)
        case "date":
            let text = try readText(&scanner).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = parsePropertyListDate(text) else { throw fail("<date> '\(text)' is not a date") }
            return .date(value)
        case "data":
            let text = try readText(&scanner)
            guard let value = Data(base64Encoded: text.filter { !$0.isWhitespace }) else {
                throw fail("<data> is not base64")
            }
            return .data(value)
        case "true", "false":
            _ = try readText(&scanner)
            return .bool(element == "true")
        default:
            throw fail("unknown property list element <\(element)>")
        }
    }

    private static func readObject(
        _ scanner: inout XMLStoreScanner, attributes: [String: String], rawFields: Set<String>
    ) throws -> Object {
        let line = scanner.eventLine
        guard let type = attributes["type"], !type.isEmpty else {
            throw scanner.error("<object> without a type", line: line)
        }
        guard let id = attributes["id"], !id.isEmpty else { throw scanner.error("<object> without an id", line: line) }
        var object = Object(type: type, id: id, line: line, fields: [])
        while let event = try scanner.next() {
            switch event {
            case .text: continue
            case .end: return object
            case .start(let name, let attributes):
                let fieldLine = scanner.eventLine
                func fail(_ message: String) -> DecantError {
                    DecantError(
                        .malformedInput, message,
                        at: Location(path: scanner.path, line: fieldLine, entity: type, object: id))
                }
                guard name == "attribute" || name == "relationship" else {
                    throw fail("unexpected <\(name)> in <object>")
                }
                guard let property = attributes["name"], !property.isEmpty else {
                    throw fail("<\(name)> without a name")
                }
                guard let token = attributes["type"] else {
                    throw fail("<\(name) name=\"\(property)\"> without a type")
                }
                let isRelationship = name == "relationship"
                let raw = !isRelationship && rawFields.contains(property.lowercased()) ? scanner.skipPlainText() : nil
                let text = try readText(&scanner)
                if isRelationship {
                    guard text.allSatisfy(\.isWhitespace) else { throw fail("text inside <relationship>") }
                }
                object.fields.append(
                    Field(
                        isRelationship: isRelationship, name: property, type: token,
                        destination: attributes["destination"],
                        text: isRelationship ? attributes["idrefs"] ?? "" : text, line: fieldLine, rawText: raw))
            }
        }
        return object
    }
}
