import DecantCore
import DecantCodecs
import Foundation

/// Reads the attribute values of archived objects straight from a binary archive's bytes into a record batch, for
/// objects shaped like one ``ArchiveReader`` read the full way: the same key strings (in any order, as Foundation's
/// archiver writes them) and class, so the same properties. It builds no dictionaries, objects or strings on the
/// way: an ASCII text is copied from the file into the batch, and a referenced `NSDate` is read by position, like the
/// one read the full way at that attribute.
///
/// It reads only what it is sure of: inline scalars, texts (in place or as entries, `$null` included), nil
/// references, and referenced objects shaped like an `NSDate` the full way read at the same attribute. Anything
/// else (a collection, another object, a value that does not fit its attribute, a damaged object) makes it give the
/// object back, with nothing appended: the full way then reads it, and names any problem. Run after the archive's
/// structure check, it writes exactly what the full way writes.
struct ArchiveRowDecoder {
    /// A field's value, ready to append.
    enum Cell {
        case value(Value)
        /// An ASCII text: `count` bytes at `start` in the file.
        case text(start: Int, count: Int)
        /// A text in valid UTF-16 (big-endian, as binary property lists hold any text that is not ASCII): `count`
        /// units at `start` in the file, appended as UTF-8.
        case utf16(start: Int, count: Int)
    }

    /// A referenced `NSDate` as the full way read one: its dictionary's key objects and class, and the item that
    /// holds `NS.time`.
    struct DateShape {
        var shape: KeyedArchive.FieldShape
        var timeItem: Int
    }

    /// Per attribute position, the shape of the dates the full way found there.
    private var dates: [Int: DateShape] = [:]
    /// Per item of the object being read, and of the date being read, its key's position in the shape (reused, so
    /// no array is made per object).
    private var order: [Int] = []
    private var dateOrder: [Int] = []

    /// Remembers that the full way read a date from object `object` (shaped `shape`) at attribute `position`.
    mutating func learnDate(at position: Int, from object: ArchivedObject, shape: KeyedArchive.FieldShape) {
        guard let field = object.fields.keys.firstIndex(of: "NS.time") else { return }
        // The fields leave `$class` out; the dictionary's items do not.
        let item = field < shape.classPosition ? field : field + 1
        dates[position] = DateShape(shape: shape, timeItem: item)
    }

    /// Reads entry `index` when its dictionary has `shape`'s key objects, in any order, and class: per field of the
    /// shape (`$class` left out), `attributes` names the attribute position it fills (nil: a relationship, or
    /// nothing), whose type is in `types`. Fills `cells` (one per attribute, `.null` where no field gives a value) in
    /// the entry's own order of keys, as the full way does, and returns true; returns false when the object is
    /// anything else (see the type's notes).
    mutating func read(
        _ index: Int, shapedLike shape: KeyedArchive.FieldShape, attributes: [Int?], types: [AttributeType],
        in archive: KeyedArchive, cursor: BinaryPropertyList.Cursor, objects: BinaryPropertyList.References,
        into cells: inout [Cell]
    ) -> Bool {
        for position in cells.indices { cells[position] = .value(.null) }
        do {
            guard
                let values = try shape.valuesInAnyOrder(
                    of: cursor.reference(objects, index), cursor: cursor, order: &order),
                attributes.count == values.count - 1
            else { return false }
            for item in 0..<values.count where order[item] != shape.classPosition {
                let reference = try cursor.reference(values, item)
                let field = order[item] < shape.classPosition ? order[item] : order[item] - 1
                guard let position = attributes[field] else {
                    // Not an attribute: only checked as the full way checks every field (references inside
                    // `$objects`); a collection written in place goes the full way.
                    guard try refersInside(reference, archive, cursor) else { return false }
                    continue
                }
                guard let cell = try cell(of: reference, at: position, type: types[position], archive, cursor, objects)
                else { return false }
                cells[position] = cell
            }
            return true
        } catch {
            return false
        }
    }

    /// Appends `cells` (from ``read(_:shapedLike:attributes:types:in:cursor:objects:into:)``) to the record begun in
    /// `batch`.
    static func append(_ cells: [Cell], types: [AttributeType], cursor: BinaryPropertyList.Cursor, to batch: inout RecordBatch) {
        for (cell, type) in zip(cells, types) {
            switch cell {
            case .value(let value):
                batch.append(value, as: type)
            case .text(let start, let count):
                cursor.bytes.withBytes(start..<(start + count)) { batch.appendText(utf8: $0) }
            case .utf16(let start, let count):
                cursor.bytes.withBytes(start..<(start + 2 * count)) { raw in
                    // At most 3 UTF-8 bytes per unit (a pair's 2 units make 4); on the stack when it is small.
                    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(3 * count, 1)) { buffer in
                        let written = transcodeUTF16BigEndian(raw, into: buffer)
                        batch.appendText(utf8: UnsafeRawBufferPointer(start: buffer.baseAddress, count: written))
                    }
                }
            }
        }
    }

    /// Writes big-endian UTF-16 `raw` into `utf8` (room for 3 bytes per unit) as UTF-8; returns the bytes written.
    /// Stops at a lone surrogate (which ``isValidUTF16BigEndian(_:)`` turned away before).
    static func transcodeUTF16BigEndian(
        _ raw: UnsafeRawBufferPointer, into utf8: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        var index = 0
        var written = 0
        while index + 1 < raw.count {
            var scalar = UInt32(raw[index]) << 8 | UInt32(raw[index + 1])
            index += 2
            if scalar >= 0xD800 && scalar < 0xE000 {
                guard scalar < 0xDC00, index + 1 < raw.count else { break }
                let low = UInt32(raw[index]) << 8 | UInt32(raw[index + 1])
                guard low >= 0xDC00 && low < 0xE000 else { break }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                index += 2
            }
            switch scalar {
            case ..<0x80:
                utf8[written] = UInt8(scalar)
                written += 1
            case ..<0x800:
                utf8[written] = UInt8(0xC0 | scalar >> 6)
                utf8[written + 1] = UInt8(0x80 | scalar & 0x3F)
                written += 2
            case ..<0x10000:
                utf8[written] = UInt8(0xE0 | scalar >> 12)
                utf8[written + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
                utf8[written + 2] = UInt8(0x80 | scalar & 0x3F)
                written += 3
            default:
                utf8[written] = UInt8(0xF0 | scalar >> 18)
                utf8[written + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
                utf8[written + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
                utf8[written + 3] = UInt8(0x80 | scalar & 0x3F)
                written += 4
            }
        }
        return written
    }

    /// Whether object `reference`, a field's value, refers only inside `$objects` (a reference) or nowhere (a
    /// scalar); false for a collection written in place.
    private func refersInside(
        _ reference: Int, _ archive: KeyedArchive, _ cursor: BinaryPropertyList.Cursor
    ) throws -> Bool {
        let offset = try cursor.objectOffset(reference)
        let marker = cursor.bytes[offset]
        switch marker >> 4 {
        case 0x8: return try cursor.uid(marker: marker, at: offset).map { $0 < UInt64(archive.objectCount) } ?? false
        case 0xA, 0xC, 0xD: return false
        default: return true
        }
    }

    /// The cell of attribute `position` from field value `reference`, or nil when only the full way can tell.
    private mutating func cell(
        of reference: Int, at position: Int, type: AttributeType, _ archive: KeyedArchive,
        _ cursor: BinaryPropertyList.Cursor, _ objects: BinaryPropertyList.References
    ) throws -> Cell? {
        let offset = try cursor.objectOffset(reference)
        let marker = cursor.bytes[offset]
        switch marker >> 4 {
        case 0x8:
            guard let uid = try cursor.uid(marker: marker, at: offset) else { return nil }
            if uid == 0 { return .value(.null) }
            guard uid < UInt64(archive.objectCount) else { return nil }
            let entry = try cursor.reference(objects, Int(uid))
            let entryOffset = try cursor.objectOffset(entry)
            let entryMarker = cursor.bytes[entryOffset]
            switch entryMarker >> 4 {
            case 0x5, 0x6:
                // A string entry: `$null` stands for nil. Only one of five characters can be: a text of any other
                // length is not compared (which, for UTF-16, would decode it into a string first).
                let (length, _) = try cursor.count(marker: entryMarker, at: entryOffset)
                if length == 5, try cursor.isString(entry, "$null") { return .value(.null) }
                return try inline(marker: entryMarker, at: entryOffset, type: type, archive, cursor)
            case 0xD:
                return try date(at: entry, position: position, type: type, archive, cursor)
            default:
                return nil
            }
        case 0xA, 0xC, 0xD:
            return nil
        default:
            return try inline(marker: marker, at: offset, type: type, archive, cursor)
        }
    }

    /// A scalar written in place (or a string entry), converted as the full way converts it.
    private func inline(
        marker: UInt8, at offset: Int, type: AttributeType, _ archive: KeyedArchive,
        _ cursor: BinaryPropertyList.Cursor
    ) throws -> Cell? {
        if marker >> 4 == 0x5, type == .string {
            let (length, start) = try cursor.count(marker: marker, at: offset)
            try cursor.checkSpan(start, count: length, width: 1, objectStart: offset)
            guard cursor.bytes.withBytes(start..<(start + length), { $0.allSatisfy { $0 < 0x80 } }) else { return nil }
            return .text(start: start, count: length)
        }
        if marker >> 4 == 0x6, type == .string {
            // Text that is not ASCII (what Foundation's archiver writes for any such string): read here when it is
            // valid UTF-16, which reads the same either way; anything else goes the full way.
            let (length, start) = try cursor.count(marker: marker, at: offset)
            try cursor.checkSpan(start, count: length, width: 2, objectStart: offset)
            guard cursor.bytes.withBytes(start..<(start + 2 * length), { Self.isValidUTF16BigEndian($0) }) else {
                return nil
            }
            return .utf16(start: start, count: length)
        }
        // Numbers and Booleans without a property-list value on the way.
        let field =
            try number(marker: marker, at: offset, cursor)
            ?? ArchiveField.resolve(cursor.scalar(marker: marker, at: offset), in: archive)
        return ArchiveReader.convert(field, to: type).map(Cell.value)
    }

    /// Whether `bytes` are big-endian UTF-16 with every surrogate in a pair.
    static func isValidUTF16BigEndian(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 1 < bytes.count {
            let high = bytes[index]
            if high >= 0xD8 && high <= 0xDB {
                guard index + 3 < bytes.count, bytes[index + 2] >= 0xDC, bytes[index + 2] <= 0xDF else { return false }
                index += 4
            } else if high >= 0xDC && high <= 0xDF {
                return false
            } else {
                index += 2
            }
        }
        return index == bytes.count
    }

    /// Entry `entry` read as the date the full way found at attribute `position`, when it has that date's shape.
    private mutating func date(
        at entry: Int, position: Int, type: AttributeType, _ archive: KeyedArchive, _ cursor: BinaryPropertyList.Cursor
    ) throws -> Cell? {
        guard let date = dates[position],
            let values = try date.shape.valuesInAnyOrder(of: entry, cursor: cursor, order: &dateOrder)
        else { return nil }
        var seconds: Double?
        for item in 0..<values.count where dateOrder[item] != date.shape.classPosition {
            let reference = try cursor.reference(values, item)
            guard dateOrder[item] == date.timeItem else {
                guard try refersInside(reference, archive, cursor) else { return nil }
                continue
            }
            // What `PropertyListValue.doubleValue` takes: a real or an integer.
            let offset = try cursor.objectOffset(reference)
            switch try number(marker: cursor.bytes[offset], at: offset, cursor) {
            case .real(let real)?: seconds = real
            case .integer(let integer)?: seconds = Double(integer)
            default: return nil
            }
        }
        guard let seconds else { return nil }
        return ArchiveReader.convert(.date(seconds), to: type).map(Cell.value)
    }

    /// The number or Boolean written at `offset` (marker `marker`), as the full way resolves it; nil for any other
    /// object.
    private func number(marker: UInt8, at offset: Int, _ cursor: BinaryPropertyList.Cursor) throws -> ArchiveField? {
        switch marker {
        case 0x08: return .bool(false)
        case 0x09: return .bool(true)
        case 0x10...0x14: return .integer(try cursor.integer(nibble: Int(marker & 0x0F), at: offset))
        case 0x22, 0x23: return try cursor.scalar(marker: marker, at: offset).doubleValue.map(ArchiveField.real)
        default: return nil
        }
    }
}
