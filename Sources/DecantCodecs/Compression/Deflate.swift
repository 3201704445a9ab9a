import CZlib
import DecantCore
public import Foundation

/// Raw DEFLATE streams (RFC 1951, no zlib or gzip header), as in `Z_MODELCACHE.Z_CONTENT`.
///
/// ```swift
/// let archive = try Deflate.inflate(blob, maximumOutputSize: 64 << 20, path: "Notes.sqlite")
/// let blob = try Deflate.deflate(archive)
/// ```
public enum Deflate: Sendable {
    /// The default limit on inflated output: 256 MiB.
    public static let defaultMaximumOutputSize = 256 << 20

    /// Inflates a raw DEFLATE stream, refusing to produce more than `maximumOutputSize` bytes.
    ///
    /// Throws ``DecantError`` `.malformedInput` for a corrupt or truncated stream and for output over the limit
    /// (a decompression bomb); the location carries `path` and the input offset reached.
    public static func inflate(
        _ data: Data,
        maximumOutputSize: Int = defaultMaximumOutputSize,
        path: String? = nil
    ) throws -> Data {
        guard data.count <= Int(UInt32.max) else {
            throw DecantError(.unsupportedFormat, "DEFLATE stream larger than 4 GiB", at: Location(path: path))
        }
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DecantError(.ioError, "zlib could not start inflating", at: Location(path: path))
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        try pump(&stream, data, step: { CZlib.inflate(&$0, Z_NO_FLUSH) }) { status, produced, consumed, stream in
            guard output.count + produced.count <= maximumOutputSize else {
                throw DecantError(
                    .malformedInput,
                    "DEFLATE stream inflates to more than \(maximumOutputSize) bytes",
                    at: Location(path: path, offset: consumed)
                )
            }
            output.append(contentsOf: produced)
            switch status {
            case Z_STREAM_END:
                return true
            case Z_OK:
                return false
            case Z_BUF_ERROR where stream.avail_in == 0:
                throw DecantError(
                    .malformedInput,
                    "DEFLATE stream is truncated",
                    at: Location(path: path, offset: consumed)
                )
            default:
                let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw DecantError(
                    .malformedInput,
                    "corrupt DEFLATE stream: \(reason)",
                    at: Location(path: path, offset: consumed)
                )
            }
        }
        return output
    }

    /// Compresses `data` as a raw DEFLATE stream; `level` is zlib's 0 (store) to 9 (smallest), default 6.
    public static func deflate(_ data: Data, level: Int32 = 6) throws -> Data {
        guard data.count <= Int(UInt32.max) else {
            throw DecantError(.usage, "cannot deflate more than 4 GiB at once")
        }
        var stream = z_stream()
        let started = deflateInit2_(
            &stream,
            level,
            Z_DEFLATED,
            -15,
            8,
            Z_DEFAULT_STRATEGY,
            zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)
        )
        guard started == Z_OK else {
            throw DecantError(.usage, "zlib could not start deflating (level \(level))")
        }
        defer { deflateEnd(&stream) }
        var output = Data()
        try pump(&stream, data, step: { CZlib.deflate(&$0, Z_FINISH) }) { status, produced, _, _ in
            output.append(contentsOf: produced)
            guard status == Z_STREAM_END || status == Z_OK || status == Z_BUF_ERROR else {
                throw DecantError(.ioError, "zlib failed while deflating (error \(status))")
            }
            return status == Z_STREAM_END
        }
        return output
    }

    /// Feeds `data` through `stream`, calling `step` (zlib's inflate or deflate) into a 64 KiB buffer until
    /// `handle` — given the status, the bytes that call produced, the input consumed so far and the stream —
    /// says the stream has ended.
    private static func pump(
        _ stream: inout z_stream,
        _ data: Data,
        step: (inout z_stream) -> Int32,
        handle: (Int32, ArraySlice<UInt8>, Int, z_stream) throws -> Bool
    ) throws {
        var input = [UInt8](data)
        let inputCount = input.count
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        try input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputCount)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkBuffer.count)
                    let status = step(&stream)
                    return (status, chunkBuffer.count - Int(stream.avail_out))
                }
                if try handle(status, chunk[0..<produced], inputCount - Int(stream.avail_in), stream) { return }
            }
        }
    }
}
