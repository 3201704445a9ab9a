public import DecantCore
import DecantFormats
public import Foundation

/// A small model with Transformable and Binary attributes, and keyed archives of the shapes the corpus lacks
/// (Foundation classes outside `NSSecureUnarchiveFromData`'s list, a nested dictionary, hostile graphs), for the
/// tests of the Transformable audit of `inspect`.
public enum TransformableFixtures {
    /// `Item` with a Transformable of the default transformer, one naming `NSSecureUnarchiveFromData`, and a Binary
    /// attribute; `SpecialItem` inherits them.
    public static let model: ObjectModel = {
        var item = Entity(name: "Item")
        var secure = Attribute(name: "secure", type: .transformable, isOptional: true)
        secure.valueTransformerName = "NSSecureUnarchiveFromData"
        item.attributes = [
            Attribute(name: "payload", type: .transformable, isOptional: true), secure,
            Attribute(name: "blob", type: .binary, isOptional: true),
        ]
        let special = Entity(name: "SpecialItem", parentName: "Item")
        return ObjectModel(versionName: "Items", entities: [item, special], versionIdentifiers: ["1"])
    }()

    /// ``model`` as a bundle of one version.
    public static var bundle: ModelBundle {
        ModelBundle(name: "Items", versions: [model], currentVersionName: "Items", sourceKind: .xcdatamodeld)
    }

    /// A nested dictionary of Foundation's secure classes: `{name: "n", info: {tags: [..], when: date, id: uuid,
    /// link: url, nothing: NSNull}}`.
    public static func nestedDictionary() throws -> Data {
        var writer = KeyedArchiveWriter()
        let date = writer.addObject(className: "NSDate", fields: ["NS.time": .real(1000)])
        let uuid = writer.addObject(className: "NSUUID", fields: ["NS.uuidbytes": .data(Data(repeating: 7, count: 16))])
        let url = writer.addObject(
            className: "NSURL", fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": writer.addString("file:///a").uid])
        let null = writer.addObject(className: "NSNull", fields: [:])
        let tags = writer.addArray([writer.addString("a").uid, writer.addValue(.integer(2)).uid], className: "NSMutableArray")
        let info = writer.addDictionary(
            keys: ["tags", "when", "id", "link", "nothing"].map { writer.addString($0).uid },
            values: [tags.uid, date.uid, uuid.uid, url.uid, null.uid], className: "NSMutableDictionary")
        let root = writer.addDictionary(
            keys: [writer.addString("name").uid, writer.addString("info").uid],
            values: [writer.addString("n").uid, info.uid])
        return try writer.encodedData(root: root)
    }

    /// An archive whose root is of class `className` with one string field.
    public static func object(_ className: String, classes: [String]? = nil) throws -> Data {
        var writer = KeyedArchiveWriter()
        let root = writer.addObject(
            className: className, classes: classes, fields: ["NSString": writer.addString("text").uid])
        return try writer.encodedData(root: root)
    }

    /// Arrays nested `levels` deep.
    public static func deep(_ levels: Int) throws -> Data {
        var writer = KeyedArchiveWriter()
        var current = writer.addString("leaf")
        for _ in 0..<levels { current = writer.addArray([current.uid]) }
        return try writer.encodedData(root: current)
    }

    /// An array that contains itself.
    public static func cyclic() throws -> Data {
        var writer = KeyedArchiveWriter()
        let list = writer.reserveObject()
        writer.setObject(
            list, className: "NSMutableArray", classes: ["NSMutableArray", "NSArray", "NSObject"],
            fields: ["NS.objects": .array([list.uid])])
        return try writer.encodedData(root: list)
    }

    /// The batches of ``model`` holding `payloads` (by primary key; `SpecialItem` objects from key 100), `secure`
    /// and `blobs` values.
    public static func batches(
        payloads: [Int64: Data?], secure: [Int64: Data] = [:], blobs: [Int64: Data] = [:]
    ) -> [RecordBatch] {
        ["Item", "SpecialItem"].compactMap { entity -> RecordBatch? in
            guard let layout = RecordLayout(entity: entity, in: model) else { return nil }
            var batch = RecordBatch(layout: layout)
            for key in payloads.keys.sorted() where (key >= 100) == (entity == "SpecialItem") {
                // Layout order: blob, payload, secure.
                let payload = payloads[key] ?? nil
                batch.append(
                    Record(
                        entity: entity, id: .primaryKey(key),
                        values: [
                            blobs[key].map(Value.data) ?? .null, payload.map(Value.transformable) ?? .null,
                            secure[key].map(Value.transformable) ?? .null,
                        ]))
            }
            return batch
        }
    }
}
