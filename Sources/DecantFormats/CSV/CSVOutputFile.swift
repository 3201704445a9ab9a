import DecantCore
import DecantCodecs
import Foundation

/// One delimited-text file being written: its records are built in a ``CSVRecordBuffer`` and flushed to the file as
/// it fills.
///
/// The writer borrows the buffer for a whole batch (``withRecords(_:)``) and builds fields in it as a local value:
/// touched through this class per field, every use of a stored property was checked for exclusive access at run
/// time, and that was an eighth of a store's export.
final class CSVOutputFile {
    private let handle: FileHandle
    private let path: String
    /// The records not yet flushed; lent out by ``withRecords(_:)``.
    private var records: CSVRecordBuffer
    private var closed = false

    /// Creates `url` (which must not exist), or opens it to append when `append` is set.
    /// - Throws: `.cannotCreateOutput`.
    init(url: URL, path: String, dialect: CSVDialect, append: Bool) throws {
        self.path = path
        self.records = CSVRecordBuffer(dialect: dialect)
        records.bytes.reserveCapacity(1 << 16 + 1 << 12)
        if !append {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw DecantError(.cannotCreateOutput, "cannot create the file", at: Location(path: path))
            }
        }
        do {
            handle = try FileHandle(forWritingTo: url)
            if append { try handle.seekToEnd() }
        } catch {
            throw DecantError(
                .cannotCreateOutput, "cannot open the file for writing", at: Location(path: path),
                underlyingError: error)
        }
    }

    deinit {
        if !closed { try? handle.close() }
    }

    /// Runs `body` with the file's record buffer as a local value (flush it with ``flushIfFull(_:)``), and keeps what
    /// it holds afterwards, even when `body` throws.
    func withRecords<R>(_ body: (inout CSVRecordBuffer) throws -> R) rethrows -> R {
        var local = CSVRecordBuffer.placeholder
        swap(&local, &records)
        defer { swap(&local, &records) }
        return try body(&local)
    }

    /// Writes `records`' bytes to the file once they pass 64 KiB, after a whole record.
    /// - Throws: `.ioError`.
    @inline(__always)
    func flushIfFull(_ records: inout CSVRecordBuffer) throws {
        if records.bytes.count >= 1 << 16 { try flush(&records) }
    }

    /// Writes `records`' bytes to the file and empties them.
    /// - Throws: `.ioError`.
    func flush(_ records: inout CSVRecordBuffer) throws {
        guard !records.bytes.isEmpty else { return }
        do {
            try handle.write(contentsOf: records.bytes)
        } catch {
            throw DecantError(.ioError, "cannot write the file", at: Location(path: path), underlyingError: error)
        }
        records.bytes.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file.
    func close() throws {
        guard !closed else { return }
        defer {
            closed = true
            try? handle.close()
        }
        try withRecords { try flush(&$0) }
        do {
            try handle.synchronize()
        } catch {
            throw DecantError(.ioError, "cannot write the file", at: Location(path: path), underlyingError: error)
        }
    }

    /// Closes the file without writing what is buffered.
    func discard() {
        guard !closed else { return }
        closed = true
        records.bytes = []
        try? handle.close()
    }
}

/// Delimited-text records being built as UTF-8 bytes, field by field, with RFC 4180 quoting.
///
/// A field is quoted exactly when it must be: when it contains the delimiter, a quote, CR or LF, starts or ends
/// with a space or tab (tools that trim would lose them), is empty (`""`, the empty string, as opposed to nil), or
/// equals the null marker. Records end with CRLF.
///
/// Numbers, dates and ids are spelled straight into the buffer and checked there like any other field (a
/// delimiter or null marker may be a digit or letter), so that no field makes a String.
struct CSVRecordBuffer {
    /// The bytes of the records built so far.
    var bytes: [UInt8] = []
    private var atRecordStart = true
    private let delimiter: UInt8
    /// The null marker's bytes; empty when nil is an empty field.
    private let nullMarker: [UInt8]
    /// The delimiter in every byte of a word, to find it eight bytes at a time.
    private let delimiterWord: UInt64

    init(dialect: CSVDialect) {
        delimiter = dialect.delimiter
        nullMarker = dialect.nullMarker.map { Array($0.utf8) } ?? []
        delimiterWord = UInt64(dialect.delimiter) &* Self.ones
    }

    /// What a file holds while its buffer is lent out (it allocates nothing).
    static let placeholder = CSVRecordBuffer(dialect: .standard)

    /// Writes a nil field: the null marker, or nothing.
    @inline(__always)
    mutating func writeNil() {
        startField()
        if !nullMarker.isEmpty { bytes.append(contentsOf: nullMarker) }
    }

    /// Writes a field with `text`.
    mutating func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a field with the UTF-8 `field`, quoted if it must be.
    @inline(__always)
    mutating func write(bytes field: UnsafeRawBufferPointer) {
        startField()
        if needsQuotes(field) {
            appendQuoted(field)
        } else {
            bytes.append(contentsOf: field)
        }
    }

    /// Writes a field with `value` in decimal (`String(value)`).
    mutating func writeInteger(_ value: Int64) {
        startField()
        let start = bytes.count
        bytes.appendDecimal(value)
        endSpelledField(from: start)
    }

    /// Writes the field of an object id by primary key, `p` and the decimal digits of `key` (as
    /// ``RecordID/description`` spells it).
    mutating func writePrimaryKey(_ key: Int64) {
        startField()
        let start = bytes.count
        bytes.append(UInt8(ascii: "p"))
        bytes.appendDecimal(key)
        endSpelledField(from: start)
    }

    /// Writes the field of a reference by primary key, `Entity/p12` (as ``ObjectReference/description`` spells it).
    mutating func writeReference(entity: String, primaryKey key: Int64) {
        startField()
        let start = bytes.count
        bytes.append(contentsOf: entity.utf8)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(UInt8(ascii: "p"))
        bytes.appendDecimal(key)
        endSpelledField(from: start)
    }

    /// Writes the ISO 8601 field of a date (``ExactDate/appendText(referenceSeconds:to:)``) and returns true, or
    /// writes nothing and returns false where there is no such text.
    mutating func writeDate(referenceSeconds seconds: Double) -> Bool {
        let start = bytes.count
        let mark = atRecordStart
        startField()
        let fieldStart = bytes.count
        guard ExactDate.appendText(referenceSeconds: seconds, to: &bytes) else {
            bytes.removeSubrange(start...)
            atRecordStart = mark
            return false
        }
        endSpelledField(from: fieldStart)
        return true
    }

    /// Ends the current record.
    @inline(__always)
    mutating func endRecord() {
        bytes.append(0x0D)
        bytes.append(0x0A)
        atRecordStart = true
    }

    @inline(__always)
    private mutating func startField() {
        if atRecordStart {
            atRecordStart = false
        } else {
            bytes.append(delimiter)
        }
    }

    /// Quotes the field spelled at `start...` in place when it must be quoted (rare: a delimiter or null marker
    /// among its characters).
    @inline(__always)
    private mutating func endSpelledField(from start: Int) {
        let quote = bytes.withUnsafeBytes { needsQuotes(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        guard quote else { return }
        let field = Array(bytes[start...])
        bytes.removeSubrange(start...)
        field.withUnsafeBytes { appendQuoted($0) }
    }

    /// Appends `field` between quotes, each quote in it doubled.
    private mutating func appendQuoted(_ field: UnsafeRawBufferPointer) {
        bytes.append(0x22)
        var runStart = 0
        for index in field.indices where field[index] == 0x22 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: field[runStart...index]))
            bytes.append(0x22)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: field[runStart...]))
        bytes.append(0x22)
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let quoteWord: UInt64 = 0x22 &* ones
    private static let lineFeedWord: UInt64 = 0x0A &* ones
    private static let returnWord: UInt64 = 0x0D &* ones

    /// Whether a word has a zero byte (exact: a borrow can only mark a byte above a zero one, never make the first).
    @inline(__always)
    private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highBits != 0
    }

    @inline(__always)
    private func hasSpecialByte(_ word: UInt64) -> Bool {
        Self.hasZeroByte(word ^ delimiterWord) || Self.hasZeroByte(word ^ Self.quoteWord)
            || Self.hasZeroByte(word ^ Self.lineFeedWord) || Self.hasZeroByte(word ^ Self.returnWord)
    }

    /// Whether `field` must be quoted (see the type's description). The delimiter, quotes and line breaks are looked
    /// for eight bytes at a time.
    @inline(__always)
    private func needsQuotes(_ field: UnsafeRawBufferPointer) -> Bool {
        let count = field.count
        guard count > 0 else { return true }
        let first = field[0]
        let last = field[count - 1]
        if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return true }
        var index = 0
        while index + 8 <= count {
            if hasSpecialByte(field.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
            index += 8
        }
        while index < count {
            let byte = field[index]
            if byte == delimiter || byte == 0x22 || byte == 0x0A || byte == 0x0D { return true }
            index += 1
        }
        if count == nullMarker.count, !nullMarker.isEmpty {
            return nullMarker.withUnsafeBytes { $0.elementsEqual(field) }
        }
        return false
    }
}
