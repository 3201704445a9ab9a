import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// CSV input written by hand: headers matched loosely, references by id or by key, defaults for missing columns,
/// the model version, and every kind of bad input reported with its file, line, column, entity and property.
@Suite("CSV reader")
struct CSVReaderTests {
    static var notesOptions: FormatOptions { FormatOptions(bundle: CSVTestFiles.bundle(CSVTestFiles.notes)) }

    static func folder(_ url: URL) -> URL { url.deletingLastPathComponent() }

    @Test func headersMatchExactlyThenIgnoringCaseThenSnakeCase() throws {
        let folder = try CSVTestFiles.folder([
            "note.csv": "_id, Title ,created_at,WORD_COUNT,Folder\np1,Milk,2024-05-01T09:30:00Z,3,Folder/p1\n",
            "Folder.csv": "_id,NAME\np1,Home\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let records = try CSVTestFiles.read(folder, options: Self.notesOptions)
        let note = try #require(records["Note"]?.first)
        // Note's layout: createdAt, pinned, title, wordCount; folder. pinned has no column: its default, YES.
        #expect(note.values == [.date(Date(timeIntervalSinceReferenceDate: 736_248_600)), .bool(true), "Milk", 3])
        #expect(note.relationships == [.toOne(ObjectReference(entity: "Folder", id: .primaryKey(1)))])
        #expect(records["Folder"]?.first?.relationships == [.viaInverse])
    }

    @Test(
        "bad headers name the column",
        arguments: [
            ("_id,title,colour\n", 11, "unknown column \"colour\": Note has no attribute or to-one relationship"),
            ("_id,title,Title\n", 11, "columns 2 (\"title\") and 3 (\"Title\") hold the same property"),
            ("_id,title,notes\n", 11, "unknown column"),
            ("title,_id,folders\n", 11, "unknown column"),
        ])
    func badHeaders(_ header: String, _ column: Int, _ message: String) throws {
        let folder = try CSVTestFiles.folder(["Note.csv": header])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix("input/Note.csv") == true)
        #expect(error?.location?.line == 1)
        #expect(error?.location?.column == column)
        #expect(error?.location?.entity == "Note")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
        #expect(error.map { "\($0)" }?.contains("Note.csv:1:\(column): entity Note: malformed input: ") == true)
    }

    @Test func toManyColumnPointsToItsJoinFile() throws {
        let folder = try CSVTestFiles.folder(["Folder.csv": "_id,name,notes\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.message.contains("its members go in the join file Folder.notes.csv") == true)
        #expect(error?.location?.column == 10)
    }

    @Test func ambiguousHeaderIsRefused() throws {
        var entity = Entity(name: "Item")
        entity.attributes = [Attribute(name: "sizeA", type: .string), Attribute(name: "sizea", type: .string)]
        let model = ObjectModel(versionName: "Items", entities: [entity])
        let folder = try CSVTestFiles.folder(["Item.csv": "SIZEA\nx\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: FormatOptions(bundle: CSVTestFiles.bundle(model)))
        #expect(error?.message.contains("could be any of sizeA, sizea") == true, "\(error?.message ?? "")")
    }

    @Test func referencesByUniquenessConstraintKey() throws {
        // Folder.name is unique and Folder.csv has no _id: folders are identified by name.
        let folder = try CSVTestFiles.folder([
            "Folder.csv": "name\nWork\nHome\n",
            "Note.csv": "title,folder\nA,Work\nB,Folder/Home\nC,\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let records = try CSVTestFiles.read(folder, options: Self.notesOptions)
        #expect(records["Folder"]?.map(\.id) == [.external("Work"), .external("Home")])
        #expect(
            records["Note"]?.map(\.relationships) == [
                [.toOne(ObjectReference(entity: "Folder", id: .external("Work")))],
                [.toOne(ObjectReference(entity: "Folder", id: .external("Home")))],
                [.toOne(nil)],
            ])
        // Notes have neither an _id nor a key: ids from their lines, unique in their table.
        #expect(records["Note"]?.map(\.id) == [.external("Note:2"), .external("Note:3"), .external("Note:4")])
    }

    @Test func keysFromOptionsAreSpelledCanonically() throws {
        let folder = try CSVTestFiles.folder([
            "Note.csv": "wordCount,title\n007,Bond\n42,Answer\n",
            "Folder.csv": "_id,name\np1,Home\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        var options = Self.notesOptions
        options.keys = ["Note": "wordCount"]
        let records = try CSVTestFiles.read(folder, options: options)
        #expect(records["Note"]?.map(\.id) == [.external("7"), .external("42")])
        // Folder.csv has an _id column: folders keep their ids even though Folder.name is unique.
        #expect(records["Folder"]?.map(\.id) == [.primaryKey(1)])
        options.keys = ["Note": "colour"]
        #expect(CSVTestFiles.readError(folder, options: options)?.code == .usage)
    }

    @Test(
        "bad references are located",
        arguments: [
            (
                "Reading.csv", "_id,when,book\np1,,p2\n",
                "without its entity, but Book has sub-entities: write Book/… or EBook/…"
            ),
            ("Reading.csv", "_id,when,book\np1,,Tag/p2\n", "a Tag: expected a Book"),
            ("Book.tags.csv", "owner,member\np1,\n", "an empty member"),
            ("Book.tags.csv", "owner,member\n,Tag/p1\n", "an empty object id"),
        ])
    func badReferences(_ file: String, _ text: String, _ message: String) throws {
        var files = [file: text]
        if file != "Book.csv" && file.hasPrefix("Book") { files["Book.csv"] = "_id\np1\n" }
        let folder = try CSVTestFiles.folder(files)
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix(file) == true)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.column != nil)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test(
        "a value that does not fit its attribute names file, line, column, object and key",
        arguments: [
            ("wordCount", "twelve", "expected an integer for Integer 32 attribute wordCount, found \"twelve\""),
            ("wordCount", "1.5", "expected an integer"),
            ("createdAt", "2024-02-30", "expected an ISO 8601 date"),
            ("pinned", "maybe", "expected true or false"),
        ])
    func wrongType(_ column: String, _ value: String, _ message: String) throws {
        let folder = try CSVTestFiles.folder(["Note.csv": "_id,title,\(column)\np1,ok,\np2,\"a, b\",\(value)\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = try #require(CSVTestFiles.readError(folder, options: Self.notesOptions))
        #expect(error.code == .malformedInput)
        #expect(error.location?.line == 3)
        #expect(error.location?.column == 11)
        #expect(error.location?.entity == "Note")
        #expect(error.location?.object == "Note/p2")
        #expect(error.location?.keyPath == column)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.code.exitCode == 65)
    }

    @Test(
        "a row with the wrong number of fields names its line",
        arguments: [
            "_id,title\np1,a\np2,b,c\n", "_id,title\np1,a\np2\n", "_id,title\np1,a\np2,\"b\nc\",d\n",
        ])
    func wrongFieldCount(_ text: String) throws {
        let folder = try CSVTestFiles.folder(["Note.csv": text])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 3)
        #expect(error?.location?.entity == "Note")
        #expect(error?.message.contains("expected 2 fields, as in the header (_id, title), found") == true)
    }

    @Test func truncatedFilesAreReported() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        let book = output.appendingPathComponent("Book.csv")
        let whole = try Data(contentsOf: book)
        var failures: Set<String> = []
        // Cut the last record anywhere before its last field: each cut is reported. (A cut inside the last field
        // leaves a shorter value, which delimited text cannot tell from a complete one.)
        let lastRecord = try #require(whole.dropLast(2).lastIndex(of: 0x0A)) + 1
        let lastDelimiter = try #require(whole[lastRecord...].lastIndex(of: 0x2C))
        for cut in lastRecord + 1...lastDelimiter {
            try whole.prefix(cut).write(to: book)
            let error = CSVTestFiles.readError(output, options: FormatOptions(bundle: LibraryFixture.bundle))
            #expect(error?.code == .malformedInput, "cut at \(cut)")
            #expect(error?.location?.path?.hasSuffix("library/Book.csv") == true)
            #expect(error?.location?.line == 3, "cut at \(cut)")
            failures.insert(error?.message.prefix(20).description ?? "")
        }
        #expect(failures.count > 1)
    }

    @Test func invalidUTF8IsReportedWithItsEntity() throws {
        let folder = try CSVTestFiles.folder([:])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        try Data(Array("_id,title\np1,caf".utf8) + [0xE9] + Array("\n".utf8)).write(
            to: folder.appendingPathComponent("Note.csv"))
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.column == 4)
        #expect(error?.location?.entity == "Note")
        #expect(error?.message.contains("invalid UTF-8") == true)
    }

    @Test func brokenQuoteIsReportedWithItsEntity() throws {
        let folder = try CSVTestFiles.folder(["Note.csv": "_id,title\np1,\"unterminated\np2,x\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.column == 4)
        #expect(error?.location?.entity == "Note")
        #expect(error?.message.contains("no closing quote") == true)
    }

    @Test(
        "files that fit no entity or relationship are refused",
        arguments: [
            ("Notes.csv", "no entity Notes in model Notes"),
            ("Note.tags.csv", "Note has no to-many relationship tags"),
            ("Note.folder.csv", "Note has no to-many relationship folder"),
            ("Folder.notes.csv", "there is no Folder.csv"),
            ("Note.x.y.csv", "is not named Entity.csv or Entity.relationship.csv"),
        ])
    func unknownFiles(_ name: String, _ message: String) throws {
        let folder = try CSVTestFiles.folder([name: "owner,member\n", "Note.csv": "_id,folder\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix(name) == true)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test func joinRowsOutOfOrderAreReported() throws {
        let folder = try CSVTestFiles.folder([
            "Book.csv": "_id\np1\np2\np3\n",
            "Book.tags.csv": "owner,member\np2,Tag/p1\np1,Tag/p2\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix("Book.tags.csv") == true)
        #expect(error?.location?.line == 3)
        #expect(
            error?.message.contains("owner \"p1\" is not an object of Book.csv, or this file's rows are not grouped")
                == true)
    }

    @Test func orderedMembersFollowTheirPositions() throws {
        let folder = try CSVTestFiles.folder([
            "Shelf.csv": "_id,label\np1,A\np2,B\n",
            "Shelf.books.csv": "member,owner,position\nBook/p9,p1,3\nBook/p7,p1,1\nEBook/p8,p1,2\nBook/p1,p2,1\n",
            "Book.csv": "_id,shelf\np7,Shelf/p1\np9,p1\np1,p2\n",
            "EBook.csv": "_id,shelf\np8,p1\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let records = try CSVTestFiles.read(folder, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(
            records["Shelf"]?.map(\.relationships) == [
                [
                    .toMany([
                        LibraryFixture.reference("Book", 7), LibraryFixture.reference("EBook", 8),
                        LibraryFixture.reference("Book", 9),
                    ])
                ],
                [.toMany([LibraryFixture.reference("Book", 1)])],
            ])
        // Without the join file, the shelves' books are carried by Book.shelf; many-to-many and to-many without
        // inverse are empty.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Shelf.books.csv"))
        let unlisted = try CSVTestFiles.read(folder, options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(unlisted["Shelf"]?.first?.relationships == [.viaInverse])
        #expect(
            unlisted["Book"]?.first?.relationships == [
                .toMany([]), .toOne(LibraryFixture.reference("Shelf", 1)), .toMany([]),
            ])
    }

    @Test func oneToManyListedWithoutItsInverseColumnIsRefused() throws {
        let folder = try CSVTestFiles.folder([
            "Folder.csv": "_id,name\np1,Home\n",
            "Folder.notes.csv": "owner,member\np1,Note/p1\n",
            "Note.csv": "_id,title\np1,Milk\n",
        ])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: Self.notesOptions)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix("Folder.notes.csv") == true)
        #expect(error?.message.contains("whose inverse Note.folder has no column") == true)
    }

    @Test func abstractEntitiesHaveNoObjects() throws {
        var item = Entity(name: "Item", isAbstract: true)
        item.attributes = [Attribute(name: "name", type: .string)]
        let book = Entity(name: "Book", parentName: "Item")
        var loan = Entity(name: "Loan")
        loan.relationships = [Relationship(name: "item", destination: "Item")]
        let model = ObjectModel(versionName: "Items", entities: [item, book, loan])
        let options = FormatOptions(bundle: CSVTestFiles.bundle(model))
        let folder = try CSVTestFiles.folder(["Item.csv": "_id,name\np1,x\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        let error = CSVTestFiles.readError(folder, options: options)
        #expect(error?.message.contains("Item is abstract") == true)
        #expect(error?.location?.line == 2)

        let loans = try CSVTestFiles.folder(["Loan.csv": "_id,item\np1,Item/p1\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(loans)) }
        #expect(CSVTestFiles.readError(loans, options: options)?.message.contains("abstract entity Item") == true)
        try Data("_id,item\np1,Book/p1\n".utf8).write(to: loans.appendingPathComponent("Loan.csv"))
        #expect(
            try CSVTestFiles.read(loans, options: options)["Loan"]?.first?.relationships == [
                .toOne(ObjectReference(entity: "Book", id: .primaryKey(1)))
            ])
    }

    @Test func singleFileTakesItsEntityFromItsNameOrTheOptions() throws {
        let folder = try CSVTestFiles.folder(["notes-export.csv": "title\nMilk\n", "Note.csv": "title\nBread\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        var options = Self.notesOptions
        #expect(
            try CSVTestFiles.read(folder.appendingPathComponent("Note.csv"), options: options)["Note"]?.first?.values[2]
                == "Bread")
        let error = CSVTestFiles.readError(folder.appendingPathComponent("notes-export.csv"), options: options)
        #expect(error?.code == .usage)
        #expect(error?.message.contains("give the entity with --entity") == true)
        options.entity = "Note"
        #expect(
            try CSVTestFiles.read(folder.appendingPathComponent("notes-export.csv"), options: options)["Note"]?.count
                == 1)
        options.entity = "Nope"
        #expect(
            CSVTestFiles.readError(folder.appendingPathComponent("notes-export.csv"), options: options)?.code == .usage)
    }

    @Test func folderReadsBackWithTheVersionItWasWrittenFor() throws {
        var second = LibraryFixture.model
        second.versionName = "Library 2"
        second.entities[0].attributes.append(Attribute(name: "floor", type: .integer16, isOptional: true))
        let bundle = ModelBundle(
            name: "Library", versions: [LibraryFixture.model, second], currentVersionName: "Library 2",
            sourceKind: .xcdatamodeld)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("library")
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        #expect(
            try CSVReader(contentsOf: output, options: FormatOptions(bundle: bundle)).model.versionName == "Library")
        // --version wins over the recorded hashes.
        #expect(
            try CSVReader(contentsOf: output, options: FormatOptions(bundle: bundle, version: "Library 2")).model
                .versionName == "Library 2")
        // Without _decant.json, the current version.
        try FileManager.default.removeItem(at: output.appendingPathComponent("_decant.json"))
        #expect(
            try CSVReader(contentsOf: output, options: FormatOptions(bundle: bundle)).model.versionName == "Library 2")
        // No version matches the recorded hashes.
        try FileManager.default.removeItem(at: output)
        try CSVTestFiles.write(LibraryFixture.batches, model: LibraryFixture.model, to: output)
        let other = ModelBundle(
            name: "Library", versions: [second], currentVersionName: "Library 2", sourceKind: .xcdatamodeld)
        let mismatch = #expect(throws: DecantError.self) {
            try CSVReader(contentsOf: output, options: FormatOptions(bundle: other))
        }
        #expect(mismatch?.code == .modelMismatch)
        #expect(mismatch?.message.contains("Shelf: hash differs") == true)
        // Without a bundle: the model must be given.
        let usage = #expect(throws: DecantError.self) { try CSVReader(contentsOf: output, options: FormatOptions()) }
        #expect(usage?.code == .usage)
        #expect(usage?.message.contains("--model") == true)
    }

    @Test func emptyFilesHaveNoObjects() throws {
        let folder = try CSVTestFiles.folder(["Note.csv": "", "Folder.csv": "_id,name\r\n"])
        defer { try? FileManager.default.removeItem(at: Self.folder(folder)) }
        #expect(try CSVTestFiles.read(folder, options: Self.notesOptions).isEmpty)
    }
}
