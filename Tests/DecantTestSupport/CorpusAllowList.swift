public import Foundation
import DecantCore
import Testing

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
        "\(Fixtures.appsPrefix)duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite":
            "the app opens it with a model merged from several packages' models (its AppRatingPrompt with "
            + "BrowserServicesKit's HTTPSUpgrade and RemoteMessaging): no one model source has all its entities",
    ]

    /// Stores without a `Z_MODELCACHE`, whose schema is checked only through their model source, and read only with
    /// it.
    public static let storesWithoutModelCache: [String: String] = [
        "\(Fixtures.legacyPrefix)RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the Xcode 3 model beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv1.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv2.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv3.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv4.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv5.sqlite":
            "framework 519 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/containers/3.5.0.xcappdata/AppData/Library/Application Support/com.apptentive.feedback/ATDataModel.sqlite":
            "framework 519 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v2CorruptDatabase/ATDataModel.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v2WALDatabase/ATDataModel.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v3WALDatabase/ATDataModel.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_1.3.5.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_1.3.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_1.4.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_1.6.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_2.0.sqlite":
            "framework 479 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)artsy__energy-legacy/Resources/CoreData/oss_stubbed_data.sqlite":
            "framework 519 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)ebf__CTDataStoreManager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest/TestMigrationStore_version_1.sqlite":
            "framework 386 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)hwaxxer__BookMigration/BookMigration/Model1.sqlite":
            "framework 419 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)mwkirk__MWKCoreData/Tests/Stores/MWKCoreDataTests.sqlite":
            "framework 519 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
        "\(Fixtures.appsPrefix)mwkirk__MWKCoreData/Tests/Stores/MWKCoreDataTests2.sqlite":
            "framework 519 wrote no Z_MODELCACHE: the model source beside it is the way to its values",
    ]

    /// Stores damaged on purpose by their project, each with the words the refusal must name (its table and
    /// column): every sweep that reads their rows expects exit 65 with those words instead of their objects.
    public static let damagedStores: [String: (reason: String, names: [String])] = [
        "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/v2CorruptDatabase/ATDataModel.sqlite":
            (
                "damaged on purpose (the app's own test checks that it recovers): ZATRECORD lacks its ZCUSTOMDATA "
                    + "column", ["ZATRECORD", "ZCUSTOMDATA"]
            )
    ]

    /// Stores whose relationships point at objects that do not exist (a to-one's key with no row behind it), as
    /// Core Data keeps them: they read, convert to every format that can name such an object, and migrate (with a
    /// warning), but `validate` reports them (exit 1) and an XML or binary store, which can only point at objects
    /// it holds, refuses them naming the object and key (exit 65).
    public static let danglingReferences: [String: (reason: String, names: [String])] = [
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_1.3.sqlite":
            ("Artwork/p1's artist is Artist/p1, and the store has no artist", ["Artwork/p1", "artist"]),
        "\(Fixtures.appsPrefix)artsy__energy-legacy/ArtsyFolio Tests/Migrations/ArtsyPartner_2.0.sqlite":
            ("Artwork/p1's to-ones hold the key 0, which no object has", ["Artwork/p1", "artist"]),
    ]

    /// Runs `body` on `store`; for a store in ``damagedStores`` (or in `refusals`, for a job that cannot carry what
    /// those stores hold) it must fail with a located error naming the words listed (and its result is then nil),
    /// for any other store it must not fail.
    public static func readingRows<T>(
        of store: String, refusedBy refusals: [String: (reason: String, names: [String])] = [:], _ body: () throws -> T
    ) throws -> T? {
        guard let refusal = damagedStores[store] ?? refusals[store] else { return try body() }
        do {
            _ = try body()
            Issue.record("\(store) is listed (\(refusal.reason)) but goes through: take it off the list")
        } catch let error as DecantError {
            #expect(error.code == .malformedInput, "\(store): \(error)")
            for name in refusal.names {
                #expect(error.description.contains(name), "\(store): the refusal does not name \(name): \(error)")
            }
        }
        return nil
    }

    /// Model versions whose identifiers (`versionIdentifier`, not part of any hash) were changed after the stores
    /// listed were written with them: the store's `NSStoreModelVersionIdentifiers` and the model source's differ.
    public static let versionIdentifiersChangedSince: [String: String] = Dictionary(
        uniqueKeysWithValues: [
            "ArtsyFolio Tests/Migrations/ArtsyPartner_1.3.5.sqlite", "ArtsyFolio Tests/Migrations/ArtsyPartner_1.3.sqlite",
            "ArtsyFolio Tests/Migrations/ArtsyPartner_1.4.sqlite", "ArtsyFolio Tests/Migrations/ArtsyPartner_1.6.sqlite",
            "ArtsyFolio Tests/Migrations/ArtsyPartner_2.0.sqlite", "Resources/CoreData/oss_stubbed_data.sqlite",
        ].map {
            (
                "\(Fixtures.appsPrefix)artsy__energy-legacy/\($0)",
                "written with identifier 1; ArtsyPartner.xcdatamodeld's versions now say 0.5 to 2.3"
            )
        })

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
