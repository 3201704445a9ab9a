public import Foundation
import Testing

/// Locates test inputs: the shared corpus of Apple-written files beside the project, the project's own samples,
/// and fresh temporary directories.
public enum Fixtures {
    /// The package's root folder (found from this source file's path).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // DecantTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `../shared/corpus`, the real Apple-written files every test may read (never write).
    public static let corpusRoot: URL = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus", isDirectory: true)

    /// `../shared/corpus-legacy`, the oldest Apple-written forms (an Xcode 3 model with the store it wrote, a binary
    /// store), kept apart from `corpus/`; ``corpusItems(where:)`` sweeps it too.
    public static let legacyCorpusRoot: URL = corpusRoot.deletingLastPathComponent()
        .appendingPathComponent("corpus-legacy", isDirectory: true)

    /// `../shared/corpus-apps`, real apps' files (models, stores, mapping models, archives) from 13 more public
    /// repositories, kept apart from `corpus/`; ``corpusItems(where:)`` sweeps it too.
    public static let appsCorpusRoot: URL = corpusRoot.deletingLastPathComponent()
        .appendingPathComponent("corpus-apps", isDirectory: true)

    /// The prefix ``corpusRelativePath(_:)`` gives paths in the apps corpus (`apps:artsy__energy-legacy/…`).
    public static let appsPrefix = "apps:"

    /// A file or folder inside the legacy corpus, by its path below `corpus-legacy/`.
    public static func legacyCorpus(_ relativePath: String) -> URL {
        legacyCorpusRoot.appendingPathComponent(relativePath)
    }

    /// Every binary store (`NSBinaryStoreType`, a file starting with `CoreData`) in the corpus and the legacy corpus.
    public static let binaryStores: [URL] = corpusItems { url in
        (try? FileHandle(forReadingFrom: url)).map { handle in
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 8)) == Data("CoreData".utf8)
        } ?? false
    }

    /// Whether `url` is a Core Data SQLite store of the corpora by its name: `.sqlite` and `.moody` files, and
    /// LoopKit's fixture `Model.sqlite.v1.original` (a store kept under another extension).
    public static func isStore(_ url: URL) -> Bool {
        ["sqlite", "moody"].contains(url.pathExtension.lowercased()) || url.lastPathComponent.hasSuffix(".sqlite.v1.original")
    }

    /// Every SQLite store of the corpora (``isStore(_:)``), as corpus-relative paths.
    public static var corpusStores: [String] { corpusItems(where: isStore).map(corpusRelativePath) }

    /// The project's `samples/` folder.
    public static let samplesRoot: URL = packageRoot.appendingPathComponent("samples", isDirectory: true)

    /// The prefix ``corpusRelativePath(_:)`` gives paths in the legacy corpus (`legacy:RestKit__RestKit/…`): the
    /// first path component still names one repository's folder, as sweeps that look beside a file expect.
    public static let legacyPrefix = "legacy:"

    /// A file or folder inside the corpus, by its path below `corpus/`; a path starting ``legacyPrefix`` is in the
    /// legacy corpus, one starting ``appsPrefix`` in the apps corpus.
    public static func corpus(_ relativePath: String) -> URL {
        if relativePath.hasPrefix(legacyPrefix) { return legacyCorpus(String(relativePath.dropFirst(legacyPrefix.count))) }
        if relativePath.hasPrefix(appsPrefix) {
            return appsCorpusRoot.appendingPathComponent(String(relativePath.dropFirst(appsPrefix.count)))
        }
        return corpusRoot.appendingPathComponent(relativePath)
    }

    /// Every file or folder below the corpus, the legacy corpus and the apps corpus whose name satisfies `include`,
    /// sorted by path within each (in that order). Folders that match are returned and not descended into.
    public static func corpusItems(where include: (URL) -> Bool) -> [URL] {
        corpusItems(below: corpusRoot, where: include) + corpusItems(below: legacyCorpusRoot, where: include)
            + corpusItems(below: appsCorpusRoot, where: include)
    }

    private static func corpusItems(below root: URL, where include: (URL) -> Bool) -> [URL] {
        var found: [URL] = []
        var stack: [URL] = [root]
        let manager = FileManager.default
        while let folder = stack.popLast() {
            let children: [URL]
            do {
                children = try manager.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            } catch {
                // A corpus folder that cannot be listed would shrink every sweep without a word.
                Issue.record("cannot list the corpus folder \(folder.path): \(error)")
                continue
            }
            for child in children {
                var isDirectory: ObjCBool = false
                _ = manager.fileExists(atPath: child.path, isDirectory: &isDirectory)
                if include(child) {
                    found.append(child)
                } else if isDirectory.boolValue {
                    stack.append(child)
                }
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The corpus-relative path of a corpus URL, for readable test arguments (``legacyPrefix`` first for the legacy
    /// corpus, ``appsPrefix`` for the apps corpus); ``corpus(_:)`` takes it back.
    public static func corpusRelativePath(_ url: URL) -> String {
        let root = corpusRoot.standardizedFileURL.path + "/"
        let legacy = legacyCorpusRoot.standardizedFileURL.path + "/"
        let apps = appsCorpusRoot.standardizedFileURL.path + "/"
        let path = url.standardizedFileURL.path
        if path.hasPrefix(root) { return String(path.dropFirst(root.count)) }
        if path.hasPrefix(legacy) { return legacyPrefix + path.dropFirst(legacy.count) }
        if path.hasPrefix(apps) { return appsPrefix + path.dropFirst(apps.count) }
        return path
    }

    /// A new, empty temporary directory unique to the caller.
    /// Copies a store and its -wal/-shm into `folder` (the corpus is read-only).
    public static func copyStore(_ store: URL, into folder: URL) throws -> URL {
        let target = folder.appendingPathComponent(store.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: target.path + suffix)
        }
        return target
    }

    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("decant-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new temporary directory, filled by `fill`; when `fill` throws (a failed `#require` included) the directory
    /// is removed before the error goes on, so a helper that hands a filled folder to its caller leaks none.
    public static func temporaryDirectory(filling fill: (URL) throws -> Void) throws -> URL {
        let folder = try temporaryDirectory()
        do {
            try fill(folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        return folder
    }
}
