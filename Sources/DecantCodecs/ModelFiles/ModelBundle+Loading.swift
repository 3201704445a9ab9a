public import DecantCore
public import Foundation

extension ModelBundle {
    /// Loads a model from disk: an Xcode `.xcdatamodeld` (every version), a bare `.xcdatamodel`, a compiled
    /// `.momd` (every `.mom` version; `VersionInfo.plist` names the current one) or a single `.mom`.
    ///
    /// ```swift
    /// let bundle = try ModelBundle.load(from: URL(fileURLWithPath: "Notes.xcdatamodeld"))
    /// print(bundle.currentVersionName ?? "-", bundle.versions.map { $0.versionName ?? "" })
    /// ```
    ///
    /// A version may be an Xcode 3 model (an `elements` file instead of `contents`), alone or beside modern versions
    /// in one bundle (``ObjectModel/isXcode3Model``). A missing path throws `.fileNotFound`; a damaged model
    /// `.malformedInput`.
    public static func load(from url: URL) throws -> ModelBundle {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no model here", at: Location(path: url.displayPath))
        }
        switch ModelPathKind(url: url, isDirectory: isDirectory.boolValue) {
        case .xcdatamodeld:
            return try loadVersionedSource(url)
        case .xcdatamodel:
            let version = try loadSourceVersion(url)
            let name = versionName(of: url)
            return ModelBundle(name: name, versions: [version], currentVersionName: name, sourceKind: .xcdatamodel)
        case .momd:
            return try loadCompiledBundle(url)
        case .mom:
            let version = try loadCompiledVersion(url)
            let name = versionName(of: url)
            return ModelBundle(name: name, versions: [version], currentVersionName: name, sourceKind: .mom)
        case .other:
            throw DecantError(
                .unsupportedFormat, "not a Core Data model (expected .xcdatamodeld, .xcdatamodel, .momd or .mom)",
                at: Location(path: url.displayPath))
        }
    }

    /// The kinds of path ``load(from:)`` tells apart.
    private enum ModelPathKind {
        case xcdatamodeld, xcdatamodel, momd, mom, other

        init(url: URL, isDirectory: Bool) {
            switch url.pathExtension.lowercased() {
            case "xcdatamodeld" where isDirectory: self = .xcdatamodeld
            case "xcdatamodel" where isDirectory: self = .xcdatamodel
            case "momd" where isDirectory: self = .momd
            case "mom" where !isDirectory: self = .mom
            default: self = .other
            }
        }
    }

    /// The version name of a `Foo 2.xcdatamodel` folder (`Foo 2`).
    private static func versionName(of url: URL) -> String {
        url.deletingPathExtension().lastPathComponent
    }

    /// The version entries of a bundle folder with extension `pathExtension`, in Xcode's order
    /// (``VersionOrder/byName(_:bundleName:)``), and whether that order is known.
    private static func versionEntries(in url: URL, pathExtension: String) throws -> (entries: [URL], order: VersionOrder) {
        let children: [URL]
        do {
            children = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
        } catch {
            throw DecantError(.ioError, "the model bundle cannot be listed", at: Location(path: url.displayPath),
                underlyingError: error)
        }
        // Each entry under the bundle's URL as given, so messages name it as the user typed it (the listing's URLs
        // are absolute).
        let entries = children.filter { $0.pathExtension == pathExtension }.map { url.appendingPathComponent($0.lastPathComponent) }
        guard !entries.isEmpty else {
            throw DecantError(
                .malformedInput, "the model bundle holds no .\(pathExtension) version", at: Location(path: url.displayPath))
        }
        let sorted = VersionOrder.byName(
            entries.map(versionName(of:)), bundleName: url.deletingPathExtension().lastPathComponent)
        let ordered = sorted.names.compactMap { name in entries.first { versionName(of: $0) == name } }
        return (ordered, sorted.order)
    }

    private static func loadVersionedSource(_ url: URL) throws -> ModelBundle {
        let (entries, order) = try versionEntries(in: url, pathExtension: "xcdatamodel")
        let versions = try entries.map(loadSourceVersion)
        let current = try currentVersionName(in: url)
        if let current, !versions.contains(where: { $0.versionName == current }) {
            throw DecantError(
                .malformedInput, ".xccurrentversion names version \(current), which the bundle does not hold",
                at: Location(path: url.appendingPathComponent(".xccurrentversion").displayPath))
        }
        return ModelBundle(
            name: url.deletingPathExtension().lastPathComponent, versions: versions, currentVersionName: current,
            sourceKind: .xcdatamodeld, order: order)
    }

    /// Reads a `.momd`: every `.mom` inside (the optional `.omo` cache is ignored, as Core Data may ignore it) and
    /// `NSManagedObjectModel_CurrentVersionName` from `VersionInfo.plist`.
    private static func loadCompiledBundle(_ url: URL) throws -> ModelBundle {
        let (entries, order) = try versionEntries(in: url, pathExtension: "mom")
        let versions = try entries.map(loadCompiledVersion)
        var current: String?
        let info = url.appendingPathComponent("VersionInfo.plist")
        if FileManager.default.fileExists(atPath: info.path) {
            let plist = try PropertyListValue.decode(from: readFile(info), path: info.displayPath)
            current = plist["NSManagedObjectModel_CurrentVersionName"]?.stringValue
        }
        return ModelBundle(
            name: url.deletingPathExtension().lastPathComponent, versions: versions, currentVersionName: current,
            sourceKind: .momd, order: order)
    }

    private static func loadCompiledVersion(_ url: URL) throws -> ObjectModel {
        var model = try ArchivedModelDecoder.decode(readFile(url), path: url.displayPath)
        model.versionName = versionName(of: url)
        return model
    }

    private static func readFile(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw DecantError(.ioError, "cannot read the file", at: Location(path: url.displayPath), underlyingError: error)
        }
    }

    /// Reads `_XCCurrentVersionName` from `.xccurrentversion` (without its `.xcdatamodel` extension), if present.
    private static func currentVersionName(in bundle: URL) throws -> String? {
        let file = bundle.appendingPathComponent(".xccurrentversion")
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        // Decant's own reader, not PropertyListSerialization: the same checks on hostile bytes as every other
        // property list, and errors with a line or offset.
        let plist = try PropertyListValue.decode(from: readFile(file), path: file.displayPath)
        guard case .dictionary(let dictionary) = plist else {
            throw DecantError(.malformedInput, "the property list is not a dictionary", at: Location(path: file.displayPath))
        }
        guard let name = dictionary["_XCCurrentVersionName"] else { return nil }
        guard case .string(let text) = name else {
            throw DecantError(
                .malformedInput, "_XCCurrentVersionName is not a string",
                at: Location(path: file.displayPath, keyPath: "_XCCurrentVersionName"))
        }
        return text.hasSuffix(".xcdatamodel") ? String(text.dropLast(".xcdatamodel".count)) : text
    }

    /// Reads one `.xcdatamodel` folder: its `contents` file, or, for an Xcode 3 model, its `elements` archive
    /// (``Xcode3ModelReader``). A folder holding both is read from `contents`, which Xcode 4 and later write.
    private static func loadSourceVersion(_ url: URL) throws -> ObjectModel {
        let manager = FileManager.default
        let contents = url.appendingPathComponent("contents")
        guard manager.fileExists(atPath: contents.path) else {
            let elements = url.appendingPathComponent("elements")
            if manager.fileExists(atPath: elements.path) {
                return try Xcode3ModelReader.read(contentsOf: elements, versionName: versionName(of: url))
            }
            throw DecantError(
                .malformedInput, "the model version has no contents file (nor an Xcode 3 elements file)",
                at: Location(path: url.displayPath))
        }
        return try XcdatamodelReader.read(contentsOf: contents, versionName: versionName(of: url))
    }

}
