public import DecantCore
public import DecantCodecs
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

    /// A value of every shape `--decode-transformables` writes: a nested dictionary of arrays, sets, strings, numbers
    /// (integer, real, Boolean, NaN), dates, data, URL, UUID and NSNull, mutable classes, and keys that start with `$`.
    public static let everyShape: FoundationValue = .dictionary([
        .init("title", .string("Dune")),
        .init("count", .integer(-42)),
        .init("ratio", .real(2.0)),
        .init("tiny", .real(.leastNonzeroMagnitude)),
        .init("odd", .real(.nan)),
        .init("flag", .bool(true)),
        .init("when", .date(738_000_000.125)),
        .init("bytes", .data(Data([0, 1, 2, 255]))),
        .init("link", .url("https://example.com/a?b=c")),
        .init("id", .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))),
        .init("nothing", .null),
        .init("$class", .string("a key, not a tag")),
        .init(
            "nested",
            .dictionary(
                [
                    .init("list", .collection([.string("a"), .integer(2), .null, .collection([], .array)], .mutableArray)),
                    .init("set", .collection([.string("x"), .string("y")], .set)),
                    .init("text", .string("grows", isMutable: true)),
                    .init("buffer", .data(Data("raw".utf8), isMutable: true)),
                    .init("empty", .dictionary([])),
                ], isMutable: true)),
        .init("plainList", .collection([.real(-0.0), .integer(0), .bool(false), .string("")])),
    ])

    /// An archive as Python's `plistlib` reads it, every reference followed: objects as their class, `$classes` and
    /// keys, plain entries as they are (data and reals tagged so JSON keeps them apart); as JSON text with sorted keys.
    public static func pythonTree(of archive: Data) throws -> String {
        try PythonOracle.text(
            """
            import plistlib, sys, json, base64, math
            p = plistlib.load(open(sys.argv[1], 'rb'))
            objs = p['$objects']
            def res(v, depth=0):
                assert depth < 100
                if isinstance(v, plistlib.UID):
                    if v.data == 0: return None
                    v = objs[v.data]
                    if isinstance(v, dict) and '$class' in v:
                        cls = objs[v['$class'].data]
                        out = {'$classname': cls['$classname'], '$classes': cls['$classes']}
                        for k, x in v.items():
                            if k != '$class': out[k] = res(x, depth + 1)
                        return out
                    if v == '$null': return None
                    return res(v, depth + 1)
                if isinstance(v, list): return [res(x, depth + 1) for x in v]
                if isinstance(v, bytes): return {'bytes': base64.b64encode(v).decode()}
                if isinstance(v, float): return {'real': 'nan' if math.isnan(v) else repr(v)}
                return v
            print(json.dumps({'archiver': p['$archiver'], 'version': p['$version'], 'top': list(p['$top']),
                              'root': res(p['$top']['root'])}, sort_keys=True))
            """, input: archive)
    }
}
