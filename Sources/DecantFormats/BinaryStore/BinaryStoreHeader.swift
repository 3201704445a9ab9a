import DecantCore
import DecantCodecs
import Foundation

/// The 64-byte header of a binary store (section 6 of the formats spec), all integers big-endian:
/// magic `CoreData`, header format version 1, database version 134481920, the metadata archive's offset and
/// length, the map-data archive's offset (64) and length, the primary-key counter, and eight zero bytes.
struct BinaryStoreHeader: Equatable {
    static let size = 64
    static let magic = Array("CoreData".utf8)
    static let formatVersion: UInt32 = 1
    static let databaseVersion: UInt32 = 134_481_920

    var metadataOffset: UInt64
    var metadataLength: UInt64
    var mapDataOffset: UInt64
    var mapDataLength: UInt64
    var nextPrimaryKey: UInt64

    init(metadataLength: Int, mapDataLength: Int, nextPrimaryKey: Int) {
        self.mapDataOffset = UInt64(Self.size)
        self.mapDataLength = UInt64(mapDataLength)
        self.metadataOffset = UInt64(Self.size + mapDataLength)
        self.metadataLength = UInt64(metadataLength)
        self.nextPrimaryKey = UInt64(nextPrimaryKey)
    }

    /// Reads and checks the header of `bytes`: magic, versions, and both archives inside the file without
    /// overlapping the header or each other.
    init(_ bytes: [UInt8], path: String) throws {
        func fail(_ message: String, offset: Int) -> DecantError {
            DecantError(.malformedInput, message, at: Location(path: path, offset: offset))
        }
        guard bytes.count >= Self.size else {
            throw fail("a binary store is at least \(Self.size) bytes; this file has \(bytes.count)", offset: 0)
        }
        guard Array(bytes[0..<8]) == Self.magic else { throw fail("no CoreData magic: not a binary store", offset: 0) }
        func integer(at offset: Int, size: Int) -> UInt64 {
            bytes[offset..<(offset + size)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard integer(at: 8, size: 4) == UInt64(Self.formatVersion) else {
            throw fail("header format version \(integer(at: 8, size: 4)), not 1", offset: 8)
        }
        guard integer(at: 12, size: 4) == UInt64(Self.databaseVersion) else {
            throw DecantError(
                .unsupportedFormat,
                "database version \(integer(at: 12, size: 4)), not 134481920: created by an incompatible version",
                at: Location(path: path, offset: 12))
        }
        metadataOffset = integer(at: 16, size: 8)
        metadataLength = integer(at: 24, size: 8)
        mapDataOffset = integer(at: 32, size: 8)
        mapDataLength = integer(at: 40, size: 8)
        nextPrimaryKey = integer(at: 48, size: 8)
        let size = UInt64(bytes.count)
        for (name, offset, length, field) in [
            ("metadata", metadataOffset, metadataLength, 16), ("mapData", mapDataOffset, mapDataLength, 32),
        ] {
            guard offset >= UInt64(Self.size), offset <= size, length <= size - offset else {
                throw fail(
                    "the \(name) archive (offset \(offset), length \(length)) lies outside the file of \(size) bytes",
                    offset: field)
            }
        }
        let metadataEnd = metadataOffset + metadataLength
        let mapEnd = mapDataOffset + mapDataLength
        guard metadataEnd <= mapDataOffset || mapEnd <= metadataOffset else {
            throw fail("the metadata and mapData archives overlap", offset: 16)
        }
    }

    /// The 64 header bytes.
    var bytes: [UInt8] {
        var result = Self.magic
        func append(_ value: UInt64, size: Int) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                result.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        append(UInt64(Self.formatVersion), size: 4)
        append(UInt64(Self.databaseVersion), size: 4)
        append(metadataOffset, size: 8)
        append(metadataLength, size: 8)
        append(mapDataOffset, size: 8)
        append(mapDataLength, size: 8)
        append(nextPrimaryKey, size: 8)
        append(0, size: 8)
        return result
    }
}
