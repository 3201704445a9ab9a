import DecantCore
@testable import DecantFormats
import Foundation
import Testing

/// Objects of a class share their key objects, so the reader reads most objects' values by position
/// (``KeyedArchive/fieldValues(at:shapedLike:)``); every object that differs, or fails, goes the full way.
@Suite("Keyed archives: values read by position")
struct ArchiveFieldShapeTests {
    static let model: ObjectModel = {
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "content", type: .string, isOptional: true),
            Attribute(name: "wordCount", type: .integer32, isOptional: true),
        ]
        return ObjectModel(versionName: "Notes", entities: [note])
    }()

    static var options: FormatOptions {
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.classEntities = ["LegacyNote": "Note"]
        return options
    }

    /// Notes 1…6; `fields` may change one note's fields (by its number).
    static func archive(_ fields: [Int: PropertyListDictionary] = [:]) throws -> (Data, [Int]) {
        var writer = KeyedArchiveWriter()
        var notes: [PropertyListValue] = []
        var indices: [Int] = []
        for number in 1...6 {
            let note = writer.addObject(
                className: "LegacyNote",
                fields: fields[number]
                    ?? ["content": writer.addString("note \(number)").uid, "wordCount": .integer(Int64(number))])
            notes.append(note.uid)
            indices.append(note.index)
        }
        let root = writer.addArray(notes)
        return (try writer.encodedData(root: root), indices)
    }

    @Test func objectsOfAClassShareTheirShapeAndReadTheSameValues() throws {
        let (data, indices) = try Self.archive()
        let archive = try KeyedArchive(data: data, path: "notes.archive")
        let shape = try #require(archive.fieldShape(at: indices[0]))
        for index in indices {
            let object = try archive.object(at: index)
            #expect(archive.fieldShape(at: index) == shape)
            #expect(archive.fieldValues(at: index, shapedLike: shape) == object.fields.values)
        }
        let records = try ArchiveTesting.records(data, options: Self.options)["Note"] ?? []
        let contents = records.map { ArchiveTesting.value("content", of: $0, in: Self.model) }
        #expect(contents == (1...6).map { Value.string("note \($0)") })
    }

    @Test func anObjectWithOtherKeysIsReadTheFullWay() throws {
        // Note 3 lists its keys in another order, note 5 has one more key.
        let (data, indices) = try Self.archive([
            3: ["wordCount": .integer(33), "content": .string("three")],
            5: ["content": .string("five"), "wordCount": .integer(55), "mood": .string("happy")],
        ])
        let archive = try KeyedArchive(data: data, path: "notes.archive")
        let shape = try #require(archive.fieldShape(at: indices[0]))
        #expect(archive.fieldValues(at: indices[2], shapedLike: shape) == nil)
        #expect(archive.fieldValues(at: indices[4], shapedLike: shape) == nil)
        let records = try ArchiveTesting.records(data, options: Self.options)["Note"] ?? []
        #expect(
            records.map { ArchiveTesting.value("wordCount", of: $0, in: Self.model) }
                == [.integer(1), .integer(2), .integer(33), .integer(4), .integer(55), .integer(6)])
        #expect(records.map { ArchiveTesting.value("content", of: $0, in: Self.model) }[4] == .string("five"))
    }

    @Test func referencedObjectsOfOneShapeResolveAsTheFullWay() throws {
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "date", type: .date, isOptional: true)]
        let model = ObjectModel(versionName: "Dated", entities: [note])
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.classEntities = ["LegacyNote": "Note"]
        func archive(_ dates: [PropertyListDictionary]) throws -> Data {
            var writer = KeyedArchiveWriter()
            var notes: [PropertyListValue] = []
            for fields in dates {
                let date = writer.addObject(className: "NSDate", fields: fields)
                notes.append(writer.addObject(className: "LegacyNote", fields: ["date": date.uid]).uid)
            }
            let root = writer.addArray(notes)
            return try writer.encodedData(root: root)
        }
        // The third date has one more key, the fourth holds an integer: each is read the full way, and all agree.
        let dates: [PropertyListDictionary] = [
            ["NS.time": .real(1)], ["NS.time": .real(2)], ["NS.time": .real(3), "NS.note": .string("x")],
            ["NS.time": .integer(4)], ["NS.time": .real(5)],
        ]
        let records = try ArchiveTesting.records(try archive(dates), options: options)["Note"] ?? []
        #expect(
            records.map { ArchiveTesting.value("date", of: $0, in: model) }
                == (1...5).map { Value.date(Date(timeIntervalSinceReferenceDate: Double($0))) })
        // A date of the same shape whose time is a text fails as the full way fails, at the date's own key.
        let broken = try archive([["NS.time": .real(1)], ["NS.time": .real(2)], ["NS.time": .string("soon")]])
        let error = #expect(throws: DecantError.self) { try ArchiveTesting.records(broken, options: options) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.keyPath == "NS.time")
        #expect(error?.location?.object?.hasPrefix("$objects[") == true)
    }

    @Test func aValueThatDoesNotFitFailsNamingItsObjectAndKey() throws {
        // Note 4 has the shape of the others, but a text where a number belongs.
        let (data, indices) = try Self.archive([4: ["content": .string("four"), "wordCount": .string("many")]])
        let error = #expect(throws: DecantError.self) { try ArchiveTesting.records(data, options: Self.options) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "$objects[\(indices[3])]")
        #expect(error?.location?.keyPath == "wordCount")
    }
}
