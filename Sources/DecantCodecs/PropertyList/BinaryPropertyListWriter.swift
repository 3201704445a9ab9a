public import Foundation

/// Serialises a ``PropertyListValue`` as a binary property list (`bplist00`).
///
/// ```swift
/// let data = BinaryPropertyListWriter().write(["name": "Note", "count": 3])
/// ```
///
/// Integers, object references and offsets use the smallest sizes that fit; strings are ASCII when they can be,
/// UTF-16BE otherwise; equal scalars are stored once; dictionaries keep their insertion order.
public struct BinaryPropertyListWriter: Sendable {
    /// Creates a writer.
    public init() {}

    /// Returns the binary property list whose top object is `value`.
    public func write(_ value: PropertyListValue) -> Data {
        var flattener = Flattener()
        _ = flattener.add(value)
        return flattener.serialise()
    }
}

extension BinaryPropertyListWriter {
    /// One entry of the object table: a scalar, or a container holding object indices.
    fileprivate enum FlatObject {
        case scalar(PropertyListValue)
        case array([Int])
        case set([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// Identity of a scalar for de-duplication: exact bytes and bit patterns, not Unicode or numeric equality.
    fileprivate enum ScalarKey: Hashable {
        case string([UInt8])
        case integer(Int64)
        case real(UInt64)
        case bool(Bool)
        case date(UInt64)
        case data(Data)
        case uid(UInt64)
        case null
    }

    fileprivate struct Flattener {
        package var objects: [FlatObject] = []
        package var scalars: [ScalarKey: Int] = [:]

        package mutating func add(_ value: PropertyListValue) -> Int {
            let key: ScalarKey
            switch value {
            case .string(let string): key = .string(Array(string.utf8))
            case .integer(let integer): key = .integer(integer)
            case .real(let real): key = .real(real.bitPattern)
            case .bool(let bool): key = .bool(bool)
            case .date(let date): key = .date(date.bitPattern)
            case .data(let data): key = .data(data)
            case .uid(let uid): key = .uid(uid)
            case .null: key = .null
            case .array(let elements), .set(let elements):
                let index = reserve()
                let children = elements.map { add($0) }
                if case .array = value { objects[index] = .array(children) } else { objects[index] = .set(children) }
                return index
            case .dictionary(let dictionary):
                let index = reserve()
                let keys = dictionary.keys.map { add(.string($0)) }
                let values = dictionary.values.map { add($0) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            }
            if let existing = scalars[key] { return existing }
            objects.append(.scalar(value))
            scalars[key] = objects.count - 1
            return objects.count - 1
        }

        package mutating func reserve() -> Int {
            objects.append(.array([]))
            return objects.count - 1
        }

        package func serialise() -> Data {
            let referenceSize = Self.byteCount(for: UInt64(objects.count - 1))
            var out: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(out.count)
                switch object {
                case .scalar(let value): Self.appendScalar(value, to: &out)
                case .array(let children):
                    Self.appendMarker(0xA, count: children.count, to: &out)
                    for child in children { Self.appendUnsigned(UInt64(child), size: referenceSize, to: &out) }
                case .set(let children):
                    Self.appendMarker(0xC, count: children.count, to: &out)
                    for child in children { Self.appendUnsigned(UInt64(child), size: referenceSize, to: &out) }
                case .dictionary(let keys, let values):
                    Self.appendMarker(0xD, count: keys.count, to: &out)
                    for child in keys + values { Self.appendUnsigned(UInt64(child), size: referenceSize, to: &out) }
                }
            }
            let tableOffset = out.count
            let offsetSize = Self.byteCount(for: UInt64(offsets.last ?? 0))
            for offset in offsets { Self.appendUnsigned(UInt64(offset), size: offsetSize, to: &out) }
            out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
            Self.appendUnsigned(UInt64(objects.count), size: 8, to: &out)
            Self.appendUnsigned(0, size: 8, to: &out)
            Self.appendUnsigned(UInt64(tableOffset), size: 8, to: &out)
            return Data(out)
        }

        /// The number of bytes (1, 2, 4 or 8) an unsigned value needs.
        package static func byteCount(for value: UInt64) -> Int {
            switch value {
            case 0...0xFF: 1
            case 0...0xFFFF: 2
            case 0...0xFFFF_FFFF: 4
            default: 8
            }
        }

        package static func appendUnsigned(_ value: UInt64, size: Int, to out: inout [UInt8]) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }

        package static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
            // Negative values and values of 2^32 and above are written as 8-byte signed integers.
            let size = value < 0 ? 8 : byteCount(for: UInt64(value))
            out.append(0x10 | UInt8(size.trailingZeroBitCount))
            appendUnsigned(UInt64(bitPattern: value), size: size, to: &out)
        }

        package static func appendMarker(_ type: UInt8, count: Int, to out: inout [UInt8]) {
            if count < 15 {
                out.append(type << 4 | UInt8(count))
            } else {
                out.append(type << 4 | 0x0F)
                appendInteger(Int64(count), to: &out)
            }
        }

        package static func appendScalar(_ value: PropertyListValue, to out: inout [UInt8]) {
            switch value {
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendMarker(0x5, count: string.utf8.count, to: &out)
                    out.append(contentsOf: string.utf8)
                } else {
                    let units = Array(string.utf16)
                    appendMarker(0x6, count: units.count, to: &out)
                    for unit in units { appendUnsigned(UInt64(unit), size: 2, to: &out) }
                }
            case .integer(let integer): appendInteger(integer, to: &out)
            case .real(let real):
                out.append(0x23)
                appendUnsigned(real.bitPattern, size: 8, to: &out)
            case .bool(let bool): out.append(bool ? 0x09 : 0x08)
            case .date(let date):
                out.append(0x33)
                appendUnsigned(date.bitPattern, size: 8, to: &out)
            case .data(let data):
                appendMarker(0x4, count: data.count, to: &out)
                out.append(contentsOf: data)
            case .uid(let uid):
                let size = byteCount(for: uid)
                out.append(0x80 | UInt8(size - 1))
                appendUnsigned(uid, size: size, to: &out)
            case .null: out.append(0x00)
            case .array, .set, .dictionary: break  // containers are flattened by `add`
            }
        }
    }
}
