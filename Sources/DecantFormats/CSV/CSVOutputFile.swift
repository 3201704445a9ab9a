import DecantCore
import Foundation

/// One delimited-text file being written: a buffer flushed to the file as it fills, and RFC 4180 quoting.
///
/// A field is quoted exactly when it must be: when it contains the delimiter, a quote, CR or LF, starts or ends
/// with a space or tab (tools that trim would lose them), is empty (`""`, the empty string, as opposed to nil), or
/// equals the null marker. Records end with CRLF.
final class CSVOutputFile {
    private let handle: FileHandle
    private let dialect: CSVDialect
    private let path: String
    private var buffer: [UInt8] = []
    private var fieldsInRecord = 0
    private var closed = false

    /// Creates `url` (which must not exist), or opens it to append when `append` is set.
    /// - Throws: `.cannotCreateOutput`.
    init(url: URL, path: String, dialect: CSVDialect, append: Bool) throws {
        self.dialect = dialect
        self.path = path
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
        buffer.reserveCapacity(1 << 16)
    }

    deinit {
        if !closed { try? handle.close() }
    }

    /// Writes a nil field: the null marker, or nothing.
    func writeNil() {
        startField()
        if let marker = dialect.nullMarker { buffer.append(contentsOf: marker.utf8) }
    }

    /// Writes a field with `text`.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a field with the UTF-8 `bytes`, quoted if it must be.
    func write(bytes: UnsafeRawBufferPointer) {
        startField()
        if needsQuotes(bytes) {
            buffer.append(0x22)
            for byte in bytes {
                if byte == 0x22 { buffer.append(0x22) }
                buffer.append(byte)
            }
            buffer.append(0x22)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Ends the current record.
    func endRecord() throws {
        buffer.append(0x0D)
        buffer.append(0x0A)
        fieldsInRecord = 0
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes the buffer to the file.
    /// - Throws: `.ioError`.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw DecantError(.ioError, "cannot write the file", at: Location(path: path), underlyingError: error)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file.
    func close() throws {
        guard !closed else { return }
        defer {
            closed = true
            try? handle.close()
        }
        try flush()
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
        buffer.removeAll()
        try? handle.close()
    }

    private func startField() {
        if fieldsInRecord > 0 { buffer.append(dialect.delimiter) }
        fieldsInRecord += 1
    }

    private func needsQuotes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first, let last = bytes.last else { return true }
        if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return true }
        let delimiter = dialect.delimiter
        for byte in bytes where byte == delimiter || byte == 0x22 || byte == 0x0A || byte == 0x0D {
            return true
        }
        if let marker = dialect.nullMarker, bytes.elementsEqual(marker.utf8) { return true }
        return false
    }
}
