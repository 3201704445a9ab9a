import DecantCore
import DecantCodecs
import Foundation

/// Splits a delimited-text file into records and fields (RFC 4180), one record at a time, reading the file in
/// fixed-size chunks: memory holds one chunk and the current record, never the whole file.
///
/// Fields may be quoted (`"a, b"`), with a doubled quote for a quote (`"say ""hi"""`) and line breaks inside; records
/// end at CRLF, LF or a lone CR; a UTF-8 byte-order mark at the start is skipped; blank lines are skipped. A quote
/// inside an unquoted field, text after a closing quote, a quoted field still open at the end of the file, invalid
/// UTF-8 and a record longer than ``maximumRecordBytes`` are malformed input, located at the line and column where
/// the field starts.
final class CSVTokenizer {
    /// One field of the current record: its decoded bytes in ``storage`` and where it starts in the file.
    struct Field {
        var start: Int
        var end: Int
        /// Whether the field was quoted (a quoted empty field is the empty string, an unquoted one nil).
        var quoted: Bool
        var line: Int
        var column: Int
    }

    /// The largest record accepted (a runaway quoted field is reported instead of filling memory).
    static let maximumRecordBytes = 512 << 20
    private static let chunkSize = 1 << 16

    /// The file as the user named it, for messages.
    let path: String
    /// The entity the file holds, for messages.
    let entity: String?
    /// The decoded bytes of the current record's fields.
    private(set) var storage: [UInt8] = []
    /// The current record's fields.
    private(set) var fields: [Field] = []
    /// The line the current record starts on.
    private(set) var recordLine = 0

    private let handle: FileHandle
    private let delimiter: UInt8
    private var chunk: [UInt8] = []
    private var position = 0
    private var exhausted = false
    private var startedFile = false
    /// Where the next byte is: line and character column.
    private var line = 1
    private var column = 1
    private var afterCR = false
    private var closed = false

    /// Opens `url` for tokenizing.
    /// - Throws: `.fileNotFound` or `.ioError` when it cannot be opened.
    init(url: URL, path: String, entity: String?, delimiter: UInt8) throws {
        self.path = path
        self.entity = entity
        self.delimiter = delimiter
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            throw DecantError(
                missing ? .fileNotFound : .ioError, missing ? "no such file" : "cannot open the file for reading",
                at: Location(path: path, entity: entity), underlyingError: error)
        }
    }

    deinit { close() }

    /// Closes the file; further reads find its end.
    func close() {
        guard !closed else { return }
        closed = true
        exhausted = true
        try? handle.close()
    }

    /// The text of field `index` of the current record (bytes validated as UTF-8 when the record was read).
    func text(_ index: Int) -> String {
        let field = fields[index]
        return storage.withUnsafeBufferPointer { all in
            String(decoding: UnsafeBufferPointer(rebasing: all[field.start..<field.end]), as: UTF8.self)
        }
    }

    /// The bytes of field `index` of the current record.
    func withBytes<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let field = fields[index]
        return try storage.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[field.start..<field.end]))
        }
    }

    /// Where field `index` of the current record starts.
    func location(ofField index: Int) -> Location {
        Location(path: path, line: fields[index].line, column: fields[index].column, entity: entity)
    }

    private func failure(_ message: String, line: Int, column: Int? = nil) -> DecantError {
        DecantError(.malformedInput, message, at: Location(path: path, line: line, column: column, entity: entity))
    }

    /// The next byte, advancing the line and column; nil at the end of the file.
    @inline(__always)
    private func nextByte() throws -> UInt8? {
        if position == chunk.count {
            guard try refill() else { return nil }
        }
        let byte = chunk[position]
        position += 1
        Self.count(byte, line: &line, column: &column, afterCR: &afterCR)
        return byte
    }

    /// Moves the line and column past `byte`: CR, LF and CRLF each end one line; UTF-8 continuation bytes are no
    /// column of their own.
    @inline(__always)
    private static func count(_ byte: UInt8, line: inout Int, column: inout Int, afterCR: inout Bool) {
        if byte == 0x0A {
            if !afterCR {
                line += 1
                column = 1
            }
            afterCR = false
        } else if byte == 0x0D {
            line += 1
            column = 1
            afterCR = true
        } else {
            afterCR = false
            if byte & 0xC0 != 0x80 { column += 1 }
        }
    }

    /// The next byte without consuming it.
    private func peekByte() throws -> UInt8? {
        if position == chunk.count {
            guard try refill() else { return nil }
        }
        return chunk[position]
    }

    private func refill() throws -> Bool {
        guard !exhausted else { return false }
        let data: Data?
        do {
            data = try handle.read(upToCount: Self.chunkSize)
        } catch {
            throw DecantError(
                .ioError, "cannot read the file", at: Location(path: path, line: line, entity: entity),
                underlyingError: error)
        }
        guard let data, !data.isEmpty else {
            exhausted = true
            return false
        }
        chunk.removeAll(keepingCapacity: true)
        chunk.append(contentsOf: data)
        position = 0
        if !startedFile {
            startedFile = true
            // A UTF-8 byte-order mark (split across chunks only in a file shorter than it).
            if chunk.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }
        return true
    }

    private enum State {
        case fieldStart, unquoted, quoted, quoteClosed
    }

    /// Reads the next record into ``fields`` and ``storage``; returns false at the end of the file.
    /// - Throws: `.malformedInput` for a broken quote, invalid UTF-8 or an oversized record; `.ioError`.
    func nextRecord() throws -> Bool {
        // The scan works on local copies of the state (no exclusivity checks or reference counting per byte) and
        // stores them back when it leaves, however it leaves.
        var storage: [UInt8] = []
        var fields: [Field] = []
        swap(&storage, &self.storage)
        swap(&fields, &self.fields)
        defer {
            swap(&storage, &self.storage)
            swap(&fields, &self.fields)
        }
        storage.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        // Skip blank lines (and the LF of a CRLF that ended the previous record, which nextByte already counted).
        while let byte = try peekByte(), byte == 0x0A || byte == 0x0D {
            _ = try nextByte()
        }
        guard try peekByte() != nil else { return false }
        var line = self.line
        var column = self.column
        var afterCR = self.afterCR
        var position = self.position
        defer {
            self.line = line
            self.column = column
            self.afterCR = afterCR
            self.position = position
        }
        recordLine = line
        let delimiter = self.delimiter
        var state = State.fieldStart
        var fieldStart = 0
        var fieldLine = line
        var fieldColumn = column
        var quoted = false
        while true {
            if position == chunk.count {
                self.position = position
                let more = try refill()
                position = self.position
                if !more {
                    if state == .quoted {
                        throw failure(
                            "the quoted field that starts here has no closing quote before the end of the file "
                                + "(a truncated file, or a quote not doubled)", line: fieldLine, column: fieldColumn)
                    }
                    if state == .fieldStart {
                        fields.append(
                            Field(start: storage.count, end: storage.count, quoted: false, line: line, column: column))
                    } else {
                        fields.append(
                            Field(
                                start: fieldStart, end: storage.count, quoted: quoted, line: fieldLine,
                                column: fieldColumn))
                    }
                    return try finishRecord(storage: storage, fields: fields)
                }
            }
            let chunk = self.chunk
            let end = chunk.count
            while position < end {
                // Inside a field, the bytes up to the next one that matters are copied at once.
                if state == .unquoted || state == .quoted {
                    let runStart = position
                    var characters = 0
                    if state == .unquoted {
                        while position < end {
                            let byte = chunk[position]
                            if byte == delimiter || byte == 0x0A || byte == 0x0D || byte == 0x22 { break }
                            if byte & 0xC0 != 0x80 { characters += 1 }
                            position += 1
                        }
                    } else {
                        while position < end {
                            let byte = chunk[position]
                            if byte == 0x22 || byte == 0x0A || byte == 0x0D { break }
                            if byte & 0xC0 != 0x80 { characters += 1 }
                            position += 1
                        }
                    }
                    if position > runStart {
                        storage.append(contentsOf: chunk[runStart..<position])
                        column += characters
                        afterCR = false
                        if storage.count > Self.maximumRecordBytes {
                            if state == .quoted {
                                throw failure(
                                    "the quoted field that starts here runs past \(Self.maximumRecordBytes >> 20) MiB "
                                        + "(a quote not closed or not doubled?)", line: fieldLine, column: fieldColumn)
                            }
                            throw failure(
                                "a record longer than \(Self.maximumRecordBytes >> 20) MiB", line: recordLine,
                                column: nil)
                        }
                        if position == end { continue }
                    }
                }
                let byte = chunk[position]
                let atLine = line
                let atColumn = column
                position += 1
                Self.count(byte, line: &line, column: &column, afterCR: &afterCR)
                switch state {
                case .fieldStart:
                    fieldStart = storage.count
                    fieldLine = atLine
                    fieldColumn = atColumn
                    quoted = false
                    if byte == 0x22 {
                        quoted = true
                        state = .quoted
                    } else if byte == delimiter {
                        fields.append(
                            Field(start: fieldStart, end: fieldStart, quoted: false, line: atLine, column: atColumn))
                    } else if byte == 0x0A || byte == 0x0D {
                        fields.append(
                            Field(start: fieldStart, end: fieldStart, quoted: false, line: atLine, column: atColumn))
                        return try finishRecord(storage: storage, fields: fields)
                    } else {
                        storage.append(byte)
                        state = .unquoted
                    }
                case .unquoted:
                    if byte == delimiter {
                        fields.append(
                            Field(
                                start: fieldStart, end: storage.count, quoted: false, line: fieldLine,
                                column: fieldColumn))
                        state = .fieldStart
                    } else if byte == 0x0A || byte == 0x0D {
                        fields.append(
                            Field(
                                start: fieldStart, end: storage.count, quoted: false, line: fieldLine,
                                column: fieldColumn))
                        return try finishRecord(storage: storage, fields: fields)
                    } else if byte == 0x22 {
                        throw failure(
                            "a quote inside an unquoted field: quote the whole field and double the quotes inside it",
                            line: atLine, column: atColumn)
                    } else {
                        storage.append(byte)
                    }
                case .quoted:
                    if byte == 0x22 {
                        state = .quoteClosed
                    } else {
                        storage.append(byte)
                        if storage.count > Self.maximumRecordBytes {
                            throw failure(
                                "the quoted field that starts here runs past \(Self.maximumRecordBytes >> 20) MiB "
                                    + "(a quote not closed or not doubled?)", line: fieldLine, column: fieldColumn)
                        }
                    }
                case .quoteClosed:
                    if byte == 0x22 {
                        storage.append(byte)
                        state = .quoted
                    } else if byte == delimiter {
                        fields.append(
                            Field(
                                start: fieldStart, end: storage.count, quoted: true, line: fieldLine,
                                column: fieldColumn))
                        state = .fieldStart
                    } else if byte == 0x0A || byte == 0x0D {
                        fields.append(
                            Field(
                                start: fieldStart, end: storage.count, quoted: true, line: fieldLine,
                                column: fieldColumn))
                        return try finishRecord(storage: storage, fields: fields)
                    } else {
                        throw failure(
                            "text after the closing quote of a field: expected the delimiter or the end of the line "
                                + "(a quote inside a quoted field is written twice)", line: atLine, column: atColumn)
                    }
                }
                if state == .unquoted && storage.count > Self.maximumRecordBytes {
                    throw failure(
                        "a record longer than \(Self.maximumRecordBytes >> 20) MiB", line: recordLine, column: nil)
                }
            }
        }
    }

    private func finishRecord(storage: [UInt8], fields: [Field]) throws -> Bool {
        if let bad = UTF8Validation.firstInvalidByte(in: storage) {
            let index = fields.firstIndex { $0.start <= bad && bad < max($0.end, $0.start + 1) } ?? 0
            let field =
                fields.isEmpty ? Field(start: 0, end: 0, quoted: false, line: recordLine, column: 1) : fields[index]
            throw failure(
                "invalid UTF-8 in field \(index + 1) (byte 0x\(String(storage[bad], radix: 16, uppercase: true))): "
                    + "delimited text must be UTF-8", line: field.line, column: field.column)
        }
        return true
    }
}

/// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Validation {
    /// The offset of the first byte that starts an invalid sequence, or nil when all of `bytes` is valid UTF-8.
    static func firstInvalidByte(in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { firstInvalidByte(in: $0) }
    }

    /// The offset of the first byte that starts an invalid sequence, or nil when all of `buffer` is valid UTF-8.
    static func firstInvalidByte(in buffer: UnsafeRawBufferPointer) -> Int? {
        do {
            var index = 0
            let count = buffer.count
            while index < count {
                // ASCII eight bytes at a time.
                if index + 8 <= count,
                    buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                    continue
                }
                let lead = buffer[index]
                if lead < 0x80 {
                    index += 1
                    continue
                }
                let length: Int
                var lower: UInt8 = 0x80
                var upper: UInt8 = 0xBF
                switch lead {
                case 0xC2...0xDF: length = 2
                case 0xE0:
                    length = 3
                    lower = 0xA0
                case 0xE1...0xEC, 0xEE...0xEF: length = 3
                case 0xED:
                    length = 3
                    upper = 0x9F
                case 0xF0:
                    length = 4
                    lower = 0x90
                case 0xF1...0xF3: length = 4
                case 0xF4:
                    length = 4
                    upper = 0x8F
                default: return index
                }
                guard index + length <= count else { return index }
                let second = buffer[index + 1]
                guard second >= lower && second <= upper else { return index }
                for offset in 2..<max(2, length) where buffer[index + offset] & 0xC0 != 0x80 {
                    return index
                }
                index += length
            }
            return nil
        }
    }
}
