import DecantCore
import DecantCodecs
import Foundation

/// A small, strict, non-validating XML tokenizer for the XML store: it never resolves anything.
///
/// Hostile input is refused before it can cost anything:
/// * the bytes must be UTF-8 without control characters (checked first, with the offset of the first bad byte);
/// * a DOCTYPE may name an external DTD (Core Data's does), which is never opened, but an internal subset
///   (`<!DOCTYPE x [ … ]>`: entity, element or attribute-list declarations) is refused, so no entity can be
///   declared: only the five predefined entities and character references are replaced, and any other entity
///   reference is an error. Entity expansion is therefore bounded by the document's own size (billion laughs and
///   external entities cannot start);
/// * elements nest at most `maximumDepth` levels.
///
/// Errors are ``DecantError`` `.malformedInput` with the file, line and byte offset.
struct XMLStoreScanner {
    /// One piece of the document.
    enum Event: Equatable {
        /// A start tag (a self-closing tag is followed by its `.end`).
        case start(name: String, attributes: [String: String])
        /// An end tag.
        case end(name: String)
        /// Character data (entities replaced, CDATA included, line ends normalised to `\n`).
        case text(String)
    }

    let bytes: [UInt8]
    let path: String?
    let maximumDepth: Int
    private(set) var position = 0
    private(set) var line = 1
    /// The line where the last event began.
    private(set) var eventLine = 1
    private var open: [String] = []
    private var pendingEnd: String?
    private var sawRoot = false

    /// A scanner of `bytes`; `path` labels errors. With `validatesText` false the up-front check of the whole
    /// document (UTF-8, control characters) is left out, for a reader that looks at a few values and takes the
    /// large ones as raw byte ranges (``skipPlainText()``): every text it decodes is still read as UTF-8 with
    /// invalid bytes replaced, never trusted.
    init(bytes: [UInt8], path: String?, maximumDepth: Int, validatesText: Bool = true) throws {
        self.bytes = bytes
        self.path = path
        self.maximumDepth = maximumDepth
        if validatesText { try Self.validateText(bytes, path: path) }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Right after a start tag: moves past the element's end tag without reading what it holds, and returns true,
    /// when what lies between holds no comment, CDATA section, processing instruction or element of the same name
    /// (so the first end tag of that name is its own); otherwise returns false, and nothing is read. For a reader that
    /// wants only some elements of a large document.
    mutating func skipElement() -> Bool {
        guard pendingEnd == nil, let name = open.last, position < bytes.count else { return false }
        let start = position
        let found = bytes.withUnsafeBufferPointer { buffer -> (end: Int, lines: Int)? in
            guard let base = buffer.baseAddress else { return nil }
            /// Where `text` (starting with `<`) first starts in `from..<end`: each `<` found by memchr, the rest
            /// compared.
            func find(_ text: String, from: Int, to end: Int) -> Int? {
                let needle = Array(text.utf8)
                var at = from
                while end - at >= needle.count, let match = memchr(base + at, Int32(needle[0]), end - at) {
                    let index = base.distance(to: match.assumingMemoryBound(to: UInt8.self))
                    guard end - index >= needle.count else { return nil }
                    if memcmp(base + index, needle, needle.count) == 0 { return index }
                    at = index + 1
                }
                return nil
            }
            guard let closing = find("</\(name)", from: start, to: buffer.count) else { return nil }
            var end = closing + 2 + name.utf8.count
            while end < buffer.count, [0x20, 0x09, 0x0A, 0x0D].contains(buffer[end]) { end += 1 }
            guard end < buffer.count, buffer[end] == UInt8(ascii: ">") else { return nil }
            end += 1
            for marker in ["<!", "<?", "<\(name)"] where find(marker, from: start, to: closing) != nil { return nil }
            return (end, Self.lineFeeds(base, from: start, to: end))
        }
        guard let found else { return false }
        position = found.end
        line += found.lines
        open.removeLast()
        return true
    }

    /// The line feeds in `base[from..<to]`, found by memchr (they are few in the values skipped whole).
    private static func lineFeeds(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        var lines = 0
        var from = start
        while from < end, let feed = memchr(base + from, 0x0A, end - from) {
            lines += 1
            from = base.distance(to: feed.assumingMemoryBound(to: UInt8.self)) + 1
        }
        return lines
    }

    /// Right after a start tag: when the element holds plain text only (no markup, comment, CDATA or entity
    /// reference before its end tag), moves to the end tag and returns the text's byte range, undecoded (line ends as
    /// written); otherwise nil, and nothing is read. The end tag is then the next event.
    mutating func skipPlainText() -> Range<Int>? {
        guard pendingEnd == nil, !open.isEmpty, position < bytes.count else { return nil }
        let start = position
        let found = bytes.withUnsafeBufferPointer { buffer -> (end: Int, lines: Int)? in
            guard let base = buffer.baseAddress,
                let match = memchr(base + start, Int32(UInt8(ascii: "<")), buffer.count - start)
            else { return nil }
            let end = base.distance(to: match.assumingMemoryBound(to: UInt8.self))
            guard memchr(base + start, Int32(UInt8(ascii: "&")), end - start) == nil else { return nil }
            // Line feeds are few in such values (Apple writes a snapshot's base64 on two lines): found by memchr too.
            return (end, Self.lineFeeds(base, from: start, to: end))
        }
        guard let found, found.end + 1 < bytes.count, bytes[found.end + 1] == UInt8(ascii: "/") else { return nil }
        position = found.end
        line += found.lines
        return start..<found.end
    }

    /// The error for the current position.
    func error(_ message: String, line: Int? = nil) -> DecantError {
        DecantError(.malformedInput, message, at: Location(path: path, line: line ?? self.line, offset: position))
    }

    /// Checks that `bytes` is UTF-8 and holds no character XML 1.0 forbids (control characters other than tab and
    /// line ends). FoundationXML would abort the process on invalid UTF-8; this scanner never sees it.
    static func validateText(_ bytes: [UInt8], path: String?) throws {
        var index = 0
        var line = 1
        let count = bytes.count
        func fail(_ message: String) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, line: line, offset: index))
        }
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == 0x0A {
                    line += 1
                } else if byte < 0x20 && byte != 0x09 && byte != 0x0D {
                    throw fail("control character 0x\(String(byte, radix: 16)) is not allowed in XML")
                }
                index += 1
                continue
            }
            let length: Int
            let minimum: UInt32
            switch byte {
            case 0xC2...0xDF: (length, minimum) = (2, 0x80)
            case 0xE0...0xEF: (length, minimum) = (3, 0x800)
            case 0xF0...0xF4: (length, minimum) = (4, 0x10000)
            default: throw fail("invalid UTF-8 byte 0x\(String(byte, radix: 16))")
            }
            guard index + length <= count else { throw fail("truncated UTF-8 sequence") }
            var scalar = UInt32(byte) & (0xFF >> (length + 1))
            for next in bytes[(index + 1)..<(index + length)] {
                guard next & 0xC0 == 0x80 else { throw fail("invalid UTF-8 sequence") }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                throw fail("invalid UTF-8 sequence")
            }
            index += length
        }
    }

    /// The next event, or nil after the root element closed and only comments or white space followed.
    mutating func next() throws -> Event? {
        if let name = pendingEnd {
            pendingEnd = nil
            return try close(name)
        }
        while position < bytes.count {
            eventLine = line
            if bytes[position] != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" }) else {
                        throw error("text outside the root element", line: eventLine)
                    }
                    continue
                }
                return .text(text)
            }
            if starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw error("CDATA outside the root element") }
                advance(9)
                let start = position
                guard let end = find("]]>") else { throw error("unterminated CDATA section", line: eventLine) }
                let raw = bytes[start..<end]
                advanceCounting(to: end + 3)
                return .text(String(decoding: Self.normalizeLineEnds(Array(raw)), as: UTF8.self))
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if starts(with: "<!DOCTYPE") {
                guard open.isEmpty, !sawRoot else { throw error("DOCTYPE inside the document") }
                try readDoctype()
            } else if starts(with: "<!") {
                throw error("markup declarations are not accepted outside a DOCTYPE")
            } else if starts(with: "</") {
                advance(2)
                let name = try readName()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                    throw error("expected > after </\(name)")
                }
                advance(1)
                return try close(name)
            } else {
                return try readStartTag()
            }
        }
        guard open.isEmpty else { throw error("the document ends inside <\(open.last ?? "")>") }
        guard sawRoot else { throw error("the document has no root element") }
        return nil
    }

    private mutating func close(_ name: String) throws -> Event {
        guard let top = open.popLast() else { throw error("</\(name)> closes nothing") }
        guard top == name else { throw error("</\(name)> closes <\(top)>") }
        return .end(name: name)
    }

    private mutating func readStartTag() throws -> Event {
        guard !(open.isEmpty && sawRoot) else { throw error("a second root element") }
        advance(1)
        let name = try readName()
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = skipSpace()
            guard position < bytes.count else { throw error("the document ends inside <\(name)>") }
            if bytes[position] == UInt8(ascii: ">") {
                advance(1)
                break
            }
            if starts(with: "/>") {
                advance(2)
                pendingEnd = name
                break
            }
            guard hadSpace else { throw error("expected white space before an attribute of <\(name)>") }
            let attribute = try readName()
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw error("attribute \(attribute) of <\(name)> has no value")
            }
            advance(1)
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
            else { throw error("attribute \(attribute) of <\(name)> is not quoted") }
            let quote = bytes[position]
            advance(1)
            guard let end = bytes[position...].firstIndex(of: quote) else {
                throw error("unterminated value of attribute \(attribute)")
            }
            // Literal white space becomes a space before references are replaced (XML 1.0, 3.3.3).
            let raw = Self.normalizeLineEnds(Array(bytes[position..<end])).map { $0 == 0x09 || $0 == 0x0A ? 0x20 : $0 }
            guard !raw.contains(UInt8(ascii: "<")) else { throw error("< inside the value of attribute \(attribute)") }
            let value = try decodeEntities(raw)
            advanceCounting(to: end + 1)
            guard attributes.updateValue(value, forKey: attribute) == nil else {
                throw error("attribute \(attribute) appears twice in <\(name)>")
            }
        }
        guard open.count < maximumDepth else { throw error("elements nest deeper than \(maximumDepth) levels") }
        open.append(name)
        sawRoot = true
        return .start(name: name, attributes: attributes)
    }

    /// `<!DOCTYPE name SYSTEM "…">` or `PUBLIC "…" "…"`: the identifiers are read and ignored (never fetched); an
    /// internal subset is refused.
    private mutating func readDoctype() throws {
        advance(9)
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: ">") {
                advance(1)
                return
            }
            if byte == UInt8(ascii: "[") {
                throw error(
                    "DOCTYPE with an internal subset (entity or element declarations) is not accepted in an XML store")
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                advance(1)
                guard let end = bytes[position...].firstIndex(of: byte) else { throw error("unterminated DOCTYPE") }
                advanceCounting(to: end + 1)
                continue
            }
            advanceCounting(to: position + 1)
        }
        throw error("unterminated DOCTYPE", line: eventLine)
    }

    private mutating func readText() throws -> String {
        let start = position
        let end = bytes[position...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
        let raw = Self.normalizeLineEnds(Array(bytes[start..<end]))
        if let index = raw.firstIndex(of: UInt8(ascii: ">")), index > 1, raw[index - 1] == UInt8(ascii: "]"),
            raw[index - 2] == UInt8(ascii: "]")
        {
            throw error("]]> in text")
        }
        let text = try decodeEntities(raw)
        advanceCounting(to: end)
        return text
    }

    /// Replaces the predefined entities and character references; any other entity reference is an error, since
    /// the store never declares entities and Decant never reads a DTD.
    private func decodeEntities(_ raw: [UInt8]) throws -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "&") else {
                output.append(byte)
                index += 1
                continue
            }
            guard let semicolon = raw[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw error("& without an entity reference (write &amp;)")
            }
            let name = String(decoding: raw[(index + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "amp": output.append(UInt8(ascii: "&"))
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                var number: UInt32?
                if name.hasPrefix("#x") {
                    number = UInt32(name.dropFirst(2), radix: 16)
                } else if name.hasPrefix("#") {
                    number = UInt32(name.dropFirst(), radix: 10)
                } else {
                    throw error("undefined entity &\(name); (an XML store declares no entities; none are expanded)")
                }
                guard let number, let scalar = Unicode.Scalar(number), number != 0 else {
                    throw error("&\(name); is not a character")
                }
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
            index = semicolon + 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Line ends as XML 1.0 (2.11) normalises them: CR LF and a lone CR become LF.
    private static func normalizeLineEnds(_ raw: [UInt8]) -> [UInt8] {
        guard raw.contains(0x0D) else { return raw }
        var result: [UInt8] = []
        result.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            if raw[index] == 0x0D {
                result.append(0x0A)
                if index + 1 < raw.count && raw[index + 1] == 0x0A { index += 1 }
            } else {
                result.append(raw[index])
            }
            index += 1
        }
        return result
    }

    private mutating func readName() throws -> String {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            let isNameByte =
                byte >= 0x80 || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
            guard isNameByte else { break }
            position += 1
        }
        guard position > start else { throw error("expected a name") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = position
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
        return position > start
    }

    private mutating func skip(past terminator: String, what: String) throws {
        guard let end = find(terminator) else { throw error("unterminated \(what)", line: eventLine) }
        advanceCounting(to: end + terminator.utf8.count)
    }

    private func find(_ needle: String) -> Int? {
        let pattern = Array(needle.utf8)
        var index = position
        while index + pattern.count <= bytes.count {
            if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                return index
            }
            index += 1
        }
        return nil
    }

    private func starts(with prefix: String) -> Bool {
        bytes[position...].starts(with: prefix.utf8)
    }

    /// Advances over bytes known to hold no line feed.
    private mutating func advance(_ count: Int) { position += count }

    private mutating func advanceCounting(to end: Int) {
        while position < end {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
    }
}
