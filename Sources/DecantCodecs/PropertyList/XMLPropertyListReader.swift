import DecantCore
public import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses XML property lists (`<plist version="1.0">`), turning `{CF$UID: n}` dictionaries into `.uid(n)`.
///
/// ```swift
/// let value = try XMLPropertyListReader(path: "NSKeyedUnarchiver-URLTest.plist").read(data)
/// ```
///
/// Errors are ``DecantError`` with code `.malformedInput` and the line of the offending element (the byte offset
/// for bytes that are not UTF-8); the bytes are checked before the parser sees them (``XMLInput``).
public struct XMLPropertyListReader: Sendable {
    /// The file name put into error locations.
    public var path: String?
    /// The deepest nesting of arrays and dictionaries accepted. Defaults to 256.
    public var maximumDepth: Int

    /// Creates a reader; `path` only labels errors.
    public init(path: String? = nil, maximumDepth: Int = 256) {
        self.path = path
        self.maximumDepth = maximumDepth
    }

    /// Parses `data` and returns the property list's top value.
    public func read(_ data: Data) throws -> PropertyListValue {
        let builder = XMLPropertyListBuilder(path: path, maximumDepth: maximumDepth)
        let parser = try XMLInput.makeParser(data, path: path)
        parser.delegate = builder
        let succeeded = parser.parse()
        if let failure = builder.failure { throw failure }
        guard succeeded else {
            throw DecantError(
                .malformedInput,
                "not well-formed XML: \(XMLInput.reason(for: parser.parserError))",
                at: Location(path: path, line: max(parser.lineNumber, 1)),
                underlyingError: parser.parserError
            )
        }
        guard builder.stack.isEmpty else {
            throw DecantError(
                .malformedInput,
                "XML property list ends inside an array or dictionary",
                at: Location(path: path, line: parser.lineNumber)
            )
        }
        guard let top = builder.top else {
            throw DecantError(.malformedInput, "XML property list has no value", at: Location(path: path, line: 1))
        }
        return top
    }
}

/// Seconds between 1970-01-01 and 2001-01-01.
private let referenceDateOffset: Double = 978_307_200

/// Parses `YYYY-MM-DDTHH:MM:SSZ` into seconds since 2001-01-01 without Foundation's formatters.
package func parsePropertyListDate(_ text: String) -> Double? {
    let bytes = Array(text.utf8)
    guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
        bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
        bytes[19] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
        var value = 0
        for byte in bytes[range] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
        let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
        (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    // Days from civil (Howard Hinnant's algorithm).
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let unix = Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    return unix - referenceDateOffset
}

/// The XMLParser delegate that builds the value tree with an explicit stack.
private final class XMLPropertyListBuilder: NSObject, XMLParserDelegate {
    package enum Container {
        case array([PropertyListValue])
        case dictionary(PropertyListDictionary, pendingKey: String?)
    }

    package let path: String?
    package let maximumDepth: Int
    package var stack: [Container] = []
    package var text = ""
    package var collectingText = false
    /// The scalar element (`<string>`, `<true>`, …) being read; no element may start inside one.
    package var openScalar: String?
    package var sawPlistElement = false
    package var top: PropertyListValue?
    package var failure: DecantError?

    package init(path: String?, maximumDepth: Int) {
        self.path = path
        self.maximumDepth = maximumDepth
    }

    package func fail(_ parser: XMLParser, _ message: String) {
        if failure == nil {
            failure = DecantError(.malformedInput, message, at: Location(path: path, line: max(parser.lineNumber, 1)))
        }
        parser.abortParsing()
    }

    package func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        if let openScalar { return fail(parser, "<\(elementName)> inside <\(openScalar)>") }
        switch elementName {
        case "plist":
            guard !sawPlistElement, stack.isEmpty else { return fail(parser, "nested <plist> element") }
            sawPlistElement = true
        case "array", "dict":
            guard stack.count < maximumDepth else { return fail(parser, "nesting deeper than \(maximumDepth) levels") }
            stack.append(elementName == "array" ? .array([]) : .dictionary(PropertyListDictionary(), pendingKey: nil))
        case "key", "string", "integer", "real", "date", "data":
            text = ""
            collectingText = true
            openScalar = elementName
        case "true", "false":
            openScalar = elementName
        default:
            fail(parser, "unknown property list element <\(elementName)>")
        }
    }

    package func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        // libxml2 recovers from some errors (a mismatched end tag) and goes on; we do not.
        if failure == nil {
            let column = parser.columnNumber > 0 ? parser.columnNumber : nil
            failure = DecantError(
                .malformedInput,
                "not well-formed XML: \(XMLInput.reason(for: parseError))",
                at: Location(path: path, line: max(parser.lineNumber, 1), column: column),
                underlyingError: parseError
            )
        }
    }

    package func parser(_ parser: XMLParser, foundCharacters string: String) {
        if collectingText { text += string }
    }

    package func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if collectingText { text += String(decoding: CDATABlock, as: UTF8.self) }
    }

    package func parser(
        _ parser: XMLParser,
        didEndElement elementName: String,
        namespaceURI: String?,
        qualifiedName: String?
    ) {
        guard failure == nil else { return }
        openScalar = nil
        collectingText = elementName == "key" || elementName == "string" ? false : collectingText
        switch elementName {
        case "plist":
            guard stack.isEmpty else { return fail(parser, "</plist> closes an unfinished array or dictionary") }
            return
        case "key":
            guard case .dictionary(let dictionary, nil)? = stack.last else {
                return fail(parser, "<key> outside a dictionary or after another <key>")
            }
            stack[stack.count - 1] = .dictionary(dictionary, pendingKey: text)
            return
        case "array":
            guard case .array(let elements)? = stack.popLast() else { return fail(parser, "unbalanced </array>") }
            add(.array(elements), parser)
        case "dict":
            guard case .dictionary(let dictionary, let pendingKey)? = stack.popLast() else {
                return fail(parser, "unbalanced </dict>")
            }
            guard pendingKey == nil else { return fail(parser, "<key>\(pendingKey ?? "")</key> has no value") }
            if dictionary.count == 1, dictionary.keys[0] == "CF$UID", case .integer(let uid) = dictionary.values[0],
                uid >= 0
            {
                add(.uid(UInt64(uid)), parser)
            } else {
                add(.dictionary(dictionary), parser)
            }
        case "string":
            add(.string(text), parser)
        case "integer":
            collectingText = false
            guard let value = Self.integer(text) else { return fail(parser, "<integer> '\(text)' is not an integer") }
            add(.integer(value), parser)
        case "real":
            collectingText = false
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Double(trimmed) else { return fail(parser, "<real> '\(trimmed)' is not a number") }
            add(.real(value), parser)
        case "date":
            collectingText = false
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = parsePropertyListDate(trimmed) else {
                return fail(parser, "<date> '\(trimmed)' is not YYYY-MM-DDTHH:MM:SSZ")
            }
            add(.date(value), parser)
        case "data":
            collectingText = false
            let compact = text.filter { !$0.isWhitespace }
            guard let value = Data(base64Encoded: compact) else { return fail(parser, "<data> is not base64") }
            add(.data(value), parser)
        case "true":
            add(.bool(true), parser)
        case "false":
            add(.bool(false), parser)
        default:
            return
        }
    }

    package static func integer(_ text: String) -> Int64? {
        var body = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        var negative = false
        if body.hasPrefix("-") {
            negative = true
            body = body.dropFirst()
        } else if body.hasPrefix("+") {
            body = body.dropFirst()
        }
        let magnitude: UInt64?
        if body.hasPrefix("0x") || body.hasPrefix("0X") {
            magnitude = UInt64(body.dropFirst(2), radix: 16)
        } else {
            magnitude = UInt64(body, radix: 10)
        }
        guard let magnitude else { return nil }
        if negative {
            return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
        }
        return Int64(exactly: magnitude)
    }

    package func add(_ value: PropertyListValue, _ parser: XMLParser) {
        switch stack.last {
        case nil:
            guard top == nil else { return fail(parser, "more than one top-level value") }
            top = value
        case .array(var elements):
            stack[stack.count - 1] = .array([])  // release the old copy so the append does not copy
            elements.append(value)
            stack[stack.count - 1] = .array(elements)
        case .dictionary(var dictionary, let pendingKey):
            guard let pendingKey else { return fail(parser, "dictionary value without a <key>") }
            stack[stack.count - 1] = .dictionary(PropertyListDictionary(), pendingKey: nil)
            dictionary[pendingKey] = value
            stack[stack.count - 1] = .dictionary(dictionary, pendingKey: nil)
        }
    }
}
