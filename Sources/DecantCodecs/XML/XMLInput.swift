import DecantCore
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// What stands between hostile bytes and FoundationXML's `XMLParser`: a check of the bytes before the parser sees
/// them, a parser configured never to load anything, the element-depth bound every delegate applies, and readable
/// names for the parser's error codes.
///
/// ```swift
/// let parser = try XMLInput.makeParser(data, path: "Notes.xcdatamodel/contents")
/// parser.delegate = builder
/// if !parser.parse() { print(XMLInput.reason(for: parser.parserError)) }   // "mismatched end tag (XML error 76)"
/// ```
///
/// On Linux, `XMLParser` traps on a name, comment or processing instruction that is not valid UTF-8 (it
/// force-unwraps the decoded string), so the bytes are validated first; it substitutes entities, so documents that
/// declare entities are refused outright rather than trusting libxml2's expansion limits.
enum XMLInput {
    /// The deepest element nesting a reader accepts. Apple's model and property-list files stay below 20.
    static let maximumElementDepth = 256

    /// Checks `data` and returns a parser for it that resolves no external entity and loads no DTD.
    static func makeParser(_ data: Data, path: String?) throws -> XMLParser {
        try check(data, path: path)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        return parser
    }

    /// Throws when `data` is not text `XMLParser` can safely be given.
    ///
    /// - `.unsupportedFormat`: UTF-16 or UTF-32 text, an encoding other than UTF-8, US-ASCII or ISO-8859-1, or an
    ///   entity declaration (`<!ENTITY`: no DTD entity is ever expanded, so "billion laughs" cannot start).
    /// - `.malformedInput`: a NUL byte, or a byte that is not valid UTF-8 in a document read as UTF-8.
    ///
    /// The location names the file, the line and the byte offset of the first offending byte.
    static func check(_ data: Data, path: String?) throws {
        try data.withUnsafeBytes { raw in
            try check(raw.bindMemory(to: UInt8.self), path: path)
        }
    }

    private static func check(_ bytes: UnsafeBufferPointer<UInt8>, path: String?) throws {
        func location(_ offset: Int) -> Location {
            Location(path: path, line: line(of: offset, in: bytes), offset: offset)
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw DecantError(
                .unsupportedFormat,
                "the XML is UTF-16 or UTF-32 (it starts with a byte-order mark); Decant reads UTF-8",
                at: location(0))
        }
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var validatesUTF8 = true
        if let (encoding, offset) = declaredEncoding(bytes, from: start) {
            switch encoding.lowercased() {
            case "utf-8", "utf8", "us-ascii", "ascii":
                break
            case "iso-8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
                validatesUTF8 = false  // every byte is a character; libxml2 converts to UTF-8 itself
            default:
                throw DecantError(
                    .unsupportedFormat,
                    "the XML declares encoding \"\(encoding)\"; Decant reads UTF-8 (or US-ASCII, ISO-8859-1) XML",
                    at: location(offset))
            }
        }
        if let offset = firstEntityDeclaration(bytes) {
            throw DecantError(
                .unsupportedFormat, "the XML declares an entity (<!ENTITY …>); DTD entities are never expanded",
                at: location(offset))
        }
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0 {
                let message =
                    index < 4
                    ? "the XML starts with a NUL byte (UTF-16 or UTF-32 text?); Decant reads UTF-8"
                    : "the XML contains a NUL byte"
                throw DecantError(.malformedInput, message, at: location(index))
            }
            if byte < 0x80 || !validatesUTF8 {
                index += 1
                continue
            }
            guard let length = utf8SequenceLength(bytes, at: index) else {
                throw DecantError(
                    .malformedInput, "byte 0x\(String(byte, radix: 16, uppercase: true)) is not valid UTF-8",
                    at: location(index))
            }
            index += length
        }
    }

    /// The length of the well-formed UTF-8 sequence starting at `index`, or `nil` when it is ill-formed
    /// (a stray continuation byte, an overlong form, a surrogate, a value above U+10FFFF, or a truncated sequence).
    private static func utf8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let (length, secondRange): (Int, ClosedRange<UInt8>)
        switch bytes[index] {
        case 0xC2...0xDF: (length, secondRange) = (2, 0x80...0xBF)
        case 0xE0: (length, secondRange) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, secondRange) = (3, 0x80...0xBF)
        case 0xED: (length, secondRange) = (3, 0x80...0x9F)
        case 0xF0: (length, secondRange) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, secondRange) = (4, 0x80...0xBF)
        case 0xF4: (length, secondRange) = (4, 0x80...0x8F)
        default: return nil
        }
        guard index + length <= bytes.count, secondRange.contains(bytes[index + 1]) else { return nil }
        for next in (index + 2)..<(index + length) where !(0x80...0xBF).contains(bytes[next]) {
            return nil
        }
        return length
    }

    /// The `encoding` pseudo-attribute of an XML declaration at `start`, and its byte offset.
    private static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (String, Int)? {
        let opening = Array("<?xml".utf8)
        guard bytes.count - start >= opening.count,
            bytes[start..<(start + opening.count)].elementsEqual(opening)
        else { return nil }
        // The declaration is short; look no further than its `?>` or the first 1 KiB.
        var end = start + opening.count
        let limit = min(bytes.count, start + 1024)
        while end + 1 < limit, !(bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == UInt8(ascii: ">")) { end += 1 }
        let keyword = Array("encoding".utf8)
        var index = start + opening.count
        while index + keyword.count <= end {
            if bytes[index..<(index + keyword.count)].elementsEqual(keyword) { break }
            index += 1
        }
        guard index + keyword.count <= end else { return nil }
        index += keyword.count
        func skipSpaces() {
            while index < end, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        skipSpaces()
        guard index < end, bytes[index] == UInt8(ascii: "=") else { return nil }
        index += 1
        skipSpaces()
        guard index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        let valueStart = index + 1
        var valueEnd = valueStart
        while valueEnd < end, bytes[valueEnd] != quote { valueEnd += 1 }
        // A name with a byte above 0x7F is no encoding name; keep the bytes readable in the message.
        let name = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
        return (name, valueStart)
    }

    /// The offset of the first `<!ENTITY` in the document, if any.
    private static func firstEntityDeclaration(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let marker = Array("<!ENTITY".utf8)
        guard bytes.count >= marker.count else { return nil }
        var index = 0
        while index <= bytes.count - marker.count {
            if bytes[index] == UInt8(ascii: "<"), bytes[index..<(index + marker.count)].elementsEqual(marker) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The 1-based line of byte `offset`.
    private static func line(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var line = 1
        for byte in bytes[..<min(offset, bytes.count)] where byte == 0x0A { line += 1 }
        return line
    }

    /// What a parser error means, in words, with the parser's code: `mismatched end tag (XML error 76)`.
    ///
    /// The codes are libxml2's `xmlParserErrors`, which Apple's `NSXMLParserError` numbers also follow. (On Linux
    /// `XMLParser.ErrorCode(rawValue:)` is off by one from them, so it is not used.)
    static func reason(for error: (any Error)?) -> String {
        guard let error else { return "the document has no root element" }
        let nsError = error as NSError
        guard nsError.domain == XMLParser.errorDomain else { return nsError.localizedDescription }
        let words = errorWords[nsError.code] ?? "not well-formed"
        return "\(words) (XML error \(nsError.code))"
    }

    /// libxml2's parser error codes (`xmlerror.h`), in words.
    private static let errorWords: [Int: String] = [
        1: "internal parser error", 2: "out of memory", 3: "the document does not start with an element",
        4: "empty document", 5: "premature end of document (an element is not closed)",
        6: "invalid hexadecimal character reference", 7: "invalid decimal character reference",
        8: "invalid character reference", 9: "invalid character (not well-formed)",
        10: "character reference at the end of the document", 11: "character reference before the root element",
        12: "character reference after the root element", 13: "character reference in the DTD",
        14: "entity reference at the end of the document", 15: "entity reference before the root element",
        16: "entity reference after the root element", 17: "entity reference in the DTD",
        18: "parameter-entity reference at the end of the document",
        19: "parameter-entity reference before the root element",
        20: "parameter-entity reference after the root element",
        21: "entity reference without a name", 22: "entity reference without a closing ';'",
        23: "parameter-entity reference without a name", 24: "parameter-entity reference without a closing ';'",
        25: "undeclared entity", 26: "undeclared entity", 27: "undeclared entity",
        28: "reference to an unparsed entity",
        29: "reference to an external entity", 30: "parameter-entity reference in content", 31: "unknown encoding",
        32: "unsupported encoding", 33: "string not started (a quote is missing)", 34: "string not closed",
        35: "bad namespace declaration", 36: "entity value not started", 37: "entity value not finished",
        38: "'<' inside an attribute value", 39: "attribute value not started (a quote is missing)",
        40: "attribute value not finished", 41: "attribute without a value", 42: "attribute given twice",
        43: "literal not started", 44: "literal not finished", 45: "comment not closed",
        46: "processing instruction not started", 47: "processing instruction not closed",
        48: "notation declaration not started", 49: "notation declaration not finished",
        50: "attribute-list declaration not started", 51: "attribute-list declaration not finished",
        52: "mixed-content declaration not started", 53: "mixed-content declaration not finished",
        54: "element-content declaration not started", 55: "element-content declaration not finished",
        56: "XML declaration not started", 57: "XML declaration not finished",
        58: "conditional section not started", 59: "conditional section not finished",
        60: "external subset not finished", 61: "DOCTYPE declaration not finished", 62: "']]>' outside a CDATA section",
        63: "CDATA section not closed", 64: "XML declaration not at the start of the document", 65: "space required",
        66: "separator required", 67: "name token required", 68: "name required (a '<' or '&' not followed by a name)",
        69: "#PCDATA required", 70: "URI required", 71: "public identifier required", 72: "'<' required",
        73: "'>' required", 74: "'</' required", 75: "'=' expected after an attribute name", 76: "mismatched end tag",
        77: "start tag not finished", 78: "invalid standalone value", 79: "invalid encoding name",
        80: "'--' inside a comment", 81: "bytes do not match the declared encoding", 82: "external standalone entity",
        83: "invalid conditional section", 84: "entity value required", 85: "elements not well balanced",
        86: "extra content after the root element", 87: "invalid character in an entity",
        88: "parameter-entity reference inside a declaration", 89: "entity reference loop or expansion too large",
        90: "entity boundary crossed", 91: "invalid URI", 92: "URI with a fragment", 94: "no DTD found",
        95: "invalid keyword in a conditional section", 96: "version missing from the XML declaration",
        97: "unsupported XML version", 98: "unknown XML version", 99: "invalid xml:lang value",
        100: "invalid namespace URI", 101: "relative namespace URI", 102: "encoding missing from the text declaration",
        103: "invalid xml:space value", 104: "document not standalone", 105: "entity processing error",
        106: "notation processing error", 107: "name with a colon", 108: "entity redefined",
        109: "unknown XML version", 110: "XML version mismatch", 111: "name too long", 112: "parsing stopped",
        201: "the xml namespace bound wrongly", 202: "undefined namespace prefix", 203: "invalid qualified name",
        204: "attribute given twice (by namespace)", 205: "empty namespace", 206: "name with a colon",
        512: "parsing stopped by Decant",
    ]
}
