import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// What `inspect` finds in a plain property list: the top level, the arrays of dictionaries with their keys, the
/// archives held in values, and the starting mapping, which converts as printed.
@Suite("Plain property lists surveyed")
struct PropertyListSurveyTests {
    @Test func theBinaryListsArraysKeysAndArchive() throws {
        let survey = try PropertyListSurvey(data: PropertyListTesting.pythonBinary, path: "Folders.plist")
        #expect(survey.encoding == "binary")
        #expect(survey.top == "dictionary")
        #expect(survey.topCount == 2)
        #expect(survey.topKeys.map(\.name) == ["Version", "Folders"])
        #expect(survey.topKeys.map(\.kinds) == [["integer": 1], ["array of dictionaries": 1]])
        #expect(survey.arrays.map(\.keyPath) == ["Folders", "Folders.Bookmarks"])
        #expect(survey.arrays.map(\.count) == [2, 2])
        #expect(survey.arrays.map(\.isTopLevel) == [true, false])
        let folders = survey.arrays[0].keys
        #expect(folders.map(\.name) == ["Bookmarks", "Created", "Title"])
        #expect(folders[0].kinds == ["array of dictionaries": 1, "empty array": 1])
        #expect(folders[1].count == 1)
        let bookmarks = Dictionary(uniqueKeysWithValues: survey.arrays[1].keys.map { ($0.name, $0) })
        #expect(bookmarks["LastVisit"]?.kinds == ["archive of NSDate": 1])
        #expect(bookmarks["Tags"]?.kinds == ["array of string": 1, "empty array": 1])
        #expect(bookmarks["Icon"]?.kinds == ["data": 1])
        #expect(survey.archiveCount == 1)
        #expect(survey.archives.first?.place == "Folders[0].Bookmarks[0].LastVisit")
        #expect(survey.archives.first?.rootClass == "NSDate")
        #expect(survey.archives.first?.value == "date 2023-03-08T20:26:40Z")
        // The starting mapping: the array to convert, an entity per array, a property per key.
        #expect(survey.mapping.keyPath == "Folders")
        #expect(survey.mapping.arrays["Folders"]?.entity == "Folder")
        #expect(survey.mapping.arrays["Folders.Bookmarks"]?.entity == "Bookmark")
        #expect(survey.mapping.arrays["Folders.Bookmarks"]?.keys["URLString"] == "urlString")
        #expect(survey.mapping.arrays["Folders.Bookmarks"]?.keys["LastVisit"] == "lastVisit")
    }

    @Test func theStartingMappingOnceEditedConverts() throws {
        let survey = try PropertyListSurvey(data: PropertyListTesting.pythonBinary, path: "Folders.plist")
        // Round trip through the file a user edits: urlString is called url in the model.
        var mapping = try PropertyListMapping(json: try survey.mapping.jsonData())
        #expect(mapping == survey.mapping)
        mapping.arrays["Folders.Bookmarks"]?.keys["URLString"] = "url"
        var options = FormatOptions(bundle: PropertyListTesting.bundle)
        mapping.apply(to: &options)
        var reader = try PropertyListReader(
            data: PropertyListTesting.pythonBinary, path: "Folders.plist", options: options)
        let records = try ArchiveTesting.readAll(&reader)
        #expect(records["Folder"]?.count == 2)
        #expect(records["Bookmark"].map { $0.map { PropertyListTesting.value("url", of: $0) } }
            == [.uri("https://example.com/cafe"), .uri("https://developer.apple.com")])
        #expect(reader.diagnostics.isEmpty)
        // As printed, unedited, the rename to a property the model lacks is refused when the reader meets the key.
        var unedited = FormatOptions(bundle: PropertyListTesting.bundle)
        survey.mapping.apply(to: &unedited)
        let error = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(PropertyListTesting.pythonBinary, options: unedited)
        }
        #expect(error.code == .usage)
        #expect(error.message.contains("renames key URLString of Folders.Bookmarks to urlString"))
    }

    @Test func theXMLListsTopArray() throws {
        let survey = try PropertyListSurvey(data: PropertyListTesting.appleXML, path: "Safari Bookmarks.plist")
        #expect(survey.encoding == "xml")
        #expect(survey.top == "array")
        #expect(survey.arrays.map(\.keyPath) == [""])
        #expect(survey.arrays[0].keys.first { $0.name == "Starred" }?.kinds == ["boolean": 2])
        #expect(survey.mapping.keyPath == nil)
        #expect(survey.mapping.arrays[""]?.entity == "SafariBookmark")
    }

    @Test func namesForEntitiesAndProperties() {
        #expect(PropertyListSurvey.entityName("Bookmarks") == "Bookmark")
        #expect(PropertyListSurvey.entityName("categories") == "Category")
        #expect(PropertyListSurvey.entityName("my-items") == "MyItem")
        #expect(PropertyListSurvey.entityName("Address") == "Address")
        #expect(PropertyListSurvey.propertyName("URLString") == "urlString")
        #expect(PropertyListSurvey.propertyName("Title") == "title")
        #expect(PropertyListSurvey.propertyName("date_added") == "dateAdded")
        #expect(PropertyListSurvey.propertyName("URL") == "url")
    }

    /// Every `.plist` of the corpus: Apple's keyed archives stay archives (the plist format declines them), and the
    /// plain ones (`VersionInfo.plist`, which Xcode's momc writes into a `.momd`) are recognised and surveyed.
    @Test func theCorpusPlistsAreToldApartAndSurveyed() throws {
        let files = Fixtures.corpusItems { $0.pathExtension == "plist" }
        var plain = 0
        for file in files {
            let data = try Data(contentsOf: file)
            let recognised = PropertyListFormat().recognizes(try FormatProbe(url: file))
            if PropertyListFormat.isKeyedArchive(data) {
                #expect(!recognised, "\(Fixtures.corpusRelativePath(file))")
                continue
            }
            plain += 1
            #expect(recognised, "\(Fixtures.corpusRelativePath(file))")
            let survey = try PropertyListSurvey(data: data, path: file.lastPathComponent)
            #expect(survey.top == "dictionary")
            if file.lastPathComponent == "VersionInfo.plist" {
                #expect(survey.topKeys.contains { $0.name == "NSManagedObjectModel_VersionHashes" })
                // The hashes are data keyed by entity, no archives.
                #expect(survey.archiveCount == 0)
            }
        }
        #expect(plain >= 2)
        #expect(files.count > plain)
    }
}
