import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// A model's default values are parsed once, when the model loads (``AttributeDefault``), and inference, the
/// compiled model a store keeps in `Z_MODELCACHE` and the CSV reader all take that one value.
@Suite("Default values")
struct DefaultValueTests {
    static func parsed(_ text: String, _ type: AttributeType) -> AttributeDefault {
        var attribute = Attribute(name: "a", type: type)
        attribute.defaultValue = text
        return attribute.parsedDefaultValue
    }

    @Test(
        "a Boolean default reads as NSString's boolValue",
        arguments: [
            ("YES", true), ("NO", false), ("True", true), ("true", true), ("t", true), ("1", true), ("+01", true),
            ("yes", true), ("false", false), ("0", false), ("False", false), ("maybe", false), ("", false),
        ])
    func booleans(_ text: String, _ expected: Bool) {
        #expect(Self.parsed(text, .boolean) == .value(.bool(expected)), "\(text)")
    }

    @Test(
        "an integer default reads as NSString's integerValue: digits as far as they go, none give 0 (section 1.9)",
        arguments: [
            ("12", Int64(12)), (" -3 ", -3), ("+7", 7), ("\t\n42", 42), ("1.5", 1), ("-1.5", -1), ("2.0", 2),
            ("7.9", 7), ("1e3", 1), ("1e30", 1), ("-1e19", -1), ("nan", 0), ("inf", 0), ("abc", 0), ("0x10", 0),
            ("", 0), ("YES", 0), ("NO", 0), ("12abc", 12), ("- 3", 0), ("--3", 0),
            ("9223372036854775807", .max), ("9223372036854775808", .max), ("99999999999999999999999", .max),
            ("-9223372036854775808", .min), ("-9223372036854775809", .min), ("-99999999999999999999999", .min),
        ])
    func integers(_ text: String, _ expected: Int64) {
        for type in [AttributeType.integer16, .integer32, .integer64] {
            let parsed = Self.parsed(text, type)
            // Xcode compiles every such text; none is a problem.
            #expect(parsed == .value(.integer(expected)), "\(text)")
        }
    }

    @Test func otherTypes() throws {
        #expect(Self.parsed("2.5", .double) == .value(.double(2.5)))
        #expect(Self.parsed("-inf", .float) == .value(.double(-.infinity)))
        #expect(Self.parsed("0x1p3", .double).problem != nil)
        #expect(Self.parsed("4.5", .decimal) == .value(.decimal(try #require(Decimal(string: "4.5")))))
        // Decimal(string:) alone reads "1abc" as 1.
        #expect(Self.parsed("1abc", .decimal).problem != nil)
        #expect(Self.parsed("388411200", .date) == .value(.date(Date(timeIntervalSinceReferenceDate: 388_411_200))))
        #expect(
            Self.parsed("2013-04-23 12:00:00 +0000", .date)
                == .value(.date(Date(timeIntervalSinceReferenceDate: 388_411_200))))
        #expect(Self.parsed("soon", .date).problem != nil)
        #expect(Self.parsed("not-a-uuid", .uuid).problem != nil)
        #expect(Self.parsed(" milk ", .string) == .value(.string(" milk ")))
        #expect(Self.parsed("AAAA", .binary) == AttributeDefault.none)
    }

    @Test func theParsedValueFollowsTheTypeAndTheText() {
        var attribute = Attribute(name: "a", type: .string)
        attribute.defaultValue = "1.5"
        #expect(attribute.defaultLiteral == .string("1.5"))
        attribute.type = .integer32
        #expect(attribute.defaultLiteral == .integer(1))
        attribute.defaultValue = nil
        #expect(attribute.defaultLiteral == nil && attribute.defaultProblem == nil)
        // A nan default does not make the attribute unequal to itself.
        var real = Attribute(name: "r", type: .double)
        real.defaultValue = "nan"
        #expect(real == real)
    }

    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">\n"

    @Test(
        "a model source's default that is no value of its type is a located model error",
        arguments: [
            ("Double", "abc", "a number"), ("Decimal", "1,5", "a decimal"),
            ("UUID", "x", "a UUID"), ("Date", "tomorrow", "seconds since 2001-01-01"),
        ])
    func locatedModelError(_ type: String, _ text: String, _ expected: String) throws {
        let body = "<entity name=\"Note\">\n<attribute name=\"count\" attributeType=\"\(type)\" defaultValueString=\"\(text)\"/>\n</entity>\n</model>"
        let error = try #require(throws: DecantError.self) {
            try XcdatamodelReader.parse(Data((Self.header + body).utf8), path: "Notes.xcdatamodel/contents")
        }
        #expect(error.code == .malformedInput && error.code.exitCode == 65)
        #expect(error.location?.path == "Notes.xcdatamodel/contents" && error.location?.line == 4)
        #expect(error.location?.entity == "Note" && error.location?.keyPath == "count")
        #expect(error.message.contains("\"\(text)\"") && error.message.contains(expected), "\(error)")
    }

    /// wire's `Conversation.mutedStatus` and apptentive's `pendingState`: an Integer 32 attribute whose
    /// `defaultValueString` is `"NO"` or `"YES"` loads, and the compiled model Decant writes (a `.mom`, a store's
    /// `Z_MODELCACHE`) holds `NSDefaultValue` 0, as Apple's compiler writes it.
    @Test(arguments: ["YES", "NO"])
    func aBooleanWordOnAnIntegerCompilesToZero(_ text: String) throws {
        let body = "<entity name=\"Message\">\n<attribute name=\"pendingState\" optional=\"YES\" attributeType=\"Integer 32\" "
            + "defaultValueString=\"\(text)\" usesScalarValueType=\"NO\"/>\n</entity>\n</model>"
        let model = try XcdatamodelReader.parse(Data((Self.header + body).utf8), path: "Messages.xcdatamodel/contents")
        let attribute = try #require(model.entity(named: "Message")?.attributes.first)
        #expect(attribute.defaultValue == text && attribute.defaultLiteral == .integer(0))
        // The archive itself: NSDefaultValue is the NSNumber 0 (an integer: a string there would not read as one).
        let archive = try KeyedArchive(data: try ArchivedModelEncoder.encode(model))
        let root = try #require(try archive.rootObject())
        let entity = try #require(try archive.stringKeyedEntries(forKey: "NSEntities", in: root)?.first)
        let entityObject = try #require(try archive.object(for: entity.value))
        let property = try #require(try archive.stringKeyedEntries(forKey: "NSProperties", in: entityObject)?.first)
        let propertyObject = try #require(try archive.object(for: property.value))
        #expect(try archive.integer(forKey: "NSDefaultValue", in: propertyObject) == 0)
        let decoded = try ArchivedModelDecoder.decode(archive)
        #expect(decoded.entity(named: "Message")?.attributes.first?.defaultLiteral == .integer(0))
    }

    /// v1 `Note{title}`; v2 adds `pinned` (Boolean, default "True") and `count` (Integer 32, default "1.5").
    static let versions: (ObjectModel, ObjectModel) = {
        let title = Attribute(name: "title", type: .string, isOptional: true)
        var v1 = Entity(name: "Note")
        v1.attributes = [title]
        var pinned = Attribute(name: "pinned", type: .boolean)
        pinned.defaultValue = "True"
        var count = Attribute(name: "count", type: .integer32)
        count.defaultValue = "1.5"
        var v2 = Entity(name: "Note")
        v2.attributes = [count, pinned, title]
        return (
            ObjectModel(versionName: "Notes", entities: [v1], versionIdentifiers: ["1"]),
            ObjectModel(versionName: "Notes 2", entities: [v2], versionIdentifiers: ["2"])
        )
    }()

    @Test func inferenceTheCompiledModelAndTheCSVReaderAgree() throws {
        let (v1, v2) = Self.versions
        let expected: [String: Value] = ["pinned": .bool(true), "count": .integer(1)]

        // Inference: the added attributes start at their defaults.
        let inferred = MappingInference.infer(from: v1, to: v2)
        #expect(inferred.problems.isEmpty)
        let note = try #require(inferred.mapping.entityMappings.first { $0.destinationEntity == "Note" })
        for (name, value) in expected {
            let mapping = try #require(note.attributes.first { $0.name == name })
            #expect(mapping.expression == .literal(value), "\(name)")
        }

        // The compiled model (Z_MODELCACHE's form): the archived NSDefaultValue decodes to the same value.
        let decoded = try ArchivedModelDecoder.decode(try ArchivedModelEncoder.encode(v2))
        let attributes = try #require(decoded.entity(named: "Note")?.attributes)
        for (name, value) in expected {
            #expect(attributes.first { $0.name == name }?.defaultLiteral == value, "\(name)")
        }

        // The CSV reader: columns the file lacks take the defaults.
        let folder = try CSVTestFiles.folder(["Note.csv": "_id,title\np1,milk\n"])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let records = try CSVTestFiles.read(folder, options: FormatOptions(bundle: CSVTestFiles.bundle(v2)))
        let record = try #require(records["Note"]?.first)
        // Layout order: count, pinned, title.
        #expect(record.values == [.integer(1), .bool(true), "milk"])
    }
}

/// The corpus's defaults: every attribute default of every Xcode model source reads as a value of its type, and
/// the compiled model Decant writes into `Z_MODELCACHE` gives back that value.
@Suite("Default values in the corpus")
struct CorpusDefaultValueTests {
    @Test func everyDefaultSurvivesTheCompiledModel() throws {
        var checked = 0
        for url in Fixtures.corpusItems(where: { $0.pathExtension == "xcdatamodel" }) {
            let contents = url.appendingPathComponent("contents")
            guard FileManager.default.fileExists(atPath: contents.path) else { continue }  // Xcode 3 models
            let model = try XcdatamodelReader.read(contentsOf: contents, versionName: "v")
            let compiled = try ArchivedModelDecoder.decode(try ArchivedModelEncoder.encode(model))
            for entity in model.entities {
                for attribute in entity.attributes where attribute.defaultValue != nil {
                    let relative = Fixtures.corpusRelativePath(url)
                    let place = "\(relative): \(entity.name).\(attribute.name)"
                    #expect(attribute.defaultLiteral != nil, "\(place)")
                    let back = compiled.entity(named: entity.name)?.attributes.first { $0.name == attribute.name }
                    #expect(back?.defaultLiteral == attribute.defaultLiteral, "\(place)")
                    checked += 1
                }
            }
        }
        // About 250 defaults in the corpus's model sources (Integer 0 and 2, Boolean YES and NO, dates, decimals…).
        #expect(checked > 200)
    }
}
