import Foundation

/// JSON text being built as UTF-8 bytes.
struct JSONOutput {
    var bytes: [UInt8] = []

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func appendRaw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends `text` as a JSON string.
    mutating func appendString(_ text: String) {
        appendString(utf8: text.utf8)
    }

    /// Appends valid UTF-8 bytes as a JSON string: quotes, backslashes and control characters escaped, everything
    /// else as it is.
    mutating func appendString(utf8: some Sequence<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0..<0x20:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a finite Double as its shortest round-trip text, or a non-finite one as the string `NaN`,
    /// `Infinity` or `-Infinity` (JSON numbers cannot hold them).
    mutating func appendDouble(_ value: Double) {
        if value.isNaN {
            append("\"NaN\"")
        } else if value.isInfinite {
            append(value < 0 ? "\"-Infinity\"" : "\"Infinity\"")
        } else {
            appendRaw(value.description)
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
