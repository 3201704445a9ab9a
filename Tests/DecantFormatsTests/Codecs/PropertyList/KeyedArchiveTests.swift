import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

@Suite("Keyed archives")
struct KeyedArchiveTests {
    /// A small archive with a cycle, Foundation collections and shared classes.
    static func makeArchive() throws -> (Data, root: Int) {
        var writer = KeyedArchiveWriter()
        let model = writer.reserveObject()
        let name = writer.addString("Note")
        let title = writer.addObject(
            className: "NSMutableString",
            classes: ["NSMutableString", "NSString", "NSObject"],
            fields: ["NS.string": "title"]
        )
        let entity = writer.addObject(
            className: "NSEntityDescription",
            fields: ["NSEntityName": name.uid, "NSManagedObjectModel": model.uid, "NSTitle": title.uid, "NSCount": 3]
        )
        let entities = writer.addDictionary(keys: [name.uid], values: [entity.uid], className: "NSMutableDictionary")
        let identifiers = writer.addArray([writer.addString("").uid], className: "NSSet")
        writer.setObject(
            model,
            className: "NSManagedObjectModel",
            fields: [
                "NSEntities": entities.uid, "NSVersionIdentifiers": identifiers.uid,
                "NSNothing": KeyedArchiveWriter.null,
            ]
        )
        return (try writer.encodedData(root: model), model.index)
    }

    @Test func writerOutputReadsBack() throws {
        let (data, rootIndex) = try Self.makeArchive()
        let archive = try KeyedArchive(data: data, path: "mem.archive")
        try archive.validate()
        #expect(archive.archiverName == "NSKeyedArchiver")
        #expect(archive.version == 100_000)
        #expect(try archive.topReference(forKey: "root") == rootIndex)
        let model = try #require(try archive.rootObject())
        #expect(model.classes == ["NSManagedObjectModel", "NSObject"])
        #expect(try archive.object(forKey: "NSNothing", in: model) == nil)
        let entities = try #require(try archive.stringKeyedEntries(forKey: "NSEntities", in: model))
        #expect(entities.map(\.key) == ["Note"])
        let entity = try #require(try archive.object(for: entities[0].value))
        #expect(entity.isKind(of: "NSObject"))
        #expect(try archive.string(forKey: "NSTitle", in: entity) == "title")
        #expect(try archive.integer(forKey: "NSCount", in: entity) == 3)
        #expect(try archive.object(forKey: "NSManagedObjectModel", in: entity)?.index == model.index)
        #expect(try archive.elements(forKey: "NSVersionIdentifiers", in: model)?.count == 1)
        // One class dictionary per class.
        let classEntries = archive.objects.filter { $0["$classname"] != nil }
        #expect(classEntries.count == 5)
    }

    @Test func plistlibReadsOurArchive() throws {
        let (data, rootIndex) = try Self.makeArchive()
        let script = """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[1], 'rb'))
            o = v['$objects']
            root = v['$top']['root']
            assert isinstance(root, plistlib.UID)
            model = o[root.data]
            print(v['$archiver'], v['$version'], root.data, o[0], o[model['$class'].data]['$classname'],
                  type(model['NSEntities']).__name__, len(o), sep='|')
            """
        let archive = try KeyedArchive(data: data)
        let text = try PythonOracle.text(script, input: data)
        #expect(text == "NSKeyedArchiver|100000|\(rootIndex)|$null|NSManagedObjectModel|UID|\(archive.objectCount)")
    }

    @Test func decodeTreeOfTransformableValue() throws {
        var writer = KeyedArchiveWriter()
        let key = writer.addString("when")
        let date = writer.addObject(className: "NSDate", fields: ["NS.time": 60.0])
        let uuidBytes = Data((0..<16).map { UInt8($0) })
        let uuid = writer.addObject(className: "NSUUID", fields: ["NS.uuidbytes": .data(uuidBytes)])
        let uuidKey = writer.addString("id")
        let dictionary = writer.addDictionary(keys: [key.uid, uuidKey.uid], values: [date.uid, uuid.uid])
        let note = writer.addObject(
            className: "MyApp.Note",
            fields: ["info": dictionary.uid, "flag": true, "nothing": KeyedArchiveWriter.null]
        )
        let archive = try KeyedArchive(data: try writer.encodedData(root: note))
        let tree = try archive.decodeRootTree()
        #expect(tree[field: "flag"] == .bool(true))
        #expect(tree[field: "nothing"] == .null)
        #expect(tree[field: "info"]?["when"] == .date(60))
        #expect(tree[field: "info"]?["id"] == .uuid(UUID(uuidString: "00010203-0405-0607-0809-0A0B0C0D0E0F")!))
        guard case .object(let className, _) = tree else {
            Issue.record("root is not an object")
            return
        }
        #expect(className == "MyApp.Note")
    }

    @Test func nestedArchiveInData() throws {
        var inner = KeyedArchiveWriter()
        let innerRoot = inner.addString("inside")
        let innerData = try inner.encodedData(root: innerRoot)
        var outer = KeyedArchiveWriter()
        let holder = outer.addObject(
            className: "NSMutableData",
            classes: ["NSMutableData", "NSData", "NSObject"],
            fields: ["NS.data": .data(innerData)]
        )
        let archive = try KeyedArchive(data: try outer.encodedData(root: holder))
        let nested = try #require(try archive.nestedArchive(archive.topValue(forKey: "root")))
        #expect(nested.nestingDepth == 1)
        #expect(try nested.string(nested.topValue(forKey: "root")) == "inside")
        #expect(try archive.nestedArchive(.data(Data([1, 2, 3]))) == nil)
    }

    @Test func knownKeysDictionaryDropsEmptySlots() throws {
        var writer = KeyedArchiveWriter()
        let token = writer.addString("__empty_slot_token_4c24_98dc_ac1e_b773__")
        let keys = writer.addArray([writer.addString("A").uid, writer.addString("B").uid])
        let mapping = writer.addObject(
            className: "NSKnownKeysMappingStrategy1",
            fields: ["keys": keys.uid, "length": 2, "version": 1]
        )
        let values = writer.addArray([writer.addString("a-value").uid, token.uid])
        let dictionary = writer.addObject(
            className: "NSKnownKeysDictionary1",
            classes: [
                "NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject",
            ],
            fields: ["values": values.uid, "searchMapping": mapping.uid, "emptyToken": token.uid, "version": 1]
        )
        let archive = try KeyedArchive(data: try writer.encodedData(root: dictionary))
        let entries = try #require(try archive.stringKeyedEntries(archive.topValue(forKey: "root")))
        #expect(entries.map(\.key) == ["A"])
        #expect(try archive.string(entries[0].value) == "a-value")
        #expect(try archive.decodeRootTree() == .dictionary([.init(key: .string("A"), value: .string("a-value"))]))
    }

    @Test func secondNullStringIsNil() throws {
        let plist: PropertyListValue = [
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": .uid(1)],
            "$objects": [
                "$null", ["$class": .uid(2), "x": .uid(3)], ["$classname": "Thing", "$classes": ["Thing"]], "$null",
            ],
        ]
        let archive = try KeyedArchive(propertyList: plist)
        let root = try #require(try archive.rootObject())
        #expect(try archive.object(forKey: "x", in: root) == nil)
        #expect(try archive.string(forKey: "x", in: root) == nil)
    }

    // MARK: Malformed archives

    static func archive(objects: [PropertyListValue], top: PropertyListValue = ["root": .uid(1)]) -> PropertyListValue {
        ["$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": top, "$objects": .array(objects)]
    }

    @Test func uidPastObjectsNamesTheObject() throws {
        let plist = Self.archive(objects: [
            "$null", ["$class": .uid(2), "child": .uid(9)],
            ["$classname": "Thing", "$classes": ["Thing", "NSObject"]],
        ])
        let archive = try KeyedArchive(propertyList: plist, path: "bad.archive")
        let error = #expect(throws: DecantError.self) { try archive.validate() }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[1]")
        #expect(error?.location?.keyPath == "child")
        #expect(error?.location?.path == "bad.archive")
    }

    @Test func topUIDPastObjectsIsRejected() throws {
        let error = #expect(throws: DecantError.self) {
            try KeyedArchive(propertyList: Self.archive(objects: ["$null"], top: ["root": .uid(5)]))
        }
        #expect(error?.code == .malformedInput)
    }

    @Test(
        "$class that is not a class dictionary",
        arguments: [
            PropertyListValue.uid(2), .uid(3), .integer(2), .uid(0),
        ]
    )
    func badClassReference(classValue: PropertyListValue) throws {
        let plist = Self.archive(objects: ["$null", ["$class": classValue], "NotAClass", ["$classes": ["X"]]])
        let archive = try KeyedArchive(propertyList: plist, path: "bad.archive")
        let error = #expect(throws: DecantError.self) { try archive.object(at: 1) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[1]")
    }

    @Test func selfReferentialStringIsRejected() throws {
        let plist = Self.archive(objects: [
            "$null", ["$class": .uid(2), "NS.string": .uid(1)],
            ["$classname": "NSMutableString", "$classes": ["NSMutableString"]],
        ])
        let archive = try KeyedArchive(propertyList: plist)
        let error = #expect(throws: DecantError.self) { try archive.string(archive.topValue(forKey: "root")) }
        #expect(error?.code == .malformedInput)
        let treeError = #expect(throws: DecantError.self) { try archive.decodeRootTree() }
        #expect(treeError?.location?.object == "$objects[1]")
    }

    @Test func sharedObjectBombIsRefused() throws {
        // 40 arrays each holding the next one twice: acyclic, but 2^40 values as a tree.
        var writer = KeyedArchiveWriter()
        var next = writer.addString("leaf")
        for _ in 0..<40 { next = writer.addArray([next.uid, next.uid]) }
        let archive = try KeyedArchive(data: try writer.encodedData(root: next))
        let error = #expect(throws: DecantError.self) { try archive.decodeRootTree() }
        #expect(error?.code == .malformedInput)
    }

    @Test("Missing or wrong archive header keys", arguments: ["$archiver", "$version", "$top", "$objects"])
    func headerKeys(key: String) throws {
        guard case .dictionary(var dictionary) = Self.archive(objects: ["$null"]) else { return }
        dictionary[key] = nil
        let error = #expect(throws: DecantError.self) { try KeyedArchive(propertyList: .dictionary(dictionary)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.keyPath == key)
        dictionary[key] = .integer(1)
        #expect(throws: DecantError.self) { try KeyedArchive(propertyList: .dictionary(dictionary)) }
    }

    @Test func typeMismatchNamesObjectAndKey() throws {
        let (data, _) = try Self.makeArchive()
        let archive = try KeyedArchive(data: data)
        let model = try #require(try archive.rootObject())
        let error = #expect(throws: DecantError.self) { try archive.string(forKey: "NSEntities", in: model) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object != nil)
    }

    @Test func unfilledReservationIsAUsageError() throws {
        var writer = KeyedArchiveWriter()
        let reserved = writer.reserveObject()
        let error = #expect(throws: DecantError.self) { try writer.encodedData(root: reserved) }
        #expect(error?.code == .usage)
    }
}
