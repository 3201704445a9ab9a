import DecantCore
import DecantCodecs
import Foundation

/// Reads JSON text one value at a time from a file, in fixed-size chunks, or from bytes in memory; knows the line
/// and column it is at, checks the text is UTF-8, and throws `.malformedInput` naming the place for anything that
/// is not JSON.
///
/// Callers walk the outer structure themselves (`peek`, `skipWhitespace`, `expect`) and parse the values inside
/// it whole (`parseValue`), so memory is bounded by the largest single value, not by the input. Nesting is limited
/// to ``maximumDepth`` levels, a number to ``maximumNumberLength`` characters.
final class JSONScanner {
    /// The input as the user named it, for messages.
    let path: String
    static let maximumDepth = 512
    static let maximumNumberLength = 1024
    static let chunkSize = 1 << 16

    private var handle: FileHandle?
    private var buffer: [UInt8] = []
    private var index = 0
    private var exhausted = false
    /// The 1-based line of the next byte.
    private(set) var line = 1
    /// The 1-based column (counted in characters) of the next byte.
    private(set) var column = 1
    private var scratch: [UInt8] = []

    /// Opens `url` for reading.
    /// - Throws: `.fileNotFound` or `.ioError`.
    init(url: URL) throws {
        path = url.displayPath
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw DecantError(.fileNotFound, "no such file", at: Location(path: url.displayPath))
        }
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw DecantError(
                .ioError, "cannot open the file for reading", at: Location(path: url.displayPath),
                underlyingError: error)
        }
        try skipByteOrderMark()
    }

    /// Reads `bytes` (for tests and in-memory input).
    init(bytes: [UInt8], path: String) throws {
        self.path = path
        buffer = bytes
        exhausted = true
        try skipByteOrderMark()
    }

    deinit {
        try? handle?.close()
    }

    /// Releases the file.
    func close() {
        try? handle?.close()
        handle = nil
        exhausted = true
        buffer = []
        index = 0
    }

    // MARK: Bytes

    /// The next byte, without consuming it; nil at the end of the input.
    @inline(__always)
    func peek() throws -> UInt8? {
        if index < buffer.count { return buffer[index] }
        return try refill()
    }

    private func refill() throws -> UInt8? {
        guard !exhausted, let handle else {
            exhausted = true
            return nil
        }
        let data: Data?
        do {
            data = try handle.read(upToCount: Self.chunkSize)
        } catch {
            throw DecantError(
                .ioError, "cannot read the file", at: Location(path: path, line: line, column: column),
                underlyingError: error)
        }
        guard let data, !data.isEmpty else {
            exhausted = true
            buffer = []
            index = 0
            return nil
        }
        buffer = Array(data)
        index = 0
        return buffer[0]
    }

    /// Consumes the byte `peek()` returned.
    @inline(__always)
    func advance() {
        let byte = buffer[index]
        index += 1
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    /// The longest line ``withBufferedLine(_:)`` gathers into the buffer.
    static let maximumBufferedLine = 1 << 20

    /// Calls `body` with the bytes from the cursor to the end of its line (the line feed, or the end of the input,
    /// not included), gathered into the buffer; when `body` returns true it has read them all, and the cursor moves
    /// to the line feed. Returns false, without moving, when `body` does or when the line is longer than
    /// ``maximumBufferedLine``: the caller then reads the line value by value.
    func withBufferedLine(_ body: (UnsafeBufferPointer<UInt8>) throws -> Bool) throws -> Bool {
        var searched = index
        var end: Int
        while true {
            end = buffer.withUnsafeBufferPointer { bytes in
                guard searched < bytes.count, let base = bytes.baseAddress,
                    let found = memchr(base + searched, 0x0A, bytes.count - searched)
                else { return -1 }
                return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            }
            if end >= 0 { break }
            if exhausted || handle == nil {
                end = buffer.count
                break
            }
            guard buffer.count - index < Self.maximumBufferedLine else { return false }
            // Keep the line's start and read on.
            let data: Data?
            do {
                data = try handle?.read(upToCount: Self.chunkSize)
            } catch {
                throw DecantError(
                    .ioError, "cannot read the file", at: Location(path: path, line: line, column: column),
                    underlyingError: error)
            }
            buffer.removeSubrange(0..<index)
            index = 0
            searched = buffer.count
            guard let data, !data.isEmpty else {
                exhausted = true
                end = buffer.count
                break
            }
            buffer.append(contentsOf: data)
        }
        let start = index
        let done = try buffer.withUnsafeBufferPointer { bytes in
            try body(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
        guard done else { return false }
        // Before a line feed the column does not matter (the line feed starts the next line at column 1); at the
        // end of the input it is one per character: every byte that does not continue a UTF-8 sequence.
        if end == buffer.count {
            var characters = 0
            buffer.withUnsafeBufferPointer { bytes in
                for position in start..<end where bytes[position] & 0xC0 != 0x80 { characters += 1 }
            }
            column += characters
        }
        index = end
        return true
    }

    private func skipByteOrderMark() throws {
        guard try peek() == 0xEF else { return }
        advance()
        guard try peek() == 0xBB else { throw failure("invalid UTF-8 at the start of the file") }
        advance()
        guard try peek() == 0xBF else { throw failure("invalid UTF-8 at the start of the file") }
        advance()
        column = 1
    }

    /// Skips spaces, tabs, carriage returns and line feeds; returns whether a line feed was among them.
    @discardableResult
    func skipWhitespace() throws -> Bool {
        var crossedLine = false
        while let byte = try peek() {
            switch byte {
            case 0x20, 0x09, 0x0D: advance()
            case 0x0A:
                crossedLine = true
                advance()
            default: return crossedLine
            }
        }
        return crossedLine
    }

    /// Skips spaces, tabs and carriage returns on the current line.
    func skipBlanksOnLine() throws {
        while let byte = try peek(), byte == 0x20 || byte == 0x09 || byte == 0x0D { advance() }
    }

    /// Consumes `byte`, or throws naming what was expected.
    func expect(_ byte: UInt8, _ expected: String) throws {
        guard try peek() == byte else { throw try unexpected(expected: expected) }
        advance()
    }

    /// Whether only white space remains.
    func isAtEnd() throws -> Bool {
        try skipWhitespace()
        return try peek() == nil
    }

    // MARK: Errors

    /// A `.malformedInput` error at the current place (or `line`/`column`).
    func failure(_ message: String, line: Int? = nil, column: Int? = nil) -> DecantError {
        DecantError(
            .malformedInput, message, at: Location(path: path, line: line ?? self.line, column: column ?? self.column))
    }

    /// An error for whatever is at the current place, which is not `expected`.
    func unexpected(expected: String) throws -> DecantError {
        guard let byte = try peek() else { return failure("unexpected end of file, expected \(expected)") }
        return failure("\(try describeCurrent(byte)), expected \(expected)")
    }

    /// Describes the character starting with `byte` at the current place (without consuming it).
    private func describeCurrent(_ byte: UInt8) throws -> String {
        switch byte {
        case 0..<0x20: return "unexpected control character U+\(String(format: "%04X", byte))"
        case 0x20..<0x80: return "unexpected character '\(Character(Unicode.Scalar(byte)))'"
        default:
            let length = Self.sequenceLength(lead: byte)
            if length > 1, index + length <= buffer.count,
                let text = String(validating: buffer[index..<index + length], as: UTF8.self)
            {
                return "unexpected character '\(text)'"
            }
            return "invalid UTF-8 (byte 0x\(String(format: "%02X", byte)))"
        }
    }

    private static func sequenceLength(lead: UInt8) -> Int {
        switch lead {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 0
        }
    }

    // MARK: Values

    /// Parses one whole value (after white space).
    func parseValue() throws -> JSONNode {
        try parseValue(depth: 0)
    }

    private func parseValue(depth: Int) throws -> JSONNode {
        try skipWhitespace()
        let startLine = line
        let startColumn = column
        guard let byte = try peek() else { throw failure("unexpected end of file, expected a value") }
        let value: JSONValue
        switch byte {
        case UInt8(ascii: "{"): value = .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): value = .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): value = .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try parseNumber())
        case UInt8(ascii: "t"):
            try literal("true")
            value = .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            value = .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            value = .null
        default:
            throw try unexpected(expected: "a value")
        }
        return JSONNode(value: value, line: startLine, column: startColumn)
    }

    private func literal(_ word: StaticString) throws {
        let startLine = line
        let startColumn = column
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in bytes {
            guard let byte = try peek() else { throw failure("unexpected end of file, expected \(word)") }
            guard byte == expected else {
                throw failure("expected \(word) (or another value)", line: startLine, column: startColumn)
            }
            advance()
        }
    }

    private func checkDepth(_ depth: Int) throws {
        guard depth <= Self.maximumDepth else {
            throw failure("values nested deeper than \(Self.maximumDepth) levels")
        }
    }

    private func parseObject(depth: Int) throws -> [JSONMember] {
        try checkDepth(depth)
        advance()  // {
        var members: [JSONMember] = []
        try skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            advance()
            return members
        }
        while true {
            try skipWhitespace()
            let (key, keyLine, keyColumn) = try parseKey()
            let node = try parseValue(depth: depth)
            members.append(JSONMember(key: key, line: keyLine, column: keyColumn, node: node))
            try skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "}"):
                advance()
                return members
            default: throw try unexpected(expected: "',' or '}' after a value in an object")
            }
        }
    }

    /// Parses `"key" :` (after white space); returns the key and where it starts.
    func parseKey() throws -> (String, Int, Int) {
        let keyLine = line
        let keyColumn = column
        guard try peek() == UInt8(ascii: "\"") else { throw try unexpected(expected: "a key in double quotes") }
        let key = try parseString()
        try skipWhitespace()
        try expect(UInt8(ascii: ":"), "':' after a key")
        return (key, keyLine, keyColumn)
    }

    private func parseArray(depth: Int) throws -> [JSONNode] {
        try checkDepth(depth)
        advance()  // [
        var elements: [JSONNode] = []
        try skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            advance()
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            try skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "]"):
                advance()
                return elements
            default: throw try unexpected(expected: "',' or ']' after a value in an array")
            }
        }
    }

    /// Parses a string (at its opening quote), checking that it is UTF-8 and that escapes name Unicode scalars.
    func parseString() throws -> String {
        let startLine = line
        let startColumn = column
        advance()  // "
        scratch.removeAll(keepingCapacity: true)
        while true {
            guard let byte = try peek() else {
                throw failure(
                    "unexpected end of file in the string that starts at line \(startLine), column \(startColumn)")
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                advance()
                try parseEscape()
            case 0..<0x20:
                throw failure(
                    "control character U+\(String(format: "%04X", byte)) in a string (write it as an escape, like \\n)")
            case 0x20..<0x80:
                appendPlainRun()
            default:
                try appendUTF8Sequence(lead: byte)
            }
        }
    }

    /// Appends the run of printable ASCII at the cursor (no quote, no backslash) that the buffer holds, at once: on
    /// one line, one column per byte.
    private func appendPlainRun() {
        let start = index
        let end = buffer.withUnsafeBufferPointer { bytes in
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { break }
                end += 1
            }
            return end
        }
        scratch.append(contentsOf: buffer[start..<end])
        column += end - start
        index = end
    }

    /// Appends one multi-byte UTF-8 sequence (Unicode table 3-7), or throws naming its first byte.
    private func appendUTF8Sequence(lead: UInt8) throws {
        let startColumn = column
        let second: ClosedRange<UInt8>
        let continuations: Int
        switch lead {
        case 0xC2...0xDF: (second, continuations) = (0x80...0xBF, 1)
        case 0xE0: (second, continuations) = (0xA0...0xBF, 2)
        case 0xE1...0xEC, 0xEE...0xEF: (second, continuations) = (0x80...0xBF, 2)
        case 0xED: (second, continuations) = (0x80...0x9F, 2)
        case 0xF0: (second, continuations) = (0x90...0xBF, 3)
        case 0xF1...0xF3: (second, continuations) = (0x80...0xBF, 3)
        case 0xF4: (second, continuations) = (0x80...0x8F, 3)
        default: throw failure("invalid UTF-8 (byte 0x\(String(format: "%02X", lead)))")
        }
        scratch.append(lead)
        advance()
        for position in 0..<continuations {
            let range: ClosedRange<UInt8> = position == 0 ? second : 0x80...0xBF
            guard let byte = try peek(), range.contains(byte) else {
                throw failure(
                    "invalid UTF-8 (a sequence starting with byte 0x\(String(format: "%02X", lead)))",
                    column: startColumn)
            }
            scratch.append(byte)
            advance()
        }
    }

    private func parseEscape() throws {
        guard let byte = try peek() else { throw failure("unexpected end of file in an escape") }
        let simple = JSONEscape.simple(byte)
        guard simple != nil || byte == UInt8(ascii: "u") else {
            throw try unexpected(expected: "an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)")
        }
        advance()
        if let simple {
            scratch.append(simple)
            return
        }
        let unit = try hexUnit()
        var scalarValue = UInt32(unit)
        if (0xD800...0xDBFF).contains(unit) {
            guard try peek() == UInt8(ascii: "\\") else {
                throw failure("unpaired surrogate \\u\(hex(unit)) in a string")
            }
            advance()
            guard try peek() == UInt8(ascii: "u") else {
                throw failure("unpaired surrogate \\u\(hex(unit)) in a string")
            }
            advance()
            let low = try hexUnit()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw failure("unpaired surrogate \\u\(hex(unit)) in a string")
            }
            scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(unit) {
            throw failure("unpaired surrogate \\u\(hex(unit)) in a string")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw failure("\\u\(hex(unit)) is not a Unicode scalar")
        }
        scratch.append(contentsOf: String(scalar).utf8)
    }

    private func hex(_ unit: UInt16) -> String { String(format: "%04X", unit) }

    private func hexUnit() throws -> UInt16 {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = try peek() else { throw failure("unexpected end of file in a \\u escape") }
            guard let digit = JSONEscape.hexDigit(byte) else {
                throw try unexpected(expected: "four hexadecimal digits after \\u")
            }
            unit = unit << 4 | digit
            advance()
        }
        return unit
    }

    private func parseNumber() throws -> String {
        if let text = plainNumber() { return text }
        scratch.removeAll(keepingCapacity: true)
        func take() throws {
            guard scratch.count < Self.maximumNumberLength else {
                throw failure("a number longer than \(Self.maximumNumberLength) characters")
            }
            if let byte = try peek() { scratch.append(byte) }
            advance()
        }
        func digits() throws -> Int {
            var count = 0
            while let byte = try peek(), JSONNumberSyntax.isDigit(byte) {
                try take()
                count += 1
            }
            return count
        }
        if try peek() == UInt8(ascii: "-") { try take() }
        guard let first = try peek(), JSONNumberSyntax.isDigit(first) else {
            throw try unexpected(expected: "a digit")
        }
        if first == UInt8(ascii: "0") {
            try take()
            if let next = try peek(), JSONNumberSyntax.isDigit(next) {
                throw failure("a number with a leading zero")
            }
        } else {
            _ = try digits()
        }
        if try peek() == UInt8(ascii: ".") {
            try take()
            guard try digits() > 0 else { throw try unexpected(expected: "a digit after the decimal point") }
        }
        if let byte = try peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            try take()
            if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { try take() }
            guard try digits() > 0 else { throw try unexpected(expected: "a digit in the exponent") }
        }
        return String(decoding: scratch, as: UTF8.self)
    }

    /// A valid number that ends inside the buffer (the byte after it is there to see), read at once; nil for
    /// anything else, which the byte-by-byte path then reads (and reports).
    private func plainNumber() -> String? {
        let start = index
        let found = buffer.withUnsafeBufferPointer { JSONNumberSyntax.scan($0, from: start, maximumLength: Self.maximumNumberLength)?.end }
        guard let end = found else { return nil }
        let text = String(decoding: buffer[start..<end], as: UTF8.self)
        column += end - start
        index = end
        return text
    }
}
