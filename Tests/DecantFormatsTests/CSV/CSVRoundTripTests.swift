import DecantCore
@testable import DecantCodecs
import DecantTestSupport
import Foundation
import Testing

@testable import DecantFormats

/// Records written as a CSV folder read back equal, in every dialect: every attribute type, inheritance, ordered
/// one-to-many, many-to-many and to-many without inverse; and what the files look like.
@Suite("CSV round trips")
struct CSVRoundTripTests {
    static let dialects: [(delimiter: Character, null: String?)] = [
        (",", nil), (";", nil), ("\t", "\\N"), ("|", "NULL"),
    ]

    @Test("the library reads back equal", arguments: 0..<dialects.count)
    func libraryReadsBackEqual(_ index: Int) throws {
        let (delimiter, null) = Self.dialects[index]
        let dialect = try CSVDialect(delimiter: delimiter, nullMarker: null)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        let batches = LibraryFixture.batches
        try CSVTestFiles.write(batches, model: LibraryFixture.model, to: output, dialect: dialect)
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(
            names == [
                "Author.books.csv", "Author.csv", "Book.authors.csv", "Book.csv", "Book.tags.csv", "EBook.authors.csv",
                "EBook.csv", "EBook.tags.csv", "Reading.csv", "Shelf.books.csv", "Shelf.csv", "Tag.csv", "_decant.json",
            ])
        // The folder's own dialect is recorded, so it reads back without options.
        let back = try CSVTestFiles.read(output, options: FormatOptions(bundle: LibraryFixture.bundle), batchSize: 1)
        let expected = CSVTestFiles.records(of: batches)
        for (entity, records) in expected {
            #expect(back[entity] == records, "\(entity)")
        }
        #expect(Set(back.keys) == Set(expected.keys))
    }

    @Test func filesHaveTheDocumentedForm() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        func text(_ name: String) throws -> String {
            String(decoding: try Data(contentsOf: output.appendingPathComponent(name)), as: UTF8.self)
        }
        #expect(try text("Reading.csv") == "_id,when,book\r\np1,2024-05-10T18:14:06.84Z,EBook/p2\r\np2,,\r\n")
        #expect(try text("Shelf.csv") == "_id,label\r\np1,Fiction\r\np2,Empty ✓\r\n")
        #expect(
            try text("Shelf.books.csv") == "owner,member,position\r\np1,Book/p3,1\r\np1,Book/p1,2\r\np1,EBook/p2,3\r\n")
        #expect(try text("Book.authors.csv") == "owner,member\r\np1,Author/p1\r\np1,Author/p2\r\n")
        #expect(
            try text("Book.csv").hasPrefix(
                "_id,available,cover,extra,id,link,pages,price,published,rating,title,shelf\r\n"
                    + "p1,false,AQEBAQEBAQEBAQ==,YnBsaXN0MDA=,E621E1F8-C36C-495A-93FC-0C247A3E6E51,"
                    + "https://example.com/1,101,"
                    + "10.5,2024-05-10T18:14:07.84Z,4.5,Dune,Shelf/p1\r\n"))
        // The empty title is quoted: an empty unquoted field would be nil.
        #expect(try text("Book.csv").contains(",\"\",Shelf/p1\r\n"))
        let metadata = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: output.appendingPathComponent("_decant.json")))
                as? [String: Any])
        #expect(metadata["format"] as? String == "decant-csv")
        #expect(metadata["modelVersion"] as? String == "Library")
        let hashes = try #require(metadata["entityVersionHashes"] as? [String: String])
        #expect(hashes["Book"] == LibraryFixture.model.entityVersionHashes["Book"]?.base64EncodedString())
    }

    @Test func nullMarkerAndQuoting() throws {
        var note = try #require(RecordLayout(entity: "Note", in: CSVTestFiles.notes)).emptyBatch()
        let texts: [String?] = [
            "NULL", "", nil, "a,b", "say \"hi\"", "two\r\nlines", " padded ", "line\nfeed", "é ✓",
        ]
        for (index, text) in texts.enumerated() {
            note.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(index + 1)),
                    values: [nil, .bool(true), text.map(Value.string) ?? nil, .integer(Int64(index))],
                    relationships: [.toOne(nil)]))
        }
        for marker in [nil, "NULL"] {
            let folder = try Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("notes")
            try CSVTestFiles.write(
                [note], model: CSVTestFiles.notes, to: output, dialect: CSVDialect(nullMarker: marker))
            let text = String(decoding: try Data(contentsOf: output.appendingPathComponent("Note.csv")), as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            // The last column is the folder, nil throughout.
            let folderNil = marker ?? ""
            if marker == nil {
                #expect(lines[1] == "p1,,true,NULL,0,")
                #expect(lines[3] == "p3,,true,,2,")
            } else {
                #expect(lines[1] == "p1,NULL,true,\"NULL\",0,NULL")
                #expect(lines[3] == "p3,NULL,true,NULL,2,NULL")
            }
            #expect(lines[2].hasSuffix(",\"\",1,\(folderNil)"))
            #expect(lines[4].hasSuffix(",\"a,b\",3,\(folderNil)"))
            #expect(lines[5].hasSuffix(",\"say \"\"hi\"\"\",4,\(folderNil)"))
            #expect(text.contains(",\"two\r\nlines\",5,\(folderNil)\r\n"))
            #expect(text.contains(",\" padded \",6,\(folderNil)\r\n"))
            let back = try CSVTestFiles.read(
                output, options: FormatOptions(bundle: CSVTestFiles.bundle(CSVTestFiles.notes)))
            #expect(back["Note"] == CSVTestFiles.records(of: [note])["Note"])
        }
    }

    @Test func emptyFieldsInColumnsThatAreNotText() throws {
        // An empty field, quoted or not, is nil where the empty string is no value of the column's type; in a text
        // column a quoted empty field is the empty string, and so is an unquoted one when a null marker is set.
        let folder = try CSVTestFiles.folder([
            "Note.csv": "_id,createdAt,title,wordCount,pinned\n p1 ,\"\",\"\",,\np2,,,\"\",NULL\n"
        ])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        var options = FormatOptions(bundle: CSVTestFiles.bundle(CSVTestFiles.notes))
        options.csv.nullMarker = "NULL"
        let notes = try #require(try CSVTestFiles.read(folder, options: options)["Note"])
        #expect(notes.map(\.id) == [.primaryKey(1), .primaryKey(2)])
        #expect(notes.map(\.values) == [[nil, nil, "", nil], [nil, nil, "", nil]])

        let plainFolder = try CSVTestFiles.folder([
            "Note.csv": "_id,createdAt,title,wordCount,pinned\np1,\"\",\"\",,\np2,,,\"\",\n"
        ])
        defer { try? FileManager.default.removeItem(at: plainFolder.deletingLastPathComponent()) }
        options.csv.nullMarker = nil
        let plain = try #require(try CSVTestFiles.read(plainFolder, options: options)["Note"])
        #expect(plain.map(\.values) == [[nil, nil, "", nil], [nil, nil, nil, nil]])
    }

    @Test("every double and date reads back bit for bit")
    func doublesAndDatesAreExact() throws {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, -0.5, -1.25, 1e-5, -1e-7, .leastNonzeroMagnitude, 737_057_646.84, -978_307_200,
            -63_113_904_000,
            252_423_993_599.999, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, 1e300,
            Double(Int64.max), 0.1 + 0.2,
        ]
        for _ in 0..<2000 {
            values.append(Double.random(in: -7e10...2.5e11, using: &generator))
            values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator)))
        }
        var batch = try #require(RecordLayout(entity: "Reading", in: LibraryFixture.model)).emptyBatch()
        var book = try #require(RecordLayout(entity: "Book", in: LibraryFixture.model)).emptyBatch()
        for (index, value) in values.enumerated() where !value.isNaN {
            batch.append(
                Record(
                    entity: "Reading", id: .primaryKey(Int64(index + 1)),
                    values: [.date(Date(timeIntervalSinceReferenceDate: value))], relationships: [.toOne(nil)]))
            // Book's attributes: available, cover, extra, id, link, pages, price, published, rating, title.
            book.beginRecord(primaryKey: Int64(index + 1))
            for _ in 0..<6 { book.appendNull() }
            // price, a decimal stored as a double (RecordBatch reads a decimal through Foundation's Decimal, which
            // traps beyond its range)
            if abs(value) < 1e30 { book.appendReal(value) } else { book.appendNull() }
            book.appendNull()
            book.appendReal(value)  // rating
            book.appendNull()
            book.appendReferenceList([])
            book.appendNull()
            book.appendReferenceList([])
            book.endRecord()
        }
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("values")
        try CSVTestFiles.write([book, batch], model: LibraryFixture.model, to: output)
        let back = try CSVTestFiles.read(output, options: FormatOptions(bundle: LibraryFixture.bundle))
        let readings = try #require(back["Reading"])
        for (row, record) in readings.enumerated() {
            guard case .real = batch.cell(row: row, column: 0).kind, case .date(let date) = record.values[0] else {
                Issue.record("row \(row) is \(record.values[0])")
                continue
            }
            let expected = Double(bitPattern: UInt64(bitPattern: batch.cell(row: row, column: 0).integer))
            #expect(date.timeIntervalSinceReferenceDate.bitPattern == expected.bitPattern || expected == 0)
        }
        #expect(back["Book"]?.map { $0.values[8] } == (0..<book.count).map { book.record(at: $0).values[8] })
        #expect(back["Book"]?.map { $0.values[6] } == (0..<book.count).map { book.record(at: $0).values[6] })
    }

    @Test(
        "dates in ISO 8601 read as documented",
        arguments: [
            ("2001-01-01T00:00:00Z", 0.0),
            ("2001-01-01", 0.0),
            ("2001-01-01 00:01", 60.0),
            ("2001-01-01T01:00:00+01:00", 0.0),
            ("2001-01-01T00:00:00-0130", 5400.0),
            ("2001-01-01T00:00:00.5+01", -3599.5),
            ("2000-12-31T23:59:59.75Z", -0.25),
            ("2024-02-29T12:00:00,125z", 730_900_800.125),
            ("737057646.84", 737_057_646.84),
            ("-1.5", -1.5),
        ])
    func isoDates(_ text: String, _ seconds: Double) throws {
        #expect(CSVValueText.parseDate(text) == seconds)
    }

    @Test(
        "malformed dates are refused",
        arguments: [
            "2023-02-29", "2024-13-01", "2024-01-01T24:00", "2024-01-01T10:00:60", "2024-1-01", "yesterday",
            "2024-01-01T10", "2024-01-01Z", "2024-01-01T10:00:00+25:00", "",
        ])
    func malformedDates(_ text: String) {
        #expect(CSVValueText.parseDate(text) == nil)
    }
}
