import Foundation

/// How a ``RecordBatch`` keeps a composite attribute's value (``Value/composite(_:)``) in one blob cell: the
/// element values in element-name order, each as its name and a tagged value. Only batches read these bytes; no
/// file holds them.
///
/// ```swift
/// let bytes = CompositeValueCoding.encode(["city": "Oslo", "year": 1624])
/// CompositeValueCoding.decode(bytes)   // ["city": "Oslo", "year": 1624]
/// ```
public enum CompositeValueCoding: Sendable {
    /// The bytes of a composite value.
    public static func encode(_ elements: [String: Value]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(UInt32(elements.count), to: &bytes)
        for name in elements.keys.sorted() {
            appendText(name, to: &bytes)
            append(elements[name] ?? .null, to: &bytes)
        }
        return bytes
    }

    /// The composite value of bytes ``encode(_:)`` wrote; `nil` for any other bytes.
    public static func decode(_ bytes: some Collection<UInt8>) -> [String: Value]? {
        var reader = Reader(bytes: Array(bytes))
        guard let count = reader.integer(UInt32.self), Int(count) <= reader.bytes.count else { return nil }
        var elements: [String: Value] = [:]
        for _ in 0..<count {
            guard let name = reader.text(), let value = reader.value(depth: 0) else { return nil }
            elements[name] = value
        }
        return reader.offset == reader.bytes.count ? elements : nil
    }

    private static func append<T: FixedWidthInteger>(_ integer: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: integer.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendBytes(_ data: some Collection<UInt8>, to bytes: inout [UInt8]) {
        append(UInt32(data.count), to: &bytes)
        bytes.append(contentsOf: data)
    }

    private static func appendText(_ text: String, to bytes: inout [UInt8]) { appendBytes(Array(text.utf8), to: &bytes) }

    private static func append(_ value: Value, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0)
        case .integer(let integer):
            bytes.append(1)
            append(integer, to: &bytes)
        case .double(let real):
            bytes.append(2)
            append(real.bitPattern, to: &bytes)
        case .decimal(let decimal):
            bytes.append(3)
            appendText(decimal.description, to: &bytes)
        case .string(let text):
            bytes.append(4)
            appendText(text, to: &bytes)
        case .bool(let flag): bytes.append(contentsOf: [5, flag ? 1 : 0])
        case .date(let date):
            bytes.append(6)
            append(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .data(let data):
            bytes.append(7)
            appendBytes(data, to: &bytes)
        case .uuid(let uuid):
            bytes.append(8)
            withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        case .uri(let text):
            bytes.append(9)
            appendText(text, to: &bytes)
        case .transformable(let data):
            bytes.append(10)
            appendBytes(data, to: &bytes)
        case .externalDataReference(let name):
            bytes.append(11)
            appendText(name, to: &bytes)
        case .composite(let elements):
            bytes.append(12)
            appendBytes(encode(elements), to: &bytes)
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let slice = take(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (shift, byte) in slice.enumerated() { value |= T(truncatingIfNeeded: byte) << (8 * shift) }
            return value
        }

        mutating func data() -> Data? {
            guard let count = integer(UInt32.self), let slice = take(Int(count)) else { return nil }
            return Data(slice)
        }

        mutating func text() -> String? { data().map { String(decoding: $0, as: UTF8.self) } }

        mutating func value(depth: Int) -> Value? {
            guard let tag = take(1)?.first else { return nil }
            switch tag {
            case 0: return .null
            case 1: return integer(Int64.self).map(Value.integer)
            case 2: return integer(UInt64.self).map { .double(Double(bitPattern: $0)) }
            case 3: return text().flatMap { Decimal(string: $0) }.map(Value.decimal)
            case 4: return text().map(Value.string)
            case 5: return take(1).map { .bool($0.first != 0) }
            case 6: return integer(UInt64.self).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
            case 7: return data().map(Value.data)
            case 8:
                guard let slice = take(16) else { return nil }
                let raw = Array(slice)
                return .uuid(raw.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            case 9: return text().map(Value.uri)
            case 10: return data().map(Value.transformable)
            case 11: return text().map(Value.externalDataReference)
            case 12:
                guard depth < 8, let inner = data() else { return nil }
                return CompositeValueCoding.decode(inner).map(Value.composite)
            default: return nil
            }
        }
    }
}
