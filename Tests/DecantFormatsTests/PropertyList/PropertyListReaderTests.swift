import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Plain property lists read as records (issue 20, part 3): a binary list Python's plistlib wrote, with a keyed
/// archive in a value, and an XML one as Apple's `writeToFile:` writes it; the array chosen by key path; nested
/// arrays of dictionaries as related objects.
@Suite("Plain property lists read as records")
struct PropertyListReaderTests {
    @Test func pythonsBinaryListBecomesFoldersAndTheirBookmarks() throws {
        let records = try PropertyListTesting.records(
            PropertyListTesting.pythonBinary, options: PropertyListTesting.folderOptions)
        let folders = try #require(records["Folder"])
        let bookmarks = try #require(records["Bookmark"])
        #expect(folders.map(\.id) == [.external("Folders[0]"), .external("Folders[1]")])
        #expect(folders.map { PropertyListTesting.value("title", of: $0) } == [.string("Reading"), .string("Empty")])
        // <date> 2023-03-04T05:06:07Z.
        #expect(
            PropertyListTesting.value("created", of: folders[0])
                == .date(Date(timeIntervalSince1970: 1_677_906_367)))
        #expect(bookmarks.map(\.id) == [.external("Folders[0].Bookmarks[0]"), .external("Folders[0].Bookmarks[1]")])
        let cafe = bookmarks[0]
        #expect(PropertyListTesting.value("title", of: cafe) == .string("Café ☕"))
        // URLString fills url through the mapping's rename.
        #expect(PropertyListTesting.value("url", of: cafe) == .uri("https://example.com/cafe"))
        #expect(PropertyListTesting.value("visits", of: cafe) == .integer(12))
        // The Data value holds a keyed archive of an NSDate: it decodes to the date.
        #expect(
            PropertyListTesting.value("lastVisit", of: cafe)
                == .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5)))
        #expect(PropertyListTesting.value("icon", of: cafe) == .data(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])))
        // An array of strings under a Transformable attribute is archived as an NSArray of NSStrings.
        guard case .transformable(let tags)? = PropertyListTesting.value("tags", of: cafe) else {
            Issue.record("tags is not transformable")
            return
        }
        let archive = try KeyedArchive(data: tags)
        let root = try #require(try archive.rootObject())
        guard case .collection("array", _, let elements) = try ArchiveField.resolve(root, in: archive) else {
            Issue.record("tags is not an archived array")
            return
        }
        #expect(try elements.map { try archive.string($0) } == ["food", "paris"])
        // The nested bookmarks point back at their folder; the folder's side is carried by that inverse.
        let folder = ObjectReference(entity: "Folder", id: .external("Folders[0]"))
        for bookmark in bookmarks {
            #expect(
                ArchiveTesting.relationship("folder", of: bookmark, in: PropertyListTesting.model) == .toOne(folder))
        }
        #expect(ArchiveTesting.relationship("bookmarks", of: folders[0], in: PropertyListTesting.model) == .viaInverse)
    }

    @Test func appleXMLArrayBecomesBookmarksAndUnknownKeysAreReported() throws {
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        options.entity = "Bookmark"
        var reader = try PropertyListReader(
            data: PropertyListTesting.appleXML, path: "Bookmarks.plist", options: options)
        #expect(reader.entityFromOptions == "Bookmark")
        let bookmarks = try #require(try ArchiveTesting.readAll(&reader)["Bookmark"])
        #expect(bookmarks.count == 2)
        let apple = bookmarks[0]
        // URL finds url ignoring case.
        #expect(PropertyListTesting.value("url", of: apple) == .uri("https://www.apple.com/"))
        #expect(PropertyListTesting.value("visits", of: apple) == .integer(3))
        #expect(PropertyListTesting.value("rating", of: apple) == .double(4.5))
        #expect(PropertyListTesting.value("starred", of: apple) == .bool(true))
        #expect(
            PropertyListTesting.value("lastVisit", of: apple)
                == .date(Date(timeIntervalSince1970: 1_716_142_446)))
        #expect(PropertyListTesting.value("title", of: bookmarks[1]) == .string("Zoë & Ünïcode"))
        #expect(PropertyListTesting.value("starred", of: bookmarks[1]) == .bool(false))
        #expect(
            PropertyListTesting.value("icon", of: bookmarks[1]) == .data(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])))
        #expect(PropertyListTesting.value("visits", of: bookmarks[1]) == .null)
        // WebBookmarkUUID fills nothing: reported once, not dropped silently.
        #expect(reader.diagnostics.count == 1)
        #expect(reader.diagnostics.first?.kind == .unmappedPropertyListContent)
        #expect(reader.diagnostics.first?.message.contains("WebBookmarkUUID") == true)
    }

    @Test func theMappingRenamesLeavesOutAndChoosesEntities() throws {
        let mapping = try PropertyListMapping(
            json: Data(
                """
                {"keyPath": null, "arrays": {"": {"entity": "Bookmark",
                  "keys": {"WebBookmarkUUID": null, "URL": "title", "Title": null}}}}
                """.utf8))
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        mapping.apply(to: &options)
        var reader = try PropertyListReader(
            data: PropertyListTesting.appleXML, path: "Bookmarks.plist", options: options)
        let bookmarks = try #require(try ArchiveTesting.readAll(&reader)["Bookmark"])
        #expect(PropertyListTesting.value("title", of: bookmarks[0]) == .string("https://www.apple.com/"))
        #expect(reader.diagnostics.isEmpty)
    }

    @Test func aDictionaryWithSeveralArraysNeedsAKeyPath() throws {
        let list: PropertyListValue = [
            "Favorites": [["Title": "a"]], "History": [["Title": "b"], ["Title": "c"]], "Count": 3,
        ]
        let data = BinaryPropertyListWriter().write(list)
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        options.entity = "Bookmark"
        let ambiguous = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(data, options: options)
        }
        #expect(ambiguous.code == .usage)
        #expect(ambiguous.message.contains("Favorites, History"))
        options.propertyList.keyPath = "History"
        let history = try PropertyListTesting.records(data, options: options)["Bookmark"] ?? []
        #expect(history.map { PropertyListTesting.value("title", of: $0) } == [.string("b"), .string("c")])
        options.propertyList.keyPath = "Count"
        let notAnArray = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(data, options: options)
        }
        #expect(notAnArray.code == .usage)
        #expect(notAnArray.message.contains("integer, not an array"))
        options.propertyList.keyPath = "Favourites"
        let missing = try #require(throws: DecantError.self) { try PropertyListTesting.records(data, options: options) }
        #expect(missing.message.contains("has no key Favourites"))
    }

    @Test func withoutEntityTheArraysNameChoosesIt() throws {
        // Two entities, no --entity: the array's key, singular, names Folder.
        let records = try PropertyListTesting.records(
            PropertyListTesting.pythonBinary, options: PropertyListTesting.folderOptions)
        #expect(records["Folder"]?.count == 2)
        var options = PropertyListTesting.folderOptions
        options.propertyList.arrayEntities = ["Folders": "Bookmark"]
        // The mapping can send an array elsewhere: the folders' keys then find Bookmark's title, and Bookmarks
        // names no relationship of Bookmark.
        var reader = try PropertyListReader(
            data: PropertyListTesting.pythonBinary, path: "test.plist", options: options)
        let asBookmarks = try ArchiveTesting.readAll(&reader)
        #expect(asBookmarks["Bookmark"]?.count == 2)
        #expect(reader.diagnostics.map(\.message).contains { $0.contains("key Bookmarks of Folders") })
    }

    @Test func aValueThatDoesNotFitNamesItsPlace() throws {
        let list: PropertyListValue = [["Title": "ok", "Visits": 1], ["Title": "bad", "Visits": "many"]]
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        options.entity = "Bookmark"
        let error = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(BinaryPropertyListWriter().write(list), options: options)
        }
        #expect(error.code == .malformedInput)
        #expect(error.location?.object == "[1]")
        #expect(error.location?.keyPath == "Visits")
        #expect(error.location?.entity == "Bookmark")
        #expect(error.message.contains("string does not fit attribute visits of type Integer 32"))
    }

    @Test func anArchiveOfAnAppObjectFitsNoDateAndADamagedArchiveIsLocated() throws {
        var writer = KeyedArchiveWriter()
        let object = writer.addObject(className: "MyApp.Colour", fields: ["red": 1.0])
        let colour = try writer.encodedData(root: object)
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        options.entity = "Bookmark"
        let wrong = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(
                BinaryPropertyListWriter().write([["LastVisit": .data(colour)]]), options: options)
        }
        #expect(wrong.code == .malformedInput)
        #expect(wrong.message.contains("keyed archive of MyApp.Colour does not fit attribute lastVisit"))
        // The same archive cut short: the error names the value holding it.
        let damaged = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(
                BinaryPropertyListWriter().write([["LastVisit": .data(colour.prefix(colour.count - 10))]]),
                options: options)
        }
        #expect(damaged.code == .malformedInput)
        #expect(damaged.location?.path == "test.plist")
        #expect(damaged.location?.keyPath == "[0].LastVisit")
        #expect(damaged.message.contains("the keyed archive in this value"))
    }

    @Test func aKeyedArchiveNamedPlistIsReadAsAnArchive() throws {
        let url = Fixtures.corpus(
            "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-URLTest.plist")
        #expect(PropertyListFormat.isKeyedArchive(try Data(contentsOf: url)))
        #expect(!PropertyListFormat.isKeyedArchive(PropertyListTesting.appleXML))
    }
}
