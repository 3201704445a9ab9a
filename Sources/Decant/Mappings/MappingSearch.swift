public import Foundation

/// Finds the Xcode mapping models (`.xcmappingmodel`, `.cdm`) of the project that holds a model bundle, as Core Data
/// finds the mapping models in an app's bundle: nobody lists them, each is used where its entity hashes fit a hop.
///
/// The project is the nearest folder at or above the model that holds an `.xcodeproj`, an `.xcworkspace`, a
/// `Package.swift` or a `.git`; without one, the model's own folder. The walk skips `.build`, `DerivedData`, `Pods`,
/// `node_modules` and `.git`, goes at most ``maximumDepth`` folders deep and looks at most at ``maximumEntries``
/// entries; it visits each real folder once (a symbolic link back up the tree is not followed round) and returns
/// each real file once, sorted by path, so two runs find the same.
///
/// ```swift
/// let search = MappingSearch.find(forModelAt: URL(fileURLWithPath: "App/Model.xcdatamodeld"))
/// print(search.root.path, search.found.map(\.lastPathComponent))
/// ```
public struct MappingSearch: Sendable, Hashable {
    /// How many folders below the project folder the walk goes.
    public static let maximumDepth = 8
    /// How many folder entries the walk looks at in all.
    public static let maximumEntries = 20_000
    /// Folders the walk never enters: build products, dependencies, version control.
    public static let skippedFolders: Set<String> = [".build", "DerivedData", "Pods", "node_modules", ".git"]
    /// What marks a project folder.
    static let projectMarkers = [".xcodeproj", ".xcworkspace"]

    /// The folder searched.
    public var root: URL
    /// The mapping models found, each once, sorted by path.
    public var found: [URL]
    /// Whether a bound (depth or entries) stopped the walk before it saw everything.
    public var isTruncated: Bool

    /// The project folder of the model at `model`: the nearest folder at or above it holding an `.xcodeproj`, an
    /// `.xcworkspace`, a `Package.swift` or a `.git`, else the model's own folder.
    public static func projectFolder(ofModelAt model: URL) -> URL {
        let start = model.standardizedFileURL.deletingLastPathComponent()
        var folder = start
        let manager = FileManager.default
        while true {
            let names = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
            if names.contains(where: { name in
                name == "Package.swift" || name == ".git" || projectMarkers.contains { name.hasSuffix($0) }
            }) {
                return folder
            }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path || folder.path == "/" { return start }
            folder = parent
        }
    }

    /// Searches the project of the model at `model` (``projectFolder(ofModelAt:)``) for mapping models.
    public static func find(forModelAt model: URL) -> MappingSearch {
        search(from: projectFolder(ofModelAt: model))
    }

    /// Searches `root` and the folders below it for mapping models.
    public static func search(from root: URL) -> MappingSearch {
        let manager = FileManager.default
        var found: [URL] = []
        var seenFiles: Set<String> = []
        var visited: Set<String> = []
        var entries = 0
        var truncated = false
        // Depth-first in name order, so the result does not depend on the file system's listing order.
        var stack: [(folder: URL, depth: Int)] = [(root.standardizedFileURL, 0)]
        while let (folder, depth) = stack.popLast() {
            guard visited.insert(folder.resolvingSymlinksInPath().path).inserted else { continue }
            guard let names = try? manager.contentsOfDirectory(atPath: folder.path) else { continue }
            var subfolders: [URL] = []
            for name in names.sorted() {
                entries += 1
                if entries > maximumEntries {
                    truncated = true
                    break
                }
                let url = folder.appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { continue }
                let lowered = name.lowercased()
                if (isDirectory.boolValue && lowered.hasSuffix(".xcmappingmodel"))
                    || (!isDirectory.boolValue && lowered.hasSuffix(".cdm"))
                {
                    if seenFiles.insert(url.resolvingSymlinksInPath().path).inserted { found.append(url) }
                } else if isDirectory.boolValue, !skippedFolders.contains(name) {
                    if depth < maximumDepth {
                        subfolders.append(url)
                    } else {
                        truncated = true
                    }
                }
            }
            if entries > maximumEntries { break }
            stack += subfolders.reversed().map { ($0, depth + 1) }
        }
        return MappingSearch(
            root: root, found: found.sorted { $0.path < $1.path }, isTruncated: truncated)
    }
}
