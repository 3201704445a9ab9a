import DecantCore
import Foundation
import Synchronization

extension KeyedArchive {
    /// What a quick look at binary entry `index` tells, read straight from the bytes through `cursor` (from
    /// ``withBinaryCursor(_:)``, with `objects`) without building any value: `.object` when the entry has a `$class`
    /// reference and every reference in its fields is inside `$objects` (what ``object(at:)`` checks, but for the
    /// class dictionary itself), `.plain` for an entry without `$class`, and `.unsure` when anything looks wrong:
    /// then ``object(at:)`` decides and names the problem. `keys` remembers which key objects are `$class`, for the
    /// next look.
    package func quickLook(
        at index: Int, cursor: BinaryPropertyList.Cursor, objects: BinaryPropertyList.References,
        keys: inout KeyKinds
    ) -> QuickLook {
        let objectCount = UInt64(objectCount)
        func referencesInside(_ reference: Int, depth: Int) throws -> Bool {
            let offset = try cursor.objectOffset(reference)
            let marker = cursor.bytes[offset]
            switch marker >> 4 {
            case 0x8:
                return try cursor.uid(marker: marker, at: offset).map { $0 < objectCount } ?? false
            case 0xA, 0xC:
                guard depth < 64 else { return false }
                let span = try cursor.elementReferences(marker: marker, at: offset)
                for item in 0..<span.count {
                    guard try referencesInside(cursor.reference(span, item), depth: depth + 1) else { return false }
                }
                return true
            case 0xD:
                guard depth < 64 else { return false }
                let (_, values) = try cursor.dictionaryReferences(marker: marker, at: offset)
                for item in 0..<values.count {
                    guard try referencesInside(cursor.reference(values, item), depth: depth + 1) else { return false }
                }
                return true
            default:
                return true
            }
        }
        do {
            let entry = try cursor.reference(objects, index)
            guard let (entryKeys, values) = try cursor.entries(of: entry) else { return .plain }
            var classIndex: Int?
            for item in 0..<entryKeys.count {
                let value = try cursor.reference(values, item)
                if try keys.isClassKey(cursor.reference(entryKeys, item), cursor) {
                    guard let uid = try cursor.uid(of: value), uid != 0, uid < objectCount else { return .unsure }
                    classIndex = Int(uid)
                } else {
                    guard try referencesInside(value, depth: 0) else { return .unsure }
                }
            }
            return classIndex.map(QuickLook.object) ?? .plain
        } catch {
            return .unsure
        }
    }

    /// Which key objects are the string `$class`, for ``quickLook(at:cursor:objects:keys:)``: an archive writes each
    /// key string once, so the objects of its classes share a few key objects, and each is compared once.
    package struct KeyKinds {
        /// The key objects seen, up to a few dozen.
        private var known: [(reference: Int, isClass: Bool)] = []
        /// Key objects not among them once they were full: Foundation's archiver on Linux writes every dictionary's
        /// key strings anew, so past a few dozen misses each key is compared without looking through them first.
        private var misses = 0

        package init() {}

        /// Whether key object `reference` is the string `$class`.
        package mutating func isClassKey(_ reference: Int, _ cursor: BinaryPropertyList.Cursor) throws -> Bool {
            if misses < 64 {
                for entry in known where entry.reference == reference { return entry.isClass }
                if known.count == 32 { misses += 1 }
            }
            let isClass = try cursor.isString(reference, "$class")
            if known.count < 32 { known.append((reference, isClass)) }
            return isClass
        }
    }

    /// The answer of ``quickLook(at:cursor:objects:keys:)``.
    package enum QuickLook {
        case plain
        case object(classIndex: Int)
        case unsure
    }
}
