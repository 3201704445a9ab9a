public import DecantCore
import DecantFormats
import DecantSQLite
public import Foundation

extension ModelBundle {
    /// Loads `--model`: a model (``load(from:)``: `.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`) or a Core Data
    /// SQLite store, whose `Z_MODELCACHE` model is taken after its entity hashes are proved equal to the store's
    /// metadata (as ``SQLiteStore/resolveModel(bundle:)`` does). A store exported to NDJSON or CSV without a model
    /// file so imports back into the same version. The store's model is one version named `Z_MODELCACHE`, the name
    /// a model-less export records.
    ///
    /// - Throws: what ``load(from:)`` throws for a path that is neither; `.unsupportedFormat` or `.modelMismatch`
    ///   for a store without a usable model cache.
    public static func load(modelOrStore url: URL) throws -> ModelBundle {
        do {
            return try load(from: url)
        } catch let error as DecantError where error.code == .unsupportedFormat {
            guard (try? FormatProbe(url: url)).map({ SQLiteFormat().recognizes($0) }) == true else { throw error }
            var model = try SQLiteStore(contentsOf: url).resolveModel(bundle: nil)
            model.versionName = "Z_MODELCACHE"
            return ModelBundle(
                name: url.deletingPathExtension().lastPathComponent, versions: [model],
                currentVersionName: "Z_MODELCACHE", sourceKind: .storeCache)
        }
    }
}
