import DecantCore
@testable import DecantCodecs
import DecantTestSupport
import Foundation
import Testing

@testable import DecantFormats

/// The CSV writer spells fields straight into its record buffer (ids, references, integers, booleans, dates) and
/// scans for characters that need quoting eight bytes at a time: its files must be byte for byte what the general
/// path gives, each value through ``CSVValueText/format(_:as:in:)`` (or its id or reference description) and
/// quoted by the plain rule, in every dialect, including delimiters and null markers that are digits or letters.
@Suite("CSV field spelling")
struct CSVFieldSpellingTests {
    /// `Item{…every attribute type…, labels (ordered to-many without inverse), owner} → Owner{name, items}`.
    static let model: ObjectModel = {
        var owner = Entity(name: "Owner")
        owner.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        owner.relationships = [Relationship(name: "items", destination: "Item", inverse: "owner", toMany: true)]
        var item = Entity(name: "Item")
        item.attributes = [
            Attribute(name: "aText", type: .string, isOptional: true),
            Attribute(name: "bSmall", type: .integer16, isOptional: true),
            Attribute(name: "cBig", type: .integer64, isOptional: true),
            Attribute(name: "dFlag", type: .boolean, isOptional: true),
            Attribute(name: "eWhen", type: .date, isOptional: true),
            Attribute(name: "fReal", type: .double, isOptional: true),
            Attribute(name: "gPrice", type: .decimal, isOptional: true),
            Attribute(name: "hData", type: .binary, isOptional: true),
            Attribute(name: "iUUID", type: .uuid, isOptional: true),
            Attribute(name: "jLink", type: .uri, isOptional: true),
        ]
        var labels = Relationship(name: "labels", destination: "Owner", toMany: true)
        labels.isOrdered = true
        item.relationships = [labels, Relationship(name: "owner", destination: "Owner", inverse: "items")]
        return ObjectModel(versionName: "Items", entities: [item, owner], versionIdentifiers: ["1"])
    }()

    /// Texts that need quoting in some dialect and not in another, special bytes at every position of an 8-byte
    /// word and past it, multi-byte UTF-8, and a field longer than the writer's 64 KiB buffer.
    static let texts: [String] =
        [
            "", " ", "plain", " lead", "trail ", "\ttab", "tab\t", "a,b", "a;b", "a|b", "a\tb", "say \"hi\"", "\"",
            "\"\"", "two\r\nlines", "line\nfeed", "cr\r", "NULL", "\\N", "p1", "0", "true", "1", "é ✓ 日本",
            "línea, \"quoted\"", "Ünïcödé 日本 café naïve Grüße", "ab/cd", "2024-05-19T18:14:19Z", "x e y",
            String(repeating: "long, \"text\" ", count: 6000),
        ] + positional

    /// Each byte that needs quoting in some dialect at each of the first 18 positions of a 25-character text.
    static let positional: [String] = {
        var texts: [String] = []
        let base = Array("abcdefghijklmnopqrstuvwx")
        for special in [",", ";", "\t", "|", "\"", "\n", "\r", "p", "1", " ", "-", "/", "T", "é"] {
            for position in 0..<18 {
                var characters = base
                characters.insert(Character(special), at: position)
                texts.append(String(characters))
            }
        }
        return texts
    }()

    static let integers: [Int64] = [0, 1, -1, 9, 10, 11, 99, 100, -100, 1_234_567_890_123, .max, .min]
    static let dates: [Double] = [
        0, 737_835_259.25, 737_835_272.5, 700_000_000.123456, -1e9, -0.5, 0.1, 1.5e-7, 1e15, -1e15, .nan, .infinity,
        -0.0, 63_113_904_000,
    ]
    /// Dates of whole seconds, as SQLite keeps them (an integer cell): in range, before 2001, past year 9999.
    static let integerDates: [Int64] = [0, 737_835_259, -1_000_000_000, -63_113_904_000, 63_113_904_000, .max, .min]
    static let reals: [Double] = [0.1, 1e-5, 2.5, -2.5, .infinity, -.infinity, .nan, 123_456_789.125, 1e300]

    /// A batch of `count` items whose cells run through every kind each column can hold, the general path's rare
    /// cases (a boolean of 2, an integer in a date column, a real in an integer column, text in a decimal column)
    /// included.
    static func items(count: Int) throws -> RecordBatch {
        let layout = try #require(RecordLayout(entity: "Item", in: model))
        var batch = RecordBatch(layout: layout, entityNames: ["Item", "Owner"])
        for row in 0..<count {
            switch row % 23 {
            case 5: batch.beginRecord(id: .external("ext,\(row)"))
            case 11: batch.beginRecord(id: .primaryKey(-Int64(row)))
            case 17: batch.beginRecord(id: .external("p\(row)"))
            default: batch.beginRecord(id: .primaryKey(Int64(row + 1)))
            }
            // aText
            if row % 13 == 3 { batch.appendNull() } else { batch.appendText(texts[row % texts.count]) }
            // bSmall, cBig
            switch row % 7 {
            case 0: batch.appendNull()
            case 1: batch.appendReal(2.0)
            case 2: batch.appendReal(2.5)
            default: batch.appendInteger(integers[row % integers.count])
            }
            batch.appendInteger(integers[(row / 3) % integers.count])
            // dFlag
            switch row % 6 {
            case 0: batch.appendInteger(0)
            case 1: batch.appendInteger(1)
            case 2: batch.appendInteger(2)
            case 3: batch.appendInteger(-1)
            case 4: batch.appendReal(1)
            default: batch.appendNull()
            }
            // eWhen
            switch row % 9 {
            case 0: batch.appendInteger(integerDates[(row / 9) % integerDates.count] &+ Int64(row % 2))
            case 1: batch.appendNull()
            default: batch.appendReal(dates[row % dates.count] + (row % 4 == 0 ? Double(row) : 0))
            }
            // fReal
            if row % 5 == 0 { batch.appendInteger(Int64(row)) } else { batch.appendReal(reals[row % reals.count]) }
            // gPrice
            switch row % 4 {
            case 0: batch.appendInteger(Int64(row))
            case 1: batch.appendReal(Double(row) / 4)
            case 2: batch.appendText("12.\(row)")
            default: batch.appendNull()
            }
            // hData, iUUID, jLink
            batch.appendBlob((0..<(row % 9)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ row) })
            if row % 3 == 0 {
                batch.appendNull()
            } else {
                batch.appendBlob((0..<16).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ row) })
            }
            batch.appendText(row % 2 == 0 ? "https://example.com/\(row)?a=1,b=2" : "file:///p\(row)")
            // labels: 0 to 3 members, one of them by external id, or an entity outside the names now and then.
            var keys: [Int64] = []
            var entities: [Int32] = []
            for member in 0..<(row % 4) {
                keys.append(Int64(row * 3 + member) - 2)
                entities.append(member == 2 && row % 8 == 3 ? 9 : 1)
            }
            if row % 10 == 7 {
                batch.appendReferenceList([
                    ObjectReference(entity: "Owner", id: .external("o,\(row)")),
                    ObjectReference(entity: "Owner", id: .primaryKey(Int64(row))),
                ])
            } else {
                batch.appendReferenceList(primaryKeys: keys, entityIndices: entities)
            }
            // owner: by key, nil, a negative key, an entity outside the names, an external id, a list of one.
            switch row % 6 {
            case 0: batch.appendReference(primaryKey: Int64(row % 1000 + 1), entityIndex: 1)
            case 1: batch.appendNull()
            case 2: batch.appendReference(primaryKey: -Int64(row), entityIndex: 1)
            case 3: batch.appendReference(primaryKey: Int64(row), entityIndex: 7)
            case 4: batch.appendReference(ObjectReference(entity: "Owner", id: .external("owner \"\(row)\"")))
            default: batch.appendReferenceList(primaryKeys: [Int64(row)], entityIndices: [1])
            }
            batch.endRecord()
        }
        return batch
    }

    /// A field as the plain rule quotes it: quoted when empty, with the delimiter, a quote or a line break, spaces
    /// or tabs at either end, or equal to the null marker; nil as the marker or nothing.
    static func field(_ text: String?, _ dialect: CSVDialect) -> String {
        guard let text else { return dialect.nullMarker ?? "" }
        let bytes = Array(text.utf8)
        let blank: Set<UInt8> = [0x20, 0x09]
        let special: Set<UInt8> = [dialect.delimiter, 0x22, 0x0A, 0x0D]
        let quote =
            bytes.isEmpty || blank.contains(bytes[0]) || blank.contains(bytes[bytes.count - 1])
            || bytes.contains(where: special.contains) || text == dialect.nullMarker
        return quote ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    /// The files the general path gives for `batch`: the entity file's and the join file's header and rows.
    static func expected(_ batch: RecordBatch, _ dialect: CSVDialect) -> (
        entityHeader: String, entity: String, labelsHeader: String, labels: String
    ) {
        let separator = dialect.delimiterText
        func line(_ fields: [String?]) -> String {
            fields.map { field($0, dialect) }.joined(separator: separator) + "\r\n"
        }
        let layout = batch.layout
        var entity = ""
        var labels = ""
        for row in 0..<batch.count {
            var fields: [String?] = [batch.id(at: row).description]
            for (index, attribute) in layout.attributes.enumerated() {
                fields.append(CSVValueText.format(batch.cell(row: row, column: index), as: attribute.type, in: batch))
            }
            let list = batch.cell(row: row, column: layout.attributes.count)
            let start = Int(list.integer)
            for (position, member) in batch.references[start..<start + Int(list.length)].enumerated() {
                labels += line([
                    batch.id(at: row).description, batch.reference(of: member).description, String(position + 1),
                ])
            }
            let owner = batch.cell(row: row, column: layout.attributes.count + 1)
            switch owner.kind {
            case .reference, .externalReference: fields.append(batch.reference(of: owner).description)
            case .referenceList: fields.append(batch.reference(of: batch.references[Int(owner.integer)]).description)
            default: fields.append(nil)
            }
            entity += line(fields)
        }
        return (
            line(["_id"] + layout.attributes.map(\.name) + ["owner"]), entity, line(["owner", "member", "position"]),
            labels
        )
    }

    static let dialects: [(delimiter: Character, null: String?)] = [
        (",", nil), (";", "NULL"), ("\t", "\\N"), ("|", "0"), ("p", nil), ("1", "true"), ("/", nil), ("-", "p1"),
        ("T", nil), (" ", "x"), ("e", "1"), (":", "2"),
    ]

    @Test("entity and join files are the general path's bytes", arguments: 0..<dialects.count)
    func filesMatchTheGeneralPath(_ index: Int) throws {
        let (delimiter, null) = Self.dialects[index]
        let dialect = try CSVDialect(delimiter: delimiter, nullMarker: null)
        let batch = try Self.items(count: 3000)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("items")
        // The batch twice: the second appends to the files the first left open.
        try CSVTestFiles.write([batch, batch], model: Self.model, to: output, dialect: dialect)
        let expected = Self.expected(batch, dialect)
        let expectedEntity = expected.entityHeader + expected.entity + expected.entity
        let entity = try Data(contentsOf: output.appendingPathComponent("Item.csv"))
        let labels = try Data(contentsOf: output.appendingPathComponent("Item.labels.csv"))
        #expect(entity == Data(expectedEntity.utf8))
        #expect(labels == Data((expected.labelsHeader + expected.labels + expected.labels).utf8))
        // Line by line too, so that a difference is shown where it is.
        let lines = String(decoding: entity, as: UTF8.self).components(separatedBy: "\r\n")
        for (row, (written, wanted)) in zip(lines, expectedEntity.components(separatedBy: "\r\n"))
            .enumerated() where written != wanted
        {
            Issue.record("line \(row + 1): \(written.prefix(200).debugDescription) != \(wanted.prefix(200).debugDescription)")
            break
        }

        // A single file holds the entity file alone.
        let single = folder.appendingPathComponent("Item.csv")
        try CSVTestFiles.write([batch], model: Self.model, to: single, dialect: dialect)
        #expect(try Data(contentsOf: single) == Data((expected.entityHeader + expected.entity).utf8))
    }

    @Test func quotingIsFoundAtEveryPositionOfAWord() throws {
        // Each special byte at each position of the first 18 bytes, alone in a field (no other field in the row can
        // hide a miss): quoted exactly when the plain rule says so.
        let texts = Self.positional
        let model = CSVTestFiles.notes
        var batch = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        for (row, text) in texts.enumerated() {
            batch.append(
                Record(entity: "Folder", id: .primaryKey(Int64(row + 1)), values: [.string(text)], relationships: [.toMany([])]))
        }
        for (delimiter, null) in Self.dialects {
            let dialect = try CSVDialect(delimiter: delimiter, nullMarker: null)
            let folder = try Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("Folder.csv")
            try CSVTestFiles.write([batch], model: model, to: file, dialect: dialect)
            let written = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            var expected = Self.field("_id", dialect) + dialect.delimiterText + Self.field("name", dialect) + "\r\n"
            for (row, text) in texts.enumerated() {
                expected += Self.field("p\(row + 1)", dialect) + dialect.delimiterText + Self.field(text, dialect) + "\r\n"
            }
            #expect(written == expected, "delimiter \(delimiter.debugDescription)")
        }
    }
}
