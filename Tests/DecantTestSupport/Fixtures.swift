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

    /// `../shared/corpus-legacy`, the oldest Apple-written forms (a binary store, an Xcode 3 model and its store),
    /// kept apart so that sweeps over `corpus/` take them in as their readers come.
    public static let legacyCorpusRoot: URL = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus-legacy", isDirectory: true)

    /// Every binary store (`NSBinaryStoreType`, a file starting with `CoreData`) in the corpus and the legacy corpus.
    public static let binaryStores: [URL] = [corpusRoot, legacyCorpusRoot].flatMap { root in
        corpusItems(under: root) { url in
            (try? FileHandle(forReadingFrom: url)).map { handle in
                defer { try? handle.close() }
                return (try? handle.read(upToCount: 8)) == Data("CoreData".utf8)
            } ?? false
        }
    }

    /// The project's `samples/` folder.
    public static let samplesRoot: URL = packageRoot.appendingPathComponent("samples", isDirectory: true)

    /// A file or folder inside the corpus, by its path below `corpus/`.
    public static func corpus(_ relativePath: String) -> URL {
        corpusRoot.appendingPathComponent(relativePath)
    }

    /// Every file or folder below the corpus (or `root`) whose name satisfies `include`, sorted by path.
    /// Folders that match are returned and not descended into.
    public static func corpusItems(under root: URL = corpusRoot, where include: (URL) -> Bool) -> [URL] {
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

    /// The corpus-relative path of a corpus URL, for readable test arguments.
    public static func corpusRelativePath(_ url: URL) -> String {
        let root = corpusRoot.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(root) ? String(path.dropFirst(root.count + 1)) : path
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
