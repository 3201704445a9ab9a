public import Foundation

/// Small `.xcdatamodeld` bundles on disk, as Xcode writes them, for tests that load models from files: one
/// `VERSION.xcdatamodel/contents` per version and, when a current version is named, `.xccurrentversion`.
///
/// ```swift
/// let bundle = try ModelBundleFiles.write("Items", versions: [
///     ("Items", #"<entity name="Item"><attribute name="name" optional="YES" attributeType="String"/></entity>"#),
///     ("Items 2", #"<entity name="Item"><attribute name="name" attributeType="String"/></entity>"#),
/// ], current: "Items 2", in: folder)
/// ```
public enum ModelBundleFiles {
    /// Writes `name.xcdatamodeld` in `folder`, each version's `contents` holding the `<entity>` elements given for it;
    /// returns the bundle's URL.
    @discardableResult
    public static func write(
        _ name: String, versions: [(name: String, entities: String)], current: String? = nil, in folder: URL
    ) throws -> URL {
        let bundle = folder.appendingPathComponent("\(name).xcdatamodeld")
        for version in versions {
            let model = bundle.appendingPathComponent("\(version.name).xcdatamodel")
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                \(version.entities)
                </model>
                """.utf8
            ).write(to: model.appendingPathComponent("contents"))
        }
        if let current {
            try Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(current).xcdatamodel</string></dict></plist>
                """.utf8
            ).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    /// An `Item` entity of `attributes` (`<attribute …/>` elements).
    public static func item(_ attributes: String...) -> String {
        "<entity name=\"Item\" representedClassName=\"Item\" syncable=\"YES\">\n"
            + attributes.joined(separator: "\n") + "\n</entity>"
    }
}
