import DecantCore
@testable import DecantCodecs
import DecantTestSupport
@testable import DecantFormats
import Foundation

/// The plain property-list tests' inputs (``PropertyListFixture``) and helpers.
enum PropertyListTesting {
    /// Folder ⇄ Bookmark (``PropertyListFixture/entities``).
    /// (A model that does not read is an empty one, which fails every test that uses it.)
    static let model: ObjectModel =
        (try? PropertyListFixture.model()) ?? ObjectModel(versionName: "unreadable", entities: [])
    static let pythonBinary = PropertyListFixture.pythonBinary
    static let appleXML = PropertyListFixture.appleXML

    static var bundle: ModelBundle { ArchiveTesting.bundle(model) }

    /// The binary list's options: `URLString` renamed to `url`.
    static var folderOptions: FormatOptions {
        var options = FormatOptions(bundle: bundle)
        options.propertyList.arrayKeys = ["Folders.Bookmarks": ["URLString": "url"]]
        return options
    }

    /// Every record per entity.
    static func records(_ data: Data, options: FormatOptions, path: String = "test.plist") throws
        -> [String: [Record]]
    {
        var reader = try PropertyListReader(data: data, path: path, options: options)
        return try ArchiveTesting.readAll(&reader)
    }

    static func value(_ name: String, of record: Record) -> Value? {
        ArchiveTesting.value(name, of: record, in: model)
    }
}
