public import DecantCore
import DecantCodecs
public import Foundation
import DecantFormats
import Testing

/// The model sources of corpus stores, for sweeps that need a store's model: most stores carry it in their
/// `Z_MODELCACHE`; a store allow-listed in ``CorpusAllowList/storesWithoutModelCache`` (written before Core Data kept
/// one) is read with the model source in its repository whose version has the store's hashes.
public enum CorpusStoreModels {
    /// The bundle to open `store` (a corpus-relative path) with: nil for a store that carries its own model, else the
    /// bundle in its repository with a version of the store's entity `hashes`, or an issue recorded when none has.
    public static func bundle(forStore store: String, hashes: [String: Data]) -> ModelBundle? {
        guard CorpusAllowList.storesWithoutModelCache[store] != nil else { return nil }
        let found = bundles(besides: store).first { ModelMatch(storeHashes: hashes, bundle: $0).matched != nil }
        if found == nil { Issue.record("no model source beside \(store) has its hashes") }
        return found
    }

    /// The model bundles (sources, compiled, and `.xcdatamodel` folders outside a bundle) in the same corpus
    /// repository as `store`, with the URL each was loaded from.
    public static func bundleFiles(besides store: String) -> [(url: URL, bundle: ModelBundle)] {
        let repository = Fixtures.corpus(String(store.prefix { $0 != "/" }))
        var found: [URL] = []
        var stack = [repository]
        while let folder = stack.popLast() {
            for child in (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [] {
                let standalone = child.pathExtension == "xcdatamodel" && folder.pathExtension != "xcdatamodeld"
                if ["xcdatamodeld", "momd"].contains(child.pathExtension) || standalone {
                    found.append(child)
                } else if child.hasDirectoryPath || (try? child.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true {
                    stack.append(child)
                }
            }
        }
        // Only the allow-listed models may fail to load; any other failure is an issue.
        let record = { (text: String) in _ = Issue.record(Comment(rawValue: text)) }
        return found.sorted { $0.path < $1.path }.compactMap { url in
            CorpusAllowList.loadModelBundle(url, record: record, load: ModelBundle.load(from:)).map { (url, $0) }
        }
    }

    /// The bundles of ``bundleFiles(besides:)``.
    public static func bundles(besides store: String) -> [ModelBundle] {
        bundleFiles(besides: store).map(\.bundle)
    }
}
