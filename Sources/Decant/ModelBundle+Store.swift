public import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantSwiftData
public import Foundation

extension ModelBundle {
    /// Loads `--model`: a model (``load(from:)``: `.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`) or a Core Data
    /// SQLite store, whose `Z_MODELCACHE` model is taken after its entity hashes are proved equal to the store's
    /// metadata (as ``SQLiteStore/resolveModel(bundle:)`` does). A store exported to NDJSON or CSV without a model
    /// file so imports back into the same version. The store's model is one version named `Z_MODELCACHE`, the name
    /// a model-less export records.
    ///
    /// SwiftData Swift source is taken too: a `.swift` file, a folder of them, or several `.swift` files separated by
    /// commas (`Models.swift,Enums.swift`), read by ``SwiftSourceModelReader``.
    ///
    /// - Throws: what ``load(from:)`` throws for a path that is neither; `.unsupportedFormat` or `.modelMismatch`
    ///   for a store without a usable model cache; what ``SwiftSourceModelReader`` throws for Swift source.
    public static func load(modelOrStore url: URL) throws -> ModelBundle {
        do {
            return try load(modelOrSource: url)
        } catch let error as DecantError where error.code == .unsupportedFormat {
            guard (try? FormatProbe(url: url)).map({ SQLiteFormat().recognizes($0) }) == true else { throw error }
            var model = try SQLiteStore(contentsOf: url).resolveModel(bundle: nil)
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
