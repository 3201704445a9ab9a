import Foundation
import DecantCodecs

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
        var text = text
        text.withUTF8 { appendString(raw: UnsafeRawBufferPointer($0)) }
    }

    /// Appends valid UTF-8 from raw memory as a JSON string: quotes, backslashes and control characters escaped,
    /// everything else as it is, the runs that need no escape copied at once.
    mutating func appendString(raw utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard Self.needsEscape(byte) else { continue }
            if runStart < index { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[runStart..<index])) }
            runStart = index + 1
            appendEscape(byte)
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `byte` is written escaped in a JSON string: a quote, a backslash or a control character.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Appends the JSON escape of `byte` (one that ``needsEscape(_:)``).
    private mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        default:
            append("\\u00")
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }

    /// Appends an integer in decimal, without going through a String.
    mutating func appendInteger(_ value: Int64) {
        bytes.appendDecimal(value)
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

extension [UInt8] {
    /// Appends `value` in decimal, as `String(value)` spells it, without going through a String.
    @inline(__always)
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        guard magnitude >= 10 else { return append(0x30 + UInt8(truncatingIfNeeded: magnitude)) }
        let start = count
        while magnitude > 0 {
            append(0x30 + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        }
        self[start...].reverse()
    }
}
