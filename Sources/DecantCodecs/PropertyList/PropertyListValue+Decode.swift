import DecantCore
public import Foundation

extension PropertyListValue {
    /// Decodes a binary (`bplist00`) or XML property list, telling them apart by their first bytes.
    ///
    /// ```swift
    /// let info = try PropertyListValue.decode(from: data, path: "Foo.momd/VersionInfo.plist")
    /// ```
    ///
    /// Throws ``DecantError`` `.malformedInput` with the byte offset (binary) or line (XML) of the problem, and
    /// `.unsupportedFormat` for old-style OpenStep text property lists.
    public static func decode(from data: Data, path: String? = nil) throws -> PropertyListValue {
        if BinaryPropertyListReader.isBinaryPropertyList(data) {
            return try BinaryPropertyListReader(path: path).read(data)
        }
        var start = data.startIndex
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        while start < data.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(data[start]) { start += 1 }
        if start < data.endIndex, data[start] == UInt8(ascii: "<") {
            return try XMLPropertyListReader(path: path).read(data)
        }
        if data.isEmpty {
            throw DecantError(.malformedInput, "empty file is not a property list", at: Location(path: path, offset: 0))
        }
        throw DecantError(
            .unsupportedFormat,
            "neither a binary nor an XML property list",
            at: Location(path: path, offset: start - data.startIndex)
        )
    }
}
