import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Keyed archives read as records: the Notes sample, every value class, relationships, identity and mapping.
@Suite("Keyed archives as records")
struct ArchiveReaderTests {
    static let sample = Fixtures.samplesRoot.appendingPathComponent("LegacyNotes.archive")

    static func notesOptions(version: String = "Notes") throws -> FormatOptions {
        var options = FormatOptions(
            bundle: try ModelBundle.load(
                from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld")),
            version: version)
        options.archive.classEntities = ["LegacyNote": "Note"]
        return options
    }

    @Test func sampleReadsAsNotes() throws {
        let options = try Self.notesOptions()
        var reader = try ArchiveFormat().makeReader(at: Self.sample, options: options)
        let notes = try #require(try ArchiveTesting.readAll(&reader)["Note"])
        let model = reader.model
        #expect(notes.count == 5)
        #expect(reader.diagnostics.isEmpty)
        let contents = notes.map { ArchiveTesting.value("content", of: $0, in: model) }
        #expect(contents.first == .string("Buy milk"))
        #expect(contents.contains(.string("Café à 15 h avec Zoë 🎉")))
        #expect(contents.last == .null)
        let dates = notes.map { ArchiveTesting.value("date", of: $0, in: model) }
        #expect(dates.first == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        #expect(dates.contains(.date(Date(timeIntervalSinceReferenceDate: 700_172_800.5))))
        // Identities are archive indices.
        #expect(
            notes.allSatisfy { if case .external(let name) = $0.id { Int(name) != nil } else { false } })
    }

    @Test func theXMLFormOfTheSampleReadsTheSame() throws {
        let binary = try Data(contentsOf: Self.sample)
        let xml = try PythonOracle.run(
            """
            import plistlib, sys
            def xml(v):
                if isinstance(v, plistlib.UID): return {'CF$UID': v.data}
                if isinstance(v, list): return [xml(e) for e in v]
                if isinstance(v, dict): return {k: xml(e) for k, e in v.items()}
                return v
            v = plistlib.load(open(sys.argv[1], 'rb'))
            sys.stdout.buffer.write(plistlib.dumps(xml(v), fmt=plistlib.FMT_XML))
            """,
            input: binary)
        #expect(String(decoding: xml.prefix(64), as: UTF8.self).contains("<?xml"))
        let options = try Self.notesOptions()
        #expect(
            try ArchiveTesting.records(xml, options: options)
                == ArchiveTesting.records(binary, options: options))
        #expect(ArchiveFormat.looksLikeKeyedArchive(xml.prefix(512)))
        #expect(ArchiveFormat.looksLikeKeyedArchive(binary.prefix(512)))
    }

    @Test func classesMapByShortNameAndUnmappedOnesAreReported() throws {
        var options = try Self.notesOptions()
        options.archive.classEntities = [:]
        var reader = try ArchiveReader(contentsOf: Self.sample, options: options)
        #expect(try ArchiveTesting.readAll(&reader).isEmpty)
        #expect(reader.diagnostics.map(\.kind) == [.unmappedArchiveContent])
        #expect(reader.diagnostics.first?.message.contains("NotesApp.LegacyNote") == true)
        options.archive.classEntities = ["NotesApp.LegacyNote": "Note"]
        #expect(
            try ArchiveTesting.records(Data(contentsOf: Self.sample), options: options)["Note"]?.count
                == 5)
    }

    @Test func aMappingToAnUnknownEntityIsAUsageError() throws {
        var options = try Self.notesOptions()
        options.archive.classEntities = ["LegacyNote": "Memo"]
        let error = #expect(throws: DecantError.self) {
            try ArchiveReader(contentsOf: Self.sample, options: options)
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("Memo") == true)
    }

    @Test func aKeyRenamedToAnUnknownPropertyIsAUsageError() throws {
        var options = try Self.notesOptions()
        options.archive.classKeys = ["NotesApp.LegacyNote": ["content": "body"]]
        let error = #expect(throws: DecantError.self) { try ArchiveReader(contentsOf: Self.sample, options: options) }
        #expect(error?.code == .usage)
        #expect(error?.location?.keyPath == "content")
    }

    @Test func withoutAModelTheReaderAsksForOne() throws {
        let error = #expect(throws: DecantError.self) {
            try ArchiveReader(contentsOf: Self.sample, options: FormatOptions())
        }
        #expect(error?.code == .usage)
    }

    @Test func theFormatIsReadOnly() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("x.archive")
        let error = #expect(throws: DecantError.self) {
            try ArchiveFormat().makeWriter(at: output, model: LibraryFixture.model, options: FormatOptions())
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    // MARK: Values

    @Test func foundationValuesFitTheirAttributes() throws {
        let model = ArchiveTesting.shapeModel([
            ("origin", .string), ("frame", .string), ("span", .string), ("name", .string), ("id", .uuid),
            ("link", .uri), ("when", .date), ("bytes", .binary), ("count", .integer16),
            ("ratio", .double),
            ("flag", .boolean), ("price", .decimal), ("tags", .transformable), ("size", .string),
        ])
        let uuid = UUID()
        let data = try ArchiveTesting.shapeArchive { writer in
            let point = writer.addObject(
                className: "NSValue",
                fields: ["NS.special": 1, "NS.pointval": writer.addString("{1, 2}").uid])
            let rect = writer.addObject(
                className: "NSValue",
                fields: ["NS.special": 3, "NS.rectval": writer.addString("{{0, 0}, {10, 20}}").uid])
            let range = writer.addObject(
                className: "NSValue",
                fields: ["NS.special": 4, "NS.rangeval.location": 3, "NS.rangeval.length": 5])
            let size = writer.addObject(
                className: "NSValue",
                fields: ["NS.special": 2, "NS.sizeval": writer.addString("{3, 4}").uid])
            let name = writer.addObject(
                className: "NSMutableString", classes: ["NSMutableString", "NSString", "NSObject"],
                fields: ["NS.string": "circle"])
            let id = writer.addObject(
                className: "NSUUID",
                fields: ["NS.uuidbytes": .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })])
            let link = writer.addObject(
                className: "NSURL",
                fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": "https://example.com/a"])
            let when = writer.addObject(className: "NSDate", fields: ["NS.time": 12.5])
            let bytes = writer.addObject(
                className: "NSMutableData", classes: ["NSMutableData", "NSData", "NSObject"],
                fields: ["NS.data": .data(Data([1, 2, 3]))])
            let tags = writer.addArray([writer.addString("red").uid, writer.addString("round").uid])
            return [
                "origin": point.uid, "frame": rect.uid, "span": range.uid, "name": name.uid, "id": id.uid,
                "link": link.uid, "when": when.uid, "bytes": bytes.uid, "count": 7, "ratio": 0.5,
                "flag": true,
                "price": 9.25, "tags": tags.uid, "size": size.uid,
            ]
        }
        let records = try ArchiveTesting.records(
            data, options: FormatOptions(bundle: ArchiveTesting.bundle(model)))
        let shape = try #require(records["Shape"]?.first)
        func value(_ name: String) -> Value? { ArchiveTesting.value(name, of: shape, in: model) }
        #expect(value("origin") == .string("{1, 2}"))
        #expect(value("frame") == .string("{{0, 0}, {10, 20}}"))
        #expect(value("span") == .string("{3, 5}"))
        #expect(value("size") == .string("{3, 4}"))
        #expect(value("name") == .string("circle"))
        #expect(value("id") == .uuid(uuid))
        #expect(value("link") == .uri("https://example.com/a"))
        #expect(value("when") == .date(Date(timeIntervalSinceReferenceDate: 12.5)))
        #expect(value("bytes") == .data(Data([1, 2, 3])))
        #expect(value("count") == .integer(7))
        #expect(value("ratio") == .double(0.5))
        #expect(value("flag") == .bool(true))
        #expect(value("price") == .decimal(Decimal(9.25)))
        // A collection for a transformable attribute is archived on its own, as Core Data's transformer would.
        guard case .transformable(let archived)? = value("tags") else {
            Issue.record("tags is not transformable: \(String(describing: value("tags")))")
            return
        }
        let nested = try KeyedArchive(data: archived)
        #expect(try nested.decodeRootTree() == .array([.string("red"), .string("round")]))
    }

    @Test func keysMatchAsJSONKeysDo() throws {
        let model = ArchiveTesting.shapeModel([
            ("createdAt", .integer64), ("title", .string), ("body", .string),
        ])
        let data = try ArchiveTesting.shapeArchive { _ in
            ["created_at": 5, "TITLE": "round", "text": "renamed", "$0": "unkeyed"]
        }
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.archive.classKeys = ["Shape": ["text": "body"]]
        var reader = try ArchiveReader(data: data, path: "shape.archive", options: options)
        let shape = try #require(try ArchiveTesting.readAll(&reader)["Shape"]?.first)
        #expect(shape.values == [.string("renamed"), .integer(5), .string("round")])
        #expect(reader.diagnostics.count == 1)
        #expect(reader.diagnostics.first?.location?.keyPath == "$0")
    }

    @Test(
        "A value that does not fit its attribute names the object and key",
        arguments: [
            ("count", AttributeType.integer16, PropertyListValue.integer(70_000)),
            ("count", .integer32, .string("many")),
            ("when", .date, .integer(3)),
            ("flag", .boolean, .integer(2)),
            ("name", .string, .integer(1)),
            ("id", .uuid, .string("not a uuid")),
        ])
    func mismatchNamesObjectAndKey(key: String, type: AttributeType, value: PropertyListValue) throws {
        let model = ArchiveTesting.shapeModel([(key, type)])
        let data = try ArchiveTesting.shapeArchive { _ in [key: value] }
        let error = #expect(throws: DecantError.self) {
            try ArchiveTesting.records(data, options: FormatOptions(bundle: ArchiveTesting.bundle(model)))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[1]")
        #expect(error?.location?.keyPath == key)
        #expect(error?.location?.entity == "Shape")
    }

    // MARK: Relationships, identity, cycles

    /// A library archive: a shelf (an app class mapped by name) whose ordered books point back at it (a cycle),
    /// one author shared by two books, a snake_case key, and inverse sides left for the reader to fill.
    static func libraryArchive() throws -> Data {
        var writer = KeyedArchiveWriter()
        let shelf = writer.reserveObject()
        let dune = writer.reserveObject()
        let ebook = writer.reserveObject()
        let author = writer.addObject(
            className: "Author", fields: ["name": writer.addString("Frank").uid])
        let tag = writer.addObject(className: "MyApp.Tag", fields: ["name": "classic"])
        let authors = writer.addArray([author.uid], className: "NSSet")
        writer.setObject(
            dune, className: "MyApp.LegacyBook",
            fields: [
                "title": writer.addString("Dune").uid, "shelf": shelf.uid, "authors": authors.uid,
                "tags": writer.addArray([tag.uid]).uid, "pages": 412,
            ])
        writer.setObject(
            ebook, className: "EBook", classes: ["EBook", "MyApp.LegacyBook", "NSObject"],
            fields: [
                "title": writer.addString("Dune Messiah").uid, "file_size": 1_000_000,
                "authors": writer.addArray([author.uid], className: "NSMutableSet").uid,
            ])
        let books = writer.addObject(
            className: "NSOrderedSet", classes: ["NSOrderedSet", "NSObject"],
            fields: ["NS.object.0": ebook.uid, "NS.object.1": dune.uid])
        writer.setObject(
            shelf, className: "MyApp.LegacyShelf", fields: ["label": "Fiction", "books": books.uid])
        let root = writer.addArray([shelf.uid, dune.uid, dune.uid])
        return try writer.encodedData(root: root)
    }

    static var libraryOptions: FormatOptions {
        var options = FormatOptions(bundle: LibraryFixture.bundle)
        options.archive.classEntities = ["LegacyShelf": "Shelf", "MyApp.LegacyBook": "Book"]
        return options
    }

    @Test func relationshipsSharedObjectsAndCycles() throws {
        let model = LibraryFixture.model
        let records = try ArchiveTesting.records(Self.libraryArchive(), options: Self.libraryOptions)
        #expect(
            records.mapValues(\.count) == ["Shelf": 1, "Book": 1, "EBook": 1, "Author": 1, "Tag": 1])
        let shelf = try #require(records["Shelf"]?.first)
        let book = try #require(records["Book"]?.first)
        let ebook = try #require(records["EBook"]?.first)
        let author = try #require(records["Author"]?.first)
        // Ordered to-many in archive order, with the sub-entity named.
        #expect(
            ArchiveTesting.relationship("books", of: shelf, in: model)
                == .toMany([ebook.reference, book.reference]))
        // Explicit to-one (a cycle back to the shelf) and the inverse side filled in for the e-book.
        #expect(ArchiveTesting.relationship("shelf", of: book, in: model) == .toOne(shelf.reference))
        #expect(ArchiveTesting.relationship("shelf", of: ebook, in: model) == .toOne(shelf.reference))
        // One author shared by two books is one object, and its inverse lists both.
        #expect(
            ArchiveTesting.relationship("books", of: author, in: model)
                == .toMany([book.reference, ebook.reference]))
        #expect(ArchiveTesting.value("fileSize", of: ebook, in: model) == .integer(1_000_000))
        #expect(ArchiveTesting.value("pages", of: book, in: model) == .integer(412))
        #expect(book.id == .external("2"))
    }

    /// Objects nothing can refer to are anonymous (a store writer need not remember their archive index, which is
    /// unique anyway); objects of an entity a relationship points to keep an id references resolve to.
    @Test func objectsNothingRefersToAreAnonymous() throws {
        func anonymity(_ reader: ArchiveReader) throws -> [String: [Bool]] {
            let first = reader.model.entities[0].name
            var batch = RecordBatch(layout: try ArchiveTesting.layout(of: first, in: reader.model))
            var result: [String: [Bool]] = [:]
            while try reader.nextBatch(into: &batch) {
                result[batch.layout.entityName, default: []] += (0..<batch.count).map(batch.isAnonymous)
            }
            return result
        }
        let notes = try anonymity(try ArchiveReader(contentsOf: Self.sample, options: try Self.notesOptions()))
        #expect(notes == ["Note": [Bool](repeating: true, count: 5)])
        let library = try anonymity(
            try ArchiveReader(data: Self.libraryArchive(), path: "test.archive", options: Self.libraryOptions))
        #expect(library.count == 5)
        #expect(library.values.allSatisfy { $0.allSatisfy { !$0 } }, "\(library)")
    }

    @Test func aReferenceToAnUnmappedClassNamesObjectAndKey() throws {
        var options = Self.libraryOptions
        options.archive.classEntities["Tag"] = ""
        options.archive.classEntities["MyApp.Tag"] = ""
        let error = #expect(throws: DecantError.self) {
            try ArchiveTesting.records(Self.libraryArchive(), options: options)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[2]")
        #expect(error?.location?.keyPath == "tags")
    }
}
