public import Foundation

/// What in the corpus is known not to read yet, each named with its reason. Corpus loops record an issue for any
/// other file that fails, instead of skipping it with `try?`: a file that stops reading fails a test.
public enum CorpusAllowList {
    /// Model bundles Decant refuses on purpose, each with its reason. None: Xcode 3 models (`elements`), the last
    /// ones refused, now load.
    public static let unreadableModelBundles: [String: String] = [:]

    /// Stores whose repository holds no model source with their entities: their model is proven from the store's
    /// own `Z_MODELCACHE` instead (`CorpusStoreTests.readsCompletely`).
    public static let storesWithoutModelSource: [String: String] = [
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite":
            "CoreDataPlus ships SampleModel2's stores without its model source",
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite":
            "CoreDataPlus ships SampleModel2's stores without its model source",
    ]

    /// Stores without a `Z_MODELCACHE`, whose schema is checked only through their model source, and read only with
    /// it.
    public static let storesWithoutModelCache: [String: String] = [
        "\(Fixtures.legacyPrefix)RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the Xcode 3 model beside it is the way to its values"
    ]

    /// Loads `url` with `load`; an allow-listed bundle must fail (and is then nil), any other failure is recorded as
    /// an issue by the caller's `record` and gives nil too.
    public static func loadModelBundle<T>(
        _ url: URL, record: (String) -> Void, load: (URL) throws -> T
    ) -> T? {
        let relative = Fixtures.corpusRelativePath(url)
        do {
            let loaded = try load(url)
            if let reason = unreadableModelBundles[relative] {
                record("\(relative) is allow-listed as unreadable (\(reason)) but now loads: take it off the list")
            }
            return loaded
        } catch {
            if unreadableModelBundles[relative] == nil { record("\(relative) does not load: \(error)") }
            return nil
        }
    }
}
