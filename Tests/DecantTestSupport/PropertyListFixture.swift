public import DecantCore
import DecantCodecs
import DecantFormats
public import Foundation

/// Plain property lists of real producers for the property-list tests (issue 20), and the bookmarks model they
/// convert into: a binary list Python's `plistlib` wrote, holding a keyed archive in a value, and an XML one written
/// by hand as `-[NSArray writeToFile:atomically:]` writes it. Small enough to live here rather than as files.
public enum PropertyListFixture {
    /// The model's entities as Xcode writes them in `contents`: Folder ⇄ Bookmark, `Folder.bookmarks` to-many with
    /// the to-one inverse `Bookmark.folder`.
    public static let entities = """
        <entity name="Folder" representedClassName="Folder" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="created" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
            <relationship name="bookmarks" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Bookmark" inverseName="folder" inverseEntity="Bookmark"/>
        </entity>
        <entity name="Bookmark" representedClassName="Bookmark" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="url" optional="YES" attributeType="URI"/>
            <attribute name="visits" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
            <attribute name="lastVisit" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
            <attribute name="icon" optional="YES" attributeType="Binary"/>
            <attribute name="tags" optional="YES" attributeType="Transformable"/>
            <attribute name="rating" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <attribute name="starred" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
            <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="bookmarks" inverseEntity="Folder"/>
        </entity>
        """

    /// The model, version `Bookmarks`, read from ``entities`` as from a `.xcdatamodel`.
    public static func model() throws -> ObjectModel {
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            \(entities)
            </model>
            """
        return try XcdatamodelReader.parse(Data(contents.utf8), path: "Bookmarks.xcdatamodel", versionName: "Bookmarks")
    }

    /// Written by CPython 3 `plistlib.dumps(top, fmt=plistlib.FMT_BINARY, sort_keys=False)`, where `LastVisit` is
    /// `plistlib.dumps` of a keyed archive of an `NSDate` (`NS.time` 700000000.5, `$classes` NSDate, NSObject,
    /// `$top.root` a `plistlib.UID(1)`), also binary:
    ///
    ///     {"Version": 2, "Folders": [
    ///       {"Title": "Reading", "Created": datetime(2023, 3, 4, 5, 6, 7), "Bookmarks": [
    ///          {"Title": "Café ☕", "URLString": "https://example.com/cafe", "Visits": 12, "LastVisit": <archive>,
    ///           "Icon": b"\x89PNG\r\n", "Tags": ["food", "paris"]},
    ///          {"Title": "Docs", "URLString": "https://developer.apple.com", "Visits": 0, "Tags": []}]},
    ///       {"Title": "Empty", "Bookmarks": []}]}
    public static let pythonBinary = Data(
        base64Encoded:
            "YnBsaXN0MDDSAQIDBFdWZXJzaW9uV0ZvbGRlcnMQAqIFH9MGBwgJCgtVVGl0bGVXQ3JlYXRlZFlCb29rbWFya3NXUmVhZGluZzNBxNmEn4AA"
            + "AKIMGtYGDQ4PEBESExQVFhdZVVJMU3RyaW5nVlZpc2l0c1lMYXN0VmlzaXRUSWNvblRUYWdzZgBDAGEAZgDpACAmFV8QGGh0dHBzOi8vZXhh"
            + "bXBsZS5jb20vY2FmZRAMTxDfYnBsaXN0MDDUAQIDBAUGExZZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJj"
            + "aGl2ZXKjBwgNVSRudWxs0gkKCwxWJGNsYXNzV05TLnRpbWWAAiNBxNyTgEAAANIODxARWCRjbGFzc2VzWiRjbGFzc25hbWWiERJWTlNEYXRl"
            + "WE5TT2JqZWN00RQVVHJvb3SAARIAAYagCBEbJCkyREhOU1piZG1ye4aJkJmcoaMAAAAAAAABAQAAAAAAAAAXAAAAAAAAAAAAAAAAAAAAqEaJ"
            + "UE5HDQqiGBlUZm9vZFVwYXJpc9QGDQ4RGxwdHlREb2NzXxAbaHR0cHM6Ly9kZXZlbG9wZXIuYXBwbGUuY29tEACg0gYIICFVRW1wdHmgAAgA"
            + "DQAVAB0AHwAiACkALwA3AEEASQBSAFUAYgBsAHMAfQCCAIcAlACvALEBkwGaAZ0BogGoAbEBtgHUAdYB1wHcAeIAAAAAAAACAQAAAAAAAAAi"
            + "AAAAAAAAAAAAAAAAAAAB4w==") ?? Data()

    /// As `-[NSArray writeToFile:atomically:]` writes an array of dictionaries: Apple's header and DOCTYPE, tabs,
    /// keys in the dictionary's order, `<date>` in UTC, `<true/>`.
    public static let appleXML = Data(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <array>
        \t<dict>
        \t\t<key>Title</key>
        \t\t<string>Apple</string>
        \t\t<key>URL</key>
        \t\t<string>https://www.apple.com/</string>
        \t\t<key>Visits</key>
        \t\t<integer>3</integer>
        \t\t<key>Rating</key>
        \t\t<real>4.5</real>
        \t\t<key>Starred</key>
        \t\t<true/>
        \t\t<key>LastVisit</key>
        \t\t<date>2024-05-19T18:14:06Z</date>
        \t\t<key>WebBookmarkUUID</key>
        \t\t<string>6F3B8E2C-1D0A-4C52-9F4B-2A7E1C9D0B11</string>
        \t</dict>
        \t<dict>
        \t\t<key>Title</key>
        \t\t<string>Zoë &amp; Ünïcode</string>
        \t\t<key>URL</key>
        \t\t<string>https://example.org/z</string>
        \t\t<key>Starred</key>
        \t\t<false/>
        \t\t<key>Icon</key>
        \t\t<data>
        \t\tiVBORw0K
        \t\t</data>
        \t</dict>
        </array>
        </plist>

        """.utf8)

}
