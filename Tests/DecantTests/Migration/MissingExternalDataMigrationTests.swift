import Decant
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Core Data's migration carries external-storage references without opening their files: a fixture store committed
/// without its `.NAME_SUPPORT` folder migrates, seeds and validates, with one warning naming the count and the first
/// few files.
@Suite("Missing external data in a migration")
struct MissingExternalDataMigrationTests {
    static let payload = Data(repeating: 7, count: 2_000)
    static let missing = ["M1", "M2", "M3", "M4", "M5", "M6", "M7"]

    /// Photos v1 (image stored externally, title) and v2 (adds an optional caption: an inferred hop).
    static func bundle() -> ModelBundle {
        var photo = Entity(name: "Photo")
        var image = Attribute(name: "image", type: .binary, isOptional: true)
        image.allowsExternalBinaryDataStorage = true
        photo.attributes = [image, Attribute(name: "title", type: .string, isOptional: true)]
        let v1 = ObjectModel(versionName: "Photos", entities: [photo], versionIdentifiers: ["1"])
        photo.attributes.append(Attribute(name: "caption", type: .string, isOptional: true))
        let v2 = ObjectModel(versionName: "Photos 2", entities: [photo], versionIdentifiers: ["2"])
        return MigrationFixtures.bundle("Photos", [v1, v2])
    }

    /// A v1 store whose first photo's file is in `_EXTERNAL_DATA` and whose seven others' files are not.
    static func store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let model = try #require(bundle.versions.first)
        let url = folder.appendingPathComponent("Photos.sqlite")
        var records = [
            Record(entity: "Photo", id: .primaryKey(1), values: [.externalDataReference("F1"), .string("present")])
        ]
        for (offset, name) in missing.enumerated() {
            records.append(
                Record(
                    entity: "Photo", id: .primaryKey(Int64(offset + 2)),
                    values: [.externalDataReference(name), .string(name)]))
        }
        try MigrationFixtures.writeStore(at: url, model: model, records: records)
        let external = StoreFiles(database: url).externalDataFolder
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try payload.write(to: external.appendingPathComponent("F1"))
        return url
    }

    @Test func aMigrationCarriesMissingReferencesAndWarnsOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let output = folder.appendingPathComponent("Out.sqlite")
        let report = try StoreMigration.migrate(
            store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        #expect(report.written == ["Photo": 8])
        #expect(report.warnings.count == 1, "\(report.warnings)")
        let warning = try #require(report.warnings.first)
        #expect(warning.kind == .missingExternalData)
        #expect(warning.message.hasPrefix("7 externally stored values have no file in .Photos_SUPPORT/_EXTERNAL_DATA"))
        #expect(warning.message.contains("(M1, M2, M3, M4, M5, …)"), "\(warning.message)")
        // The file that exists is carried with its bytes, the missing ones as the same references.
        var reader = try SQLiteFormat().makeReader(
            at: output, options: { var options = FormatOptions(bundle: bundle); options.missingExternalData = .keep; return options }())
        let model = reader.model
        #expect(model.versionName == "Photos 2")
        var batch = try #require(RecordLayout(entity: "Photo", in: model)).emptyBatch()
        var images: [String: Value] = [:]
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count {
                let record = batch.record(at: row)
                guard case .string(let title)? = MigrationFixtures.value(record, "title", model: model) else { continue }
                images[title] = MigrationFixtures.value(record, "image", model: model)
            }
        }
        #expect(images["present"] == .data(Self.payload))
        for name in Self.missing { #expect(images[name] == .externalDataReference(name)) }

        // Asked to fail, it still fails, naming the file, and writes nothing.
        var strict = StoreMigration.Options(bundle: bundle)
        strict.formatOptions.missingExternalData = .fail
        let refused = folder.appendingPathComponent("Refused.sqlite")
        let error = #expect(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(refused), options: strict)
        }
        #expect(error?.message.contains("externally stored value M1 is missing") == true)
        #expect(!FileManager.default.fileExists(atPath: refused.path))
    }

    @Test func aValidationChecksTheReferencesAndWarnsOnce() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let report = try StoreValidation.validate(store: store, options: StoreValidation.Options(bundle: bundle))
        #expect(report.isValid)
        #expect(report.objects == ["Photo": 8])
        #expect(report.warnings.map(\.kind) == [.missingExternalData])
        #expect(report.warnings.first?.message.hasPrefix("7 externally stored values") == true)
    }

    /// A seed committed without its support folder is seeded and migrated to the current version.
    @Test func aSeedWithoutItsSupportFolderIsSeededAndMigrated() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let seed = try Self.store(in: folder, bundle: bundle)
        try FileManager.default.removeItem(at: StoreFiles(database: seed).externalDataFolder.deletingLastPathComponent())
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        var options = FormatOptions(bundle: bundle)
        options.missingExternalData = .keep
        let report = try Seeding.seed(default: seed, store: app.appendingPathComponent("Photos.sqlite"), options: options)
        #expect(report.action == .seeded)
        #expect(report.migratedFrom == "Photos")
        #expect(report.version == "Photos 2")
        #expect(report.warnings.count == 1)
        #expect(report.warnings.first?.message.hasPrefix("8 externally stored values") == true)
    }
}
