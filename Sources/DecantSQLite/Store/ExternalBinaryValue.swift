/// The one codec for attributes that allow external storage: Core Data stores their column value tagged, `0x01`
/// followed by the bytes when kept in the database, or `0x02` followed by a file name and `0x00` when the bytes
/// live in the store's `_EXTERNAL_DATA` folder.
///
/// ```swift
/// switch ExternalBinaryValue(tagged: bytes) {
/// case .inline(let data): use(data)
/// case .file(let name): read(folder.appendingPathComponent(name))
/// case .untagged(let data): use(data)
/// }
/// ```
enum ExternalBinaryValue {
    /// The bytes, kept in the database (tag `0x01`).
    case inline(UnsafeRawBufferPointer)
    /// The name of the file holding the bytes (tag `0x02`).
    case file(String)
    /// A value without a known tag (an empty value, or one written by a tool that does not tag).
    case untagged(UnsafeRawBufferPointer)

    static let inlineTag: UInt8 = 0x01
    static let fileTag: UInt8 = 0x02

    /// Decodes a column value.
    init(tagged bytes: UnsafeRawBufferPointer) {
        switch bytes.first {
        case Self.inlineTag?:
            self = .inline(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
        case Self.fileTag?:
            let name = bytes.dropFirst().prefix { $0 != 0 }
            self = .file(String(decoding: name, as: UTF8.self))
        default:
            self = .untagged(bytes)
        }
    }

    /// The column value for `bytes` kept in the database.
    static func inlineValue(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var tagged = [UInt8](repeating: inlineTag, count: bytes.count + 1)
        tagged.withUnsafeMutableBytes { target in
            if let base = bytes.baseAddress, let start = target.baseAddress {
                (start + 1).copyMemory(from: base, byteCount: bytes.count)
            }
        }
        return tagged
    }

    /// The column value for bytes kept in the file `name`.
    static func fileValue(_ name: String) -> [UInt8] {
        [fileTag] + Array(name.utf8) + [0]
    }
}
