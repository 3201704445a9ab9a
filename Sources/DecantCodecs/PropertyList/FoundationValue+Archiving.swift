public import Foundation

extension FoundationValue {
    /// The value as `NSKeyedArchiver.archivedData(withRootObject:)` lays it out, serialised as a binary plist:
    /// `$top = {root: UID}`, `$objects[0] = "$null"`, then each object where Foundation puts it — the object first,
    /// then what it encodes (keys before values in a dictionary), then its class dictionary the first time the
    /// class is used. Strings, numbers and immutable data are plain entries; equal strings, integers and Booleans share
    /// one; `NSNull` is one entry however often it appears.
    ///
    /// ```swift
    /// let data = try FoundationValue.dictionary([.init("name", .string("n"))]).archivedData()
    /// ```
    public func archivedData() throws -> Data {
        var archiver = FoundationArchiver()
        let root = archiver.add(self)
        return try archiver.writer.encodedData(root: KeyedArchiveWriter.Reference(index: Int(root.uidValue ?? 0)))
    }

    /// Adds the value to `writer` and returns the field value that refers to it.
    public func archive(into writer: inout KeyedArchiveWriter) -> PropertyListValue {
        var archiver = FoundationArchiver(writer: writer)
        let reference = archiver.add(self)
        writer = archiver.writer
        return reference
    }
}

/// Adds ``FoundationValue``s to a ``KeyedArchiveWriter`` as `NSKeyedArchiver` does, sharing one entry per equal
/// string, integer and Boolean (Foundation's small numbers and Booleans are one object each) and one `NSNull`.
private struct FoundationArchiver {
    package var writer = KeyedArchiveWriter()
    package var null: KeyedArchiveWriter.Reference?
    package var scalars: [PropertyListValue: KeyedArchiveWriter.Reference] = [:]

    package mutating func scalar(_ value: PropertyListValue) -> PropertyListValue {
        if let known = scalars[value] { return known.uid }
        let reference = writer.addValue(value)
        scalars[value] = reference
        return reference.uid
    }

    package mutating func add(_ value: FoundationValue) -> PropertyListValue {
        switch value {
        case .null:
            if let null { return null.uid }
            let reference = writer.addObject(className: "NSNull", fields: [:])
            null = reference
            return reference.uid
        case .bool(let flag):
            return scalar(.bool(flag))
        case .integer(let integer):
            return scalar(.integer(integer))
        case .real(let real):
            // Not shared: `==` would make 0.0 and -0.0 one entry.
            return writer.addValue(.real(real)).uid
        case .string(let text, isMutable: false):
            return writer.addString(text).uid
        case .string(let text, isMutable: true):
            return writer.addObject(
                className: "NSMutableString", classes: KeyedArchiveWriter.defaultChain("NSMutableString"),
                fields: ["NS.string": .string(text)]
            ).uid
        case .data(let bytes, isMutable: false):
            return writer.addValue(.data(bytes)).uid
        case .data(let bytes, isMutable: true):
            return writer.addObject(
                className: "NSMutableData", classes: KeyedArchiveWriter.defaultChain("NSMutableData"),
                fields: ["NS.data": .data(bytes)]
            ).uid
        case .date(let seconds):
            return writer.addObject(className: "NSDate", fields: ["NS.time": .real(seconds)]).uid
        case .url(let text):
            let object = writer.reserveObject()
            let relative = writer.addString(text)
            writer.setObject(
                object, className: "NSURL", fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": relative.uid])
            return object.uid
        case .uuid(let uuid):
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return writer.addObject(className: "NSUUID", fields: ["NS.uuidbytes": .data(bytes)]).uid
        case .collection(let elements, let kind):
            let object = writer.reserveObject()
            let references = elements.map { add($0) }
            writer.setObject(
                object, className: kind.rawValue, classes: KeyedArchiveWriter.defaultChain(kind.rawValue),
                fields: ["NS.objects": .array(references)])
            return object.uid
        case .dictionary(let entries, let isMutable):
            let name = isMutable ? "NSMutableDictionary" : "NSDictionary"
            let object = writer.reserveObject()
            let keys = entries.map { writer.addString($0.key).uid }
            let values = entries.map { add($0.value) }
            writer.setObject(
                object, className: name, classes: KeyedArchiveWriter.defaultChain(name),
                fields: ["NS.keys": .array(keys), "NS.objects": .array(values)])
            return object.uid
        }
    }
}
