/// The bytes of JSON string escapes (RFC 8259 §7), shared by ``JSONScanner``, which reads a file and names what is
/// wrong, and the NDJSON line decoders, which read a line in memory and hand anything wrong to the scanner.
enum JSONEscape {
    /// The byte `\` followed by `letter` stands for (`n` → line feed), or nil for `u` and for what is no escape.
    @inline(__always)
    static func simple(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// The value of one hexadecimal digit of a `\u` escape, either case.
    @inline(__always)
    static func hexDigit(_ byte: UInt8) -> UInt16? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt16(byte - 0x30)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt16(byte - 0x61 + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt16(byte - 0x41 + 10)
        default: nil
        }
    }
}
