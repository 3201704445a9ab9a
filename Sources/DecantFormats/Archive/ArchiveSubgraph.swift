import DecantCore
import DecantCodecs
import Foundation

/// Copies the objects a value reaches into an archive of their own: how a Foundation collection or app object
/// found where the model has a transformable attribute becomes the attribute's bytes, as Core Data's default
/// transformer would have archived it. Shared objects stay shared and cycles stay cycles.
struct ArchiveSubgraph {
    /// How deep references may chain before the copy gives up.
    static let maximumDepth = 512

    let archive: KeyedArchive
    private var writer = KeyedArchiveWriter()
    private var copied: [Int: KeyedArchiveWriter.Reference] = [:]

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// The archive of `value` (a field value: a reference or an inline scalar) as binary property-list bytes.
    /// - Throws: `.malformedInput` naming the object where the graph is broken or too deep.
    static func archivedData(of value: PropertyListValue, in archive: KeyedArchive) throws -> Data {
        var subgraph = ArchiveSubgraph(archive: archive)
        let root: KeyedArchiveWriter.Reference?
        switch value {
        case .uid:
            root = try subgraph.copyReference(value, depth: 0)
        default:
            root = subgraph.writer.addValue(try subgraph.copyInline(value, depth: 0))
        }
        return try subgraph.writer.encodedData(root: root)
    }

    /// Copies the root of the keyed archive `data` (`$top` key `root`, else its only key) into `writer`, as Core
    /// Data's binary store keeps a transformable value: its object graph inline in the store's own archive.
    /// - Returns: the field value referring to the copy (a UID, or `$null` for a nil root).
    /// - Throws: `.malformedInput` when `data` is no keyed archive or its graph is broken or too deep.
    static func inline(rootOf data: Data, into writer: inout KeyedArchiveWriter) throws -> PropertyListValue {
        let archive = try KeyedArchive(data: data)
        guard let root = archive.top["root"] ?? (archive.top.count == 1 ? archive.top.values.first : nil) else {
            throw DecantError(.malformedInput, "the archive has no root object")
        }
        var subgraph = ArchiveSubgraph(archive: archive)
        swap(&subgraph.writer, &writer)
        defer { swap(&subgraph.writer, &writer) }
        switch root {
        case .uid: return try subgraph.copyReference(root, depth: 0)?.uid ?? KeyedArchiveWriter.null
        default: return try subgraph.copyInline(root, depth: 0)
        }
    }

    /// Copies the entry a UID refers to; `nil` for a nil reference.
    private mutating func copyReference(_ value: PropertyListValue, depth: Int) throws
        -> KeyedArchiveWriter.Reference?
    {
        guard let index = try archive.reference(value) else { return nil }
        if let done = copied[index] { return done }
        guard depth < Self.maximumDepth else {
            throw archive.error(
                "references nested deeper than \(Self.maximumDepth)", object: index, key: nil)
        }
        let object = try archive.object(at: index)
        guard let className = object.className else {
            // A plain entry (string, number, data); references inside one (a damaged archive) are rewritten too.
            let reference = writer.addValue(try copyInline(object.value, depth: depth + 1))
            copied[index] = reference
            return reference
        }
        let reference = writer.reserveObject()
        copied[index] = reference
        var fields = PropertyListDictionary()
        for (key, field) in object.fields {
            fields[key] = try archive.inField(key, of: object) { try copyInline(field, depth: depth + 1) }
        }
        writer.setObject(reference, className: className, classes: object.classes, fields: fields)
        return reference
    }

    /// Copies a field value, rewriting the references inside it.
    private mutating func copyInline(_ value: PropertyListValue, depth: Int) throws
        -> PropertyListValue
    {
        switch value {
        case .uid:
            return try copyReference(value, depth: depth)?.uid ?? KeyedArchiveWriter.null
        case .array(let elements):
            return .array(try elements.map { try copyInline($0, depth: depth + 1) })
        case .set(let elements):
            return .set(try elements.map { try copyInline($0, depth: depth + 1) })
        case .dictionary(let dictionary):
            var copy = PropertyListDictionary()
            for (key, element) in dictionary { copy[key] = try copyInline(element, depth: depth + 1) }
            return .dictionary(copy)
        default:
            return value
        }
    }
}
