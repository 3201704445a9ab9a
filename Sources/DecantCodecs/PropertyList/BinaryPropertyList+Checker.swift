import DecantCore
import Foundation
import Synchronization

extension BinaryPropertyList {
    /// The check at opening: visits each object reachable from the top once, in the eager parser's order, and
    /// builds no values.
    ///
    /// It runs in one of two modes. The quick one keeps two bits per object (visited, on the current path): while no
    /// array, set or dictionary is reached twice, the tree the top expands to is exactly one value per reference
    /// followed, so a running count bounds it. Apple's archives share only strings and numbers, so this is the mode
    /// that finishes. A container reached twice, or a count past the limit, restarts the check in the exact mode,
    /// which keeps each object's tree size as the eager parser did, so errors are the same in both.
    package struct Checker {
        package let cursor: Cursor
        package let maximumDepth: Int
        package let maximumValueCount: Int
        package let exact: Bool
        /// Exact mode, per object: 0 not visited, `onPath` being visited, else its tree size (capped below `onPath`).
        package var sizes: [UInt32]
        package static let onPath = UInt32.max
        /// Quick mode: the visited objects and those on the current path, one bit each.
        package var visited: [UInt64]
        package var onPathBits: [UInt64]
        /// Quick mode: the visited objects that are arrays, sets or dictionaries, and those that are strings.
        package var containerBits: [UInt64]
        package var stringBits: [UInt64]
        /// Quick mode: the values the top expands to so far.
        package var total = 1

        /// Thrown in quick mode when only the exact mode can tell the tree's size.
        package struct NeedsExactCheck: Error {}

        package init(cursor: Cursor, maximumDepth: Int, maximumValueCount: Int, exact: Bool) {
            self.cursor = cursor
            self.maximumDepth = maximumDepth
            self.maximumValueCount = maximumValueCount
            self.exact = exact
            let count = cursor.list.objectCount
            self.sizes = exact ? [UInt32](repeating: 0, count: count) : []
            self.visited = exact ? [] : [UInt64](repeating: 0, count: (count + 63) / 64)
            self.onPathBits = visited
            self.containerBits = visited
            self.stringBits = visited
        }

        /// Checks object `index` and its subtree; returns its tree size (exact mode; 1 in quick mode).
        package mutating func check(_ index: Int, depth: Int) throws -> Int {
            guard exact else { return try quickCheck(index, depth: depth) }
            let known = sizes[index]
            if known != 0, known != Self.onPath { return Int(known) }
            let offset = try cursor.objectOffset(index)
            guard depth <= maximumDepth else {
                throw cursor.error("nesting deeper than \(maximumDepth) levels", at: offset)
            }
            guard known != Self.onPath else {
                throw cursor.error("object \(index) contains itself (reference cycle)", at: offset)
            }
            sizes[index] = Self.onPath
            let size = try checkContents(at: offset, depth: depth)
            sizes[index] = UInt32(min(size, Int(Self.onPath - 1)))
            return size
        }

        package mutating func quickCheck(_ index: Int, depth: Int) throws -> Int {
            let word = index &>> 6
            let bit = UInt64(1) &<< UInt64(index & 63)
            let isOnPath = onPathBits[word] & bit != 0
            if visited[word] & bit != 0, !isOnPath {
                // Reached again: fine for a scalar (one value per reference); a container needs the exact count.
                if containerBits[word] & bit != 0 { throw NeedsExactCheck() }
                return 1
            }
            let offset = try cursor.objectOffset(index)
            guard depth <= maximumDepth else {
                throw cursor.error("nesting deeper than \(maximumDepth) levels", at: offset)
            }
            guard !isOnPath else {
                throw cursor.error("object \(index) contains itself (reference cycle)", at: offset)
            }
            visited[word] |= bit
            onPathBits[word] |= bit
            let kind = cursor.bytes[offset] >> 4
            if kind == 0xA || kind == 0xC || kind == 0xD { containerBits[word] |= bit }
            if kind == 0x5 || kind == 0x6 { stringBits[word] |= bit }
            _ = try checkContents(at: offset, depth: depth)
            onPathBits[word] &= ~bit
            return 1
        }

        package mutating func checkContents(at offset: Int, depth: Int) throws -> Int {
            let marker = cursor.bytes[offset]
            switch marker >> 4 {
            case 0xA, 0xC:
                // Like the eager parser: every reference is checked before the first child, and no list is built.
                let span = try cursor.elementReferences(marker: marker, at: offset)
                if !cursor.referencesAreValid(span) {
                    for item in 0..<span.count { _ = try cursor.reference(span, item) }
                }
                for item in 0..<span.count { _ = try check(try cursor.reference(span, item), depth: depth + 1) }
                return try treeSize(of: span, and: nil, at: offset)
            case 0xD:
                let (keys, values) = try cursor.dictionaryReferences(marker: marker, at: offset)
                // The values follow the keys: both checked in one go, and one by one (naming the first bad one) only
                // when one is bad.
                if !cursor.referencesAreValid(References(start: keys.start, count: keys.count &* 2)) {
                    for item in 0..<keys.count { _ = try cursor.reference(keys, item) }
                    for item in 0..<values.count { _ = try cursor.reference(values, item) }
                }
                for item in 0..<keys.count {
                    let keyReference = try cursor.reference(keys, item)
                    _ = try check(keyReference, depth: depth + 1)
                    // Checked above, so visited: the quick mode knows whether it is a string.
                    let isString =
                        exact
                        ? [0x5, 0x6].contains(try cursor.marker(of: keyReference) >> 4)
                        : stringBits[keyReference &>> 6] & (UInt64(1) &<< UInt64(keyReference & 63)) != 0
                    guard isString else {
                        throw cursor.error("dictionary key (object \(keyReference)) is not a string", at: offset)
                    }
                    _ = try check(try cursor.reference(values, item), depth: depth + 1)
                }
                return try treeSize(of: keys, and: values, at: offset)
            case 0x4, 0x6:
                let (length, start) = try cursor.count(marker: marker, at: offset)
                try cursor.checkSpan(start, count: length, width: marker >> 4 == 0x4 ? 1 : 2, objectStart: offset)
                return 1
            case 0x5:
                let (length, start) = try cursor.count(marker: marker, at: offset)
                try cursor.checkSpan(start, count: length, width: 1, objectStart: offset)
                // The bytes at once, not a block look-up per byte.
                guard cursor.bytes.withBytes(start..<(start + length), { $0.allSatisfy { $0 < 0x80 } }) else {
                    throw cursor.error("ASCII string contains a byte above 0x7F", at: offset)
                }
                return 1
            default:
                _ = try cursor.scalar(marker: marker, at: offset)
                return 1
            }
        }

        /// The tree size of a container of the objects in `first` (and `second`), throwing when it passes the
        /// value count limit.
        package mutating func treeSize(of first: References, and second: References?, at offset: Int) throws -> Int {
            guard exact else {
                // Every reference followed is one more value; past the limit only the exact mode can say where.
                total += first.count + (second?.count ?? 0)
                if total > maximumValueCount { throw NeedsExactCheck() }
                return 1
            }
            var size = 1
            for span in [first, second] {
                guard let span else { continue }
                for item in 0..<span.count {
                    size += Int(sizes[try cursor.reference(span, item)])
                    guard size <= maximumValueCount else {
                        throw cursor.error(
                            "shared objects expand to more than \(maximumValueCount) values (a reference bomb)",
                            at: offset)
                    }
                }
            }
            return size
        }
    }
}
