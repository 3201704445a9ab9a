import DecantCore
public import Foundation

/// Parses binary property lists (`bplist00`) without Foundation, safely on hostile input.
///
/// ```swift
/// let value = try BinaryPropertyListReader(path: "SampleModel.mom").read(data)
/// ```
///
/// Offsets, counts and object references are bounds-checked; a reference graph that loops back on itself,
/// nesting deeper than ``maximumDepth``, and containers shared so often that the value tree would hold more than
/// ``maximumValueCount(forFileSize:)`` values (a binary "billion laughs") are rejected. Every error is a
/// ``DecantError`` with code `.malformedInput` (or `.unsupportedFormat` for another `bplist` version) and the byte
/// offset of the object.
public struct BinaryPropertyListReader: Sendable {
    /// The file name put into error locations.
    public var path: String?
    /// The deepest nesting of arrays, sets and dictionaries accepted. Defaults to 512.
    public var maximumDepth: Int

    /// Creates a reader; `path` only labels errors.
    public init(path: String? = nil, maximumDepth: Int = 512) {
        self.path = path
        self.maximumDepth = maximumDepth
    }

    /// The most values the decoded tree may hold, counting a shared object once per reference: a million, or four
    /// per byte for larger files. Apple's writers share only strings, numbers and data, which keeps their files far
    /// below this; every walk over the tree (references, JSON output) is bounded by it.
    public static func maximumValueCount(forFileSize size: Int) -> Int {
        max(1_000_000, size.multipliedReportingOverflow(by: 4).partialValue)
    }

    /// Whether `data` starts with the binary property list magic `bplist`.
    public static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.starts(with: Array("bplist".utf8))
    }

    /// Parses `data` and returns its top object.
    ///
    /// The checks run first, over the bytes (see ``BinaryPropertyList``); then the tree is built, each shared object
    /// once.
    public func read(_ data: Data) throws -> PropertyListValue {
        try BinaryPropertyList(data: data, path: path, maximumDepth: maximumDepth).topValue()
    }
}
