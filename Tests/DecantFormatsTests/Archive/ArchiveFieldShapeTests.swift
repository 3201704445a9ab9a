import DecantCore
@testable import DecantCodecs
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
        options.archive.classEntities = ["LegacyNote": "Note"]
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
        options.archive.classEntities = ["LegacyNote": "Note"]
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

/// Objects shaped like the one before are read straight from the bytes (``ArchiveRowDecoder``): the records are
/// exactly those of the full way, whatever the values.
@Suite("Keyed archives: records read straight from the bytes")
struct ArchiveRowDecoderTests {
    static let model: ObjectModel = {
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "content", type: .string, isOptional: true),
            Attribute(name: "score", type: .double, isOptional: true),
            Attribute(name: "count", type: .integer64, isOptional: true),
            Attribute(name: "flag", type: .boolean, isOptional: true),
            Attribute(name: "date", type: .date, isOptional: true),
            Attribute(name: "link", type: .uri, isOptional: true),
            Attribute(name: "blob", type: .binary, isOptional: true),
        ]
        return ObjectModel(versionName: "Notes", entities: [note])
    }()

    /// Reads `data` both ways; `straightRows` is how many records the first way read from the bytes.
    static func bothWays(_ data: Data) throws -> (straight: [Record], full: [Record], straightRows: Int) {
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.archive.classEntities = ["LegacyNote": "Note"]
        var straight = try ArchiveReader(data: data, path: "notes.archive", options: options)
        var full = try ArchiveReader(data: data, path: "notes.archive", options: options)
        full.readsRowsFromBytes = false
        let records = try ArchiveTesting.readAll(&straight)["Note"] ?? []
        return (records, try ArchiveTesting.readAll(&full)["Note"] ?? [], straight.rowsReadFromBytes)
    }

    @Test func everyKindOfValueReadsAsTheFullWayReadsIt() throws {
        var writer = KeyedArchiveWriter()
        let texts: [PropertyListValue] = [
            writer.addString("plain text").uid, writer.addString("naïve café ✓").uid, .string("inline"),
            .uid(0), writer.addValue(.string("$null")).uid, writer.addString("").uid,
        ]
        let numbers: [PropertyListValue] = [.real(1.5), .integer(-7), .real(-0.0), .integer(Int64.max)]
        let counts: [PropertyListValue] = [.integer(3), .bool(true), .real(12), .integer(Int64.min)]
        let flags: [PropertyListValue] = [.bool(false), .bool(true), .integer(1), .integer(0)]
        let links: [PropertyListValue] = [writer.addString("https://example.com/a").uid, .string("file:///b"), .uid(0)]
        let blobs: [PropertyListValue] = [.data(Data([1, 2, 3])), .data(Data()), .uid(0)]
        var notes: [PropertyListValue] = []
        for number in 0..<48 {
            let time: PropertyListValue = number % 5 == 4 ? .integer(Int64(number)) : .real(Double(number) * 1.25)
            let date = writer.addObject(className: "NSDate", classes: ["NSDate", "NSObject"], fields: ["NS.time": time])
            let note = writer.addObject(
                className: "App.LegacyNote",
                fields: [
                    "content": texts[number % texts.count], "score": numbers[number % numbers.count],
                    "count": counts[number % counts.count], "flag": flags[number % flags.count],
                    "date": number % 7 == 6 ? .uid(0) : date.uid, "link": links[number % links.count],
                    "blob": blobs[number % blobs.count],
                ])
            notes.append(note.uid)
        }
        let root = writer.addArray(notes)
        let (straight, full, straightRows) = try Self.bothWays(try writer.encodedData(root: root))
        #expect(straight.count == 48)
        // The first note goes the full way (and any the decoder is not sure of); the others are read from the bytes.
        #expect(straightRows >= 40)
        #expect(straight == full)
        #expect(ArchiveTesting.value("content", of: straight[1], in: Self.model) == .string("naïve café ✓"))
        #expect(ArchiveTesting.value("content", of: straight[4], in: Self.model) == .null)
        #expect(ArchiveTesting.value("count", of: straight[1], in: Self.model) == .integer(1))
        #expect(
            ArchiveTesting.value("date", of: straight[4], in: Self.model)
                == .date(Date(timeIntervalSinceReferenceDate: 4)))
    }

    @Test func textThatIsNotASCIIIsReadFromTheBytesToo() throws {
        // Binary property lists hold any text that is not ASCII in UTF-16, as Foundation's archiver writes every
        // such string: those read from the bytes as well (a lone surrogate goes the full way), exactly as the full
        // way reads them.
        var writer = KeyedArchiveWriter()
        let texts = ["línea", "日本, \"quoted\"", "naïve café ✓", "emoji 😀 pair", "plain"]
        var notes: [PropertyListValue] = []
        for number in 0..<50 {
            let content: PropertyListValue =
                number == 20 ? .uid(0) : writer.addString(texts[number % texts.count] + " \(number)").uid
            notes.append(writer.addObject(className: "LegacyNote", fields: ["content": content]).uid)
        }
        let root = writer.addArray(notes)
        let (straight, full, straightRows) = try Self.bothWays(try writer.encodedData(root: root))
        #expect(straight == full)
        #expect(straightRows >= 45, "\(straightRows) of 50 read from the bytes")
        #expect(ArchiveTesting.value("content", of: straight[1], in: Self.model) == .string("日本, \"quoted\" 1"))
        #expect(ArchiveTesting.value("content", of: straight[3], in: Self.model) == .string("emoji 😀 pair 3"))
        #expect(ArchiveTesting.value("content", of: straight[20], in: Self.model) == .null)
    }

    @Test func utf16IsValidOnlyWithPairedSurrogates() {
        func valid(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(ArchiveRowDecoder.isValidUTF16BigEndian) }
        #expect(valid([0x00, 0x61, 0x65, 0xE5]))
        #expect(valid([0xD8, 0x3D, 0xDE, 0x00]))
        #expect(!valid([0xD8, 0x3D, 0x00, 0x61]))
        #expect(!valid([0xDE, 0x00]))
        #expect(!valid([0xD8, 0x3D]))
    }

    @Test func aValueThatDoesNotFitFailsAsTheFullWayFails() throws {
        // The third note's date is a text, the fourth's count a text: the full way names each.
        for broken in [2, 3] {
            var writer = KeyedArchiveWriter()
            var notes: [PropertyListValue] = []
            for number in 0..<5 {
                let time: PropertyListValue = number == 2 && broken == 2 ? .string("soon") : .real(Double(number))
                let date = writer.addObject(className: "NSDate", fields: ["NS.time": time])
                let count: PropertyListValue = number == 3 && broken == 3 ? .string("many") : .integer(1)
                notes.append(
                    writer.addObject(className: "LegacyNote", fields: ["date": date.uid, "count": count]).uid)
            }
            let root = writer.addArray(notes)
            let data = try writer.encodedData(root: root)
            let straight = #expect(throws: DecantError.self) { try Self.bothWays(data) }
            var options = FormatOptions(bundle: ArchiveTesting.bundle(Self.model))
            options.archive.classEntities = ["LegacyNote": "Note"]
            let reader = try ArchiveReader(data: data, path: "notes.archive", options: options)
            reader.readsRowsFromBytes = false
            var full = reader
            let fullError = #expect(throws: DecantError.self) { try ArchiveTesting.readAll(&full) }
            #expect(straight?.code == .malformedInput)
            #expect(straight?.description == fullError?.description)
        }
    }
}

/// An app's note class, archived by Foundation's own NSKeyedArchiver (swift-corelibs-foundation) as an app would
/// (as `DecantFormatsTests.LegacyNote`, which `LegacyNote` maps by the part after its last dot).
final class LegacyNote: NSObject, NSCoding {
    let content: String?
    let date: Date
    let count: Int
    let flag: Bool
    let score: Double

    init(content: String?, date: Date, count: Int, flag: Bool, score: Double) {
        (self.content, self.date, self.count, self.flag, self.score) = (content, date, count, flag, score)
    }

    func encode(with coder: NSCoder) {
        coder.encode(content, forKey: "content")
        coder.encode(date, forKey: "date")
        coder.encode(count, forKey: "count")
        coder.encode(flag, forKey: "flag")
        coder.encode(score, forKey: "score")
    }

    init?(coder: NSCoder) {
        content = coder.decodeObject(forKey: "content") as? String
        guard let date = coder.decodeObject(forKey: "date") as? Date else { return nil }
        self.date = date
        count = coder.decodeInteger(forKey: "count")
        flag = coder.decodeBool(forKey: "flag")
        score = coder.decodeDouble(forKey: "score")
    }
}

extension ArchiveRowDecoderTests {
    @Test func objectsFoundationWroteWithTheirKeysInAnyOrderAreReadFromTheBytes() throws {
        // Foundation's archiver writes each object's keys in the order of that object's own hash table, so the
        // objects of a class share their key objects but not their order (nor do their NSDate objects): those are
        // read from the bytes too, exactly as the full way reads them. Texts hold quotes, commas and multi-byte
        // characters; one note in fifty has no content.
        let count = 300
        var notes: [LegacyNote] = []
        for number in 1...count {
            let text: String? =
                number % 50 == 0 ? nil : number % 2 == 0 ? "\"Café\", à \(number) h 🎉" : "\"milk\", \(number)"
            let date = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number) * 13.25)
            notes.append(
                LegacyNote(
                    content: text, date: date, count: number, flag: number % 7 == 0, score: Double(number) / 4))
        }
        let data = try NSKeyedArchiver.archivedData(withRootObject: notes as NSArray, requiringSecureCoding: false)
        // The input has the shape this is about: the notes' keys come in more than one order, and each note has key
        // strings of its own (Foundation on Linux writes them anew for every dictionary).
        let archive = try KeyedArchive(data: data, path: "notes.archive")
        let noteShapes: [(index: Int, shape: KeyedArchive.FieldShape)] = (0..<archive.objectCount).compactMap { index in
            archive.fieldShape(at: index).map { (index, $0) }
        }.filter { note in note.shape.keyReferences.count == 6 }
        #expect(noteShapes.count == count)
        let keyOrders = Set(try noteShapes.map { note in try archive.object(at: note.index).fields.keys })
        #expect(keyOrders.count > 1)
        #expect(Set(noteShapes.map { note in note.shape.keyReferences }).count == count)

        let (straight, full, straightRows) = try Self.bothWays(data)
        try #require(straight.count == count)
        #expect(straight == full)
        // Only the first note and its first date go the full way (each order of keys is a permutation of theirs).
        #expect(straightRows == count - 1, "\(straightRows) of \(count) read from the bytes")
        #expect(ArchiveTesting.value("content", of: straight[1], in: Self.model) == .string("\"Café\", à 2 h 🎉"))
        #expect(ArchiveTesting.value("content", of: straight[2], in: Self.model) == .string("\"milk\", 3"))
        #expect(ArchiveTesting.value("content", of: straight[49], in: Self.model) == .null)
        #expect(ArchiveTesting.value("count", of: straight[6], in: Self.model) == .integer(7))
        #expect(ArchiveTesting.value("flag", of: straight[6], in: Self.model) == .bool(true))
        #expect(ArchiveTesting.value("score", of: straight[9], in: Self.model) == .double(2.5))
        #expect(
            ArchiveTesting.value("date", of: straight[count - 1], in: Self.model)
                == .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(count) * 13.25)))
    }
}

extension ArchiveRowDecoderTests {
    @Test func utf16TranscodesAsTheStandardLibraryDoes() {
        // The fast path's own transcoder, against the standard library's, on every length of UTF-8 sequence.
        let texts = [
            "", "a", "café", "日本, \"quoted\"", "emoji 😀 pair", "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
        ]
        for text in texts {
            let bytes = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            let utf8 = bytes.withUnsafeBytes { raw in
                [UInt8](unsafeUninitializedCapacity: max(3 * text.utf16.count, 1)) { buffer, count in
                    count = ArchiveRowDecoder.transcodeUTF16BigEndian(raw, into: buffer)
                }
            }
            #expect(utf8 == Array(text.utf8), "\(text)")
        }
    }
}
