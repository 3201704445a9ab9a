public import DecantCore
import DecantCodecs
import DecantFormats
import DecantSwiftData
public import Foundation

extension ModelBundle {
    /// Loads `--model`: a model (``load(from:)``: `.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`) or a store that
    /// keeps its model (a Core Data SQLite store's `Z_MODELCACHE`, told by a ``StoreDescribingFormat`` of `registry`),
    /// whose model is taken after its entity hashes are proved equal to the store's metadata (as
    /// ``DescribedStore/resolveModel(bundle:at:)`` does). A store exported to NDJSON or CSV without a model
    /// file so imports back into the same version. The store's model is one version named `Z_MODELCACHE`, the name
    /// a model-less export records.
    ///
    /// SwiftData Swift source is taken too: a `.swift` file, a folder of them, or several `.swift` files separated by
    /// commas (`Models.swift,Enums.swift`), read by ``SwiftSourceModelReader``.
    ///
    /// - Throws: what ``load(from:)`` throws for a path that is neither; `.unsupportedFormat` or `.modelMismatch`
    ///   for a store without a usable model cache; what ``SwiftSourceModelReader`` throws for Swift source.
    public static func load(modelOrStore url: URL, registry: FormatRegistry = .builtIn) throws -> ModelBundle {
        do {
            return try load(modelOrSource: url)
        } catch let error as DecantError where error.code == .unsupportedFormat {
            // Only a store whose format keeps a model can stand for one.
            guard let probe = try? FormatProbe(url: url),
                let format = registry.format(recognizing: probe) as? any StoreDescribingFormat
            else { throw error }
            let store = try format.describeStore(at: url)
            guard store.modelCacheName != nil else { throw error }
            var model = try store.resolveModel(bundle: nil, at: Location(path: url.displayPath))
            model.versionName = "Z_MODELCACHE"
            return ModelBundle(
                name: url.deletingPathExtension().lastPathComponent, versions: [model],
                currentVersionName: "Z_MODELCACHE", sourceKind: .storeCache)
        }
    }

    /// Loads a model file (``load(from:)``) or SwiftData Swift source: a `.swift` file, a folder of them, or several
    /// `.swift` files separated by commas, read by ``SwiftSourceModelReader``. Stores are not taken (`decant lock`
    /// locks a model's source, never a store's cache).
    public static func load(modelOrSource url: URL) throws -> ModelBundle {
        if let files = SwiftSourceModelReader.sourceFiles(at: url) {
            return try SwiftSourceModelReader.load(files: files.files, name: files.name)
        }
        return try load(from: url)
    }
}
