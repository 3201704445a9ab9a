import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Damaged and hostile archives fail with `.malformedInput` naming the object and key, never a crash or a hang;
/// every archive of the corpus surveys.
@Suite("Malformed keyed archives")
struct ArchiveMalformedTests {
    static let noteModel = ArchiveTesting.shapeModel([("content", .string)])

    static var options: FormatOptions {
        var options = FormatOptions(bundle: ArchiveTesting.bundle(noteModel))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        return options
    }

    /// The property list of a one-note archive, for editing.
    static func archive(_ note: PropertyListDictionary) -> PropertyListValue {
        [
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": .uid(1)],
            "$objects": [
                "$null", .dictionary(note),
                ["$classname": "LegacyNote", "$classes": ["LegacyNote", "NSObject"]],
                "text",
            ],
        ]
    }

    static func failure(_ propertyList: PropertyListValue) -> DecantError? {
        let data = BinaryPropertyListWriter().write(propertyList)
        do {
            _ = try ArchiveTesting.records(data, options: options)
        } catch let error as DecantError {
            // The survey of `decant inspect` fails the same way.
            #expect(throws: DecantError.self) { try ArchiveSurvey(data: data, path: "test.archive") }
            return error
        } catch {
            Issue.record("not a DecantError: \(error)")
        }
        return nil
    }

    @Test func aGoodNoteReads() throws {
        let data = BinaryPropertyListWriter().write(
            Self.archive(["$class": .uid(2), "content": .uid(3)]))
        let records = try ArchiveTesting.records(data, options: Self.options)
        #expect(records["Shape"]?.first?.values == [.string("text")])
    }

    @Test func aReferencePastTheEndNamesObjectAndKey() {
        let error = Self.failure(Self.archive(["$class": .uid(2), "content": .uid(99)]))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[1]")
        #expect(error?.location?.keyPath == "content")
    }

    @Test(
        "A $class that is not a class dictionary names the object",
        arguments: [PropertyListValue.uid(3), .uid(0), .uid(40), .string("LegacyNote")])
    func wrongClass(classValue: PropertyListValue) {
        let error = Self.failure(Self.archive(["$class": classValue, "content": .uid(3)]))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[1]")
        #expect(error?.location?.keyPath == "$class")
    }

    @Test func aBrokenClassChainNamesTheObject() {
        var propertyList = Self.archive(["$class": .uid(2), "content": .uid(3)])
        if case .dictionary(var top) = propertyList, case .array(var objects)? = top["$objects"] {
            objects[2] = ["$classname": "LegacyNote", "$classes": [1, 2]]
            top["$objects"] = .array(objects)
            propertyList = .dictionary(top)
        }
        let error = Self.failure(propertyList)
        #expect(error?.location?.object == "$objects[1]")
    }

    @Test func aCollectionThatContainsItselfFailsWhereItIsUsed() throws {
        var model = Self.noteModel
        model.entities[0].relationships = [
            Relationship(name: "links", destination: "Shape", toMany: true)
        ]
        var writer = KeyedArchiveWriter()
        let array = writer.reserveObject()
        writer.setObject(
            array, className: "NSMutableArray", classes: ["NSMutableArray", "NSArray", "NSObject"],
            fields: ["NS.objects": [array.uid]])
        let note = writer.addObject(className: "LegacyNote", fields: ["links": array.uid])
        let data = try writer.encodedData(root: note)
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        let error = #expect(throws: DecantError.self) {
            try ArchiveTesting.records(data, options: options)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[3]")
        #expect(error?.location?.keyPath == "links")
        // Surveying it looks one level into the array and stops.
        let survey = try ArchiveSurvey(data: data, path: "cycle.archive")
        #expect(
            survey.classes.first { $0.name == "LegacyNote" }?.keys.first?.kinds == ["array of array": 1])
        // The same cycle in a transformable attribute is archived as it is, cycle included.
        var transformable = Self.noteModel
        transformable.entities[0].attributes = [
            Attribute(name: "links", type: .transformable, isOptional: true)
        ]
        options.bundle = ArchiveTesting.bundle(transformable)
        let value = try ArchiveTesting.records(data, options: options)["Shape"]?.first?.values.first
        guard case .transformable(let bytes)? = value else {
            Issue.record("not transformable: \(String(describing: value))")
            return
        }
        let nested = try KeyedArchive(data: bytes)
        #expect(throws: DecantError.self) { try nested.decodeRootTree() }
        #expect(try nested.elements(nested.topValue(forKey: "root"))?.count == 1)
    }

    @Test func mutatedBytesFailCleanly() throws {
        let original = try Data(contentsOf: ArchiveReaderTests.sample)
        var options = try ArchiveReaderTests.notesOptions()
        options.archive.classEntities = ["LegacyNote": "Note"]
        var generator = SplitMix(seed: 8)
        var failures = 0
        for round in 0..<400 {
            var bytes = [UInt8](original)
            let changes = round < 200 ? 1 : 4
            for _ in 0..<changes {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(
                    truncatingIfNeeded: generator.next())
            }
            let data = Data(bytes)
            do {
                var reader = try ArchiveReader(data: data, path: "mutated.archive", options: options)
                _ = try ArchiveTesting.readAll(&reader)
                _ = try ArchiveSurvey(data: data, path: "mutated.archive")
            } catch let error as DecantError {
                #expect(error.code == .malformedInput || error.code == .unsupportedFormat, "\(error)")
                failures += 1
            }
        }
        #expect(failures > 0)
        // Truncated at every length: a clean error each time.
        for length in stride(from: 0, to: original.count, by: 7) {
            #expect(throws: DecantError.self) {
                try ArchiveReader(data: original.prefix(length), path: "short.archive", options: options)
            }
        }
    }

    /// Every file of the corpus that is a keyed archive: Foundation's fixtures, Notes blobs, compiled models.
    static let corpusArchives: [String] = Fixtures.corpusItems { url in
        guard ["archive", "plist", "bin", "mom", "cdm"].contains(url.pathExtension.lowercased()),
            let data = try? Data(contentsOf: url),
            let propertyList = try? PropertyListValue.decode(from: data)
        else { return false }
        return propertyList["$archiver"] != nil
    }.map(Fixtures.corpusRelativePath)

    @Test func theCorpusHasArchives() {
        #expect(Self.corpusArchives.count >= 50)
    }

    @Test("Every corpus archive surveys", arguments: corpusArchives)
    func corpusArchiveSurveys(relative: String) throws {
        let data = try Data(contentsOf: Fixtures.corpus(relative))
        let survey = try ArchiveSurvey(data: data, path: relative)
        #expect(survey.objectCount > 0)
        #expect(survey.classes.reduce(0) { $0 + $1.count } <= survey.objectCount)
        _ = try survey.mapping.jsonData()
    }
}

/// A small deterministic generator (SplitMix64) for reproducible mutations.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
