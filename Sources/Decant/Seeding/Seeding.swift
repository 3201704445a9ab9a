public import DecantCore
public import Foundation
import DecantCodecs

/// First-run seeding, the pattern Core Data apps use: if no store exists at the destination, put a copy of the
/// default store in place; never overwrite one that exists.
///
/// Safe where hand-written versions lose data: the copy is one consistent set (a SQLite seed's `-wal` content
/// included, its external-data folder beside it, nothing from another copy), built under a temporary name in the
/// destination's folder, flushed to disk and renamed into place; it runs under an advisory lock beside the
/// destination (one ``DestinationLease``, held through the migration or conversion the seeding runs), so two
/// seeders started together make one copy and both succeed; a temporary copy left by a run that crashed is removed
/// and the seeding starts again. A seed in another format (JSON, CSV) becomes a new store for the model given, in the
/// format the destination's extension names, else the registry's default store format (SQLite). The job names no
/// format: a store format copies its seeds (``StoreCopyingFormat``) and describes its stores
/// (``StoreDescribingFormat``).
///
/// ```swift
/// let report = try Seeding.seed(default: bundled, store: appSupport.appendingPathComponent("Notes.sqlite"),
///                               options: FormatOptions(bundle: notes))
/// print(report.action)   // .seeded, then .alreadySeeded on every later run
/// ```
public enum Seeding: Sendable {
    /// What a seeding did.
    public struct Report: Sendable, Hashable, Codable {
        /// What happened.
        public enum Action: String, Sendable, Hashable, Codable {
            /// The destination was absent and is now a copy of the seed.
            case seeded
            /// The destination existed and is the model's current version (or no model was given): nothing changed.
            case alreadySeeded = "already-seeded"
            /// The destination existed at an older version and was migrated in place, with a backup.
            case migrated
        }

        /// What happened.
        public var action: Action
        /// The destination, as given.
        public var store: String
        /// The seed, as given.
        public var seed: String
        /// The seed's format.
        public var seedFormat: String
        /// The destination's model version, when a model was given and a version matches.
        public var version: String?
        /// Objects per entity in the destination.
        public var objects: [String: Int]
        /// For `.migrated`: the version the store had.
        public var migratedFrom: String?
        /// For `.migrated`: the backup of the store as it was.
        public var backup: String?
        /// What a migration noticed and let pass (externally stored values whose file is missing, said once).
        public var warnings: [Diagnostic] = []
        /// Objects left out because they break a rule of the model, per entity: a seed read from records is checked
        /// as Core Data's save checks inserted objects (``StoreConversion/Validation``), and a migration's rejects
        /// count too. Listed in ``rejectsFile``; `decant seed` then exits 1.
        public var rejected: [String: Int] = [:]
        /// Objects written with a reference to an object that does not exist (listed in ``rejectsFile``).
        public var dangling = 0
        /// The rejects file, when one was written.
        public var rejectsFile: String?

        /// Whether the seeding found objects that break the model's rules (the store is in place without them).
        public var foundProblems: Bool { !rejected.isEmpty || dangling > 0 }

        /// Adds what a conversion of the seed left out.
        mutating func add(_ conversion: StoreConversion.Report) {
            warnings += conversion.warnings
            rejected.merge(conversion.rejected, uniquingKeysWith: +)
            dangling += conversion.dangling
            rejectsFile = conversion.rejectsFile ?? rejectsFile
        }

        /// Adds what a migration of the seed or the store rejected.
        mutating func add(_ migration: StoreMigration.Report) {
            rejected.merge(migration.rejectedPerEntity, uniquingKeysWith: +)
            dangling += migration.dangling
            rejectsFile = migration.rejectsFile ?? rejectsFile
        }

        /// One line for people.
        public var text: String {
            switch action {
            case .seeded:
                "\(store): seeded from \(seed) (\(objects.values.reduce(0, +)) objects\(version.map { ", model \($0)" } ?? "")"
                    + (migratedFrom.map { ", migrated from \($0)" } ?? "") + ")"
            case .alreadySeeded:
                "\(store): already seeded" + (version.map { ", version \($0) current" } ?? "") + "; nothing changed"
            case .migrated:
                "\(store): migrated from \(migratedFrom ?? "?") to \(version ?? "?") in place (backup \(backup ?? "none"))"
            }
        }
    }

    /// Seeds `destination` from `seed` if `destination` does not exist.
    ///
    /// With `options.bundle`, seeding is migration: a seed at another version than the destination version
    /// (`migration.destinationVersion`, else the current one) is migrated, as `migrate` would, before it is put in
    /// place, so a seed whose migration fails leaves the destination exactly as it was (absent). An existing
    /// destination at an older version is migrated in place after a backup beside it; a newer one (by a known
    /// version order) or an unknown one stops with what differs, and nothing is deleted. A seed in a model-less
    /// format follows `options.version` or the current version. The seed's format is `inputFormat` (`--from`) when
    /// given, else told by its content and extension.
    ///
    /// `migration` gives the migration's settings (mappings, rejects, version order through its bundle, …); when
    /// nil they are built from `options.bundle`, `options` and `registry`. A migration searches the project of the model at
    /// `migration.modelURL` for Xcode mapping models (``MappingSearch``) unless `migration.searchesForMappings` is
    /// false, as `decant migrate` does; without a `modelURL` there is no search. `progress` is the migration's
    /// (``StoreMigration/migrate(store:to:options:logger:progress:)``). A seed read from records (JSON, CSV, …) is
    /// checked against the model's rules as `validation` says (``StoreConversion/Validation``), its rejects listed
    /// in `validation.rejects` together with the migration's.
    /// - Throws: ``DecantError``: `.fileNotFound` for a missing seed, `.modelMismatch` for a destination that
    ///   is newer or of no version, the seed reader's and the migration's errors, `.cannotCreateOutput` when the
    ///   folder is not writable. On any error the destination is left absent or exactly as it was.
    public static func seed(
        default seed: URL, store destination: URL, options: FormatOptions = FormatOptions(), inputFormat: String? = nil,
        migration: StoreMigration.Options? = nil, validation: StoreConversion.Validation = StoreConversion.Validation(),
        registry: FormatRegistry = .builtIn, progress: ((_ entity: String, _ written: Int) -> Void)? = nil
    ) throws -> Report {
        // The destination's folders are made as an app's first run makes them (Application Support may not exist
        // yet); a seed that fails takes away the folders it made.
        let made = try makeFolders(above: destination)
        do {
            return try seedInto(
                existingFolder: destination, seed: seed, options: options, inputFormat: inputFormat,
                migration: migration, validation: validation, registry: registry, progress: progress)
        } catch {
            if let made { try? FileManager.default.removeItem(at: made) }
            throw error
        }
    }

    /// Makes the missing folders above `destination`; returns the outermost one it made (nil: none was missing).
    /// - Throws: `.cannotCreateOutput` naming the folder that cannot be made.
    private static func makeFolders(above destination: URL) throws -> URL? {
        let manager = FileManager.default
        var missing: [URL] = []
        var folder = destination.deletingLastPathComponent()
        while !manager.fileExists(atPath: folder.path), folder.path != "/", missing.count < 256 {
            missing.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        guard let outermost = missing.last else { return nil }
        do {
            try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw DecantError(
                .cannotCreateOutput, "cannot make the folder for the store",
                at: Location(path: destination.deletingLastPathComponent().displayPath), underlyingError: error)
        }
        return outermost
    }

    private static func seedInto(
        existingFolder destination: URL, seed: URL, options: FormatOptions, inputFormat: String?,
        migration: StoreMigration.Options?, validation: StoreConversion.Validation, registry: FormatRegistry,
        progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report {
        var migration = migration
        if migration == nil, let bundle = options.bundle {
            migration = StoreMigration.Options(bundle: bundle)
            migration?.formatOptions = options
            migration?.environment.registry = registry
        }
        // A seeding plans, then migrates: one mapping search for both.
        migration = migration?.searchingMappingsOnce()
        var options = options
        if let migration { options.bundle = migration.bundle }
        let format = try registry.inputFormat(of: seed, named: inputFormat)
        let storeFormat = try destinationFormat(of: destination, seed: format, registry: registry)
        // A seed that is a store of that format is put in place as it is, file by file; any other is converted.
        let copying = (format as? any StoreCopyingFormat).flatMap { $0.name == storeFormat.name ? $0 : nil }
        try DestinationLease.checkCanCreate(destination)
        if let rejects = validation.rejects ?? migration?.rejects { try DestinationLease.checkCanCreate(rejects) }
        let folder = destination.deletingLastPathComponent()
        // One lease of the destination, locked (an interrupted replacement repaired), held to the end and handed to
        // the conversion or migration the seeding runs: no moment without the lock for another seeder to enter.
        let lease = try DestinationLease(destination: destination, format: storeFormat, locking: true)
        defer { lease.release() }
        var report = Report(
            action: .alreadySeeded, store: destination.displayPath, seed: seed.displayPath, seedFormat: format.name,
            version: nil, objects: [:], warnings: lease.removedLeftovers)
        if !FileManager.default.fileExists(atPath: destination.path) {
            lease.removeLeftovers()
            guard let migration else {
                if let store = copying {
                    try copySeed(seed, into: lease, as: store)
                } else {
                    report.add(
                        try StoreConversion.convert(
                            from: seed, to: destination, inputFormat: format.name, options: options,
                            validation: validation, registry: registry, lease: lease))
                }
                try DestinationLease.synchronize(folder)
                report.action = .seeded
                report.objects = try storeFormat.describeStore(at: destination).objectCounts(model: nil)
                return report
            }
            return try seedMigrating(
                seed, format: format, copying: copying, into: lease, storeFormat: storeFormat, options: options,
                migration: migration, validation: validation, registry: registry, report: report, progress: progress)
        }
        let store = try storeFormat.describeStore(at: destination)
        guard let migration else {
            report.objects = try store.objectCounts(model: nil)
            return report
        }
        let bundle = migration.bundle
        let match = ModelMatch(
            storeHashes: store.entityVersionHashes, storeIdentifiers: store.versionIdentifiers, bundle: bundle)
        var target = bundle.currentIndex
        if let name = migration.destinationVersion {
            guard let index = bundle.versions.firstIndex(where: { $0.versionName == name }) else {
                let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
                throw DecantError(.usage, "\(bundle.name) has no version \(name) (it has \(names))")
            }
            target = index
        }
        guard let matched = match.matched, let found = bundle.index(of: matched), let target else {
            let what = "no version of \(bundle.name) (nearest \(match.nearest?.versionName ?? "none"): "
                + match.differences.map(\.description).joined(separator: "; ") + ")"
            throw DecantError(
                .modelMismatch, "the store is \(what); it is left as it is", at: Location(path: destination.displayPath))
        }
        if bundle.versions[target].entityVersionHashes == matched.entityVersionHashes {
            report.version = matched.versionName
            report.objects = try store.objectCounts(model: matched)
            return report
        }
        if bundle.order.isKnown, found > target, migration.destinationVersion == nil {
            throw DecantError(
                .modelMismatch,
                "the store is version \(matched.versionName ?? "?"), newer than the current "
                    + "\(bundle.versions[target].versionName ?? "?"); it is left as it is",
                at: Location(path: destination.displayPath))
        }
        return try migrateInPlace(
            destination, from: matched, report: report, migration: migration, lease: lease, progress: progress)
    }

    /// Seeds an absent `destination` from `seed` through a copy in a folder of its own beside it: the copy is
    /// migrated to the destination version (or, already there, moved) into place, and the folder removed. A
    /// failure leaves the destination absent.
    private static func seedMigrating(
        _ seed: URL, format: any RecordFormat, copying: (any StoreCopyingFormat)?, into lease: DestinationLease,
        storeFormat: any StoreDescribingFormat, options: FormatOptions,
        migration: StoreMigration.Options, validation: StoreConversion.Validation, registry: FormatRegistry,
        report: Report, progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report {
        let destination = lease.destination
        var result = report
        let folder = destination.deletingLastPathComponent()
        let staging = folder.appendingPathComponent(
            ".\(destination.lastPathComponent).decant-seed-\(DestinationLease.runToken())", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        } catch {
            throw DecantError(
                .cannotCreateOutput, "cannot make a folder for the seed's copy", at: Location(path: staging.displayPath),
                underlyingError: error)
        }
        let copy = staging.appendingPathComponent(destination.lastPathComponent)
        let copyFormat: any RecordFormat
        if let store = copying {
            try copyStoreSet(seed, as: store, to: store.files(at: copy), shownAs: copy.displayPath)
            copyFormat = store
        } else {
            // The seed's rejects are listed where the migration's are (the migration's are added after them).
            var validation = validation
            validation.rejects = validation.rejects ?? migration.rejects
            let conversion = try StoreConversion.convert(
                from: seed, to: copy, inputFormat: format.name, options: options, validation: validation,
                registry: registry)
            result.add(conversion)
            copyFormat = try registry.format(named: conversion.outputFormat)
        }
        var settings = migration
        settings.formatOptions.bundle = migration.bundle
        var seedRejects: Data?
        if result.rejectsFile != nil, let rejects = settings.rejects {
            seedRejects = try contents(of: rejects)
            settings.rejects = staging.appendingPathComponent("migration-rejects.ndjson")
        }
        // The copy is the seed's objects under a temporary name: what is wrong with them is named at the seed.
        func atSeed<T>(_ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch var error as DecantError where error.location?.path == copy.displayPath {
                error.location?.path = seed.displayPath
                throw error
            }
        }
        let plan = try atSeed { try StoreMigration.plan(store: copy, options: settings, dryRun: false).plan }
        result.action = .seeded
        result.version = plan.destinationVersion
        if plan.isUpToDate {
            // At the destination version already: the copy goes into place as it is.
            guard let store = copyFormat as? any StoreCopyingFormat else {
                throw DecantError(
                    .unsupportedFormat, "a \(copyFormat.name) copy of the seed cannot be put in place as it is",
                    at: Location(path: destination.displayPath))
            }
            try copySeed(copy, into: lease, as: store)
        } else {
            let migrated = try atSeed {
                try StoreMigration.migrate(
                    store: copy, to: .file(destination), options: settings, lease: lease, progress: progress)
            }
            result.migratedFrom = migrated.sourceVersion
            result.warnings += migrated.warnings
            result.add(migrated)
            if let seedRejects, let listed = settings.rejects, let rejects = migration.rejects {
                try DestinationLease(destination: rejects).write(
                    seedRejects + (try contents(of: listed)), what: "rejects file")
                result.rejectsFile = rejects.displayPath
            }
        }
        try DestinationLease.synchronize(folder)
        result.objects = try storeFormat.describeStore(at: destination).objectCounts(model: plan.destination)
        return result
    }

    /// The format of the store seeded at `destination`, as a conversion or migration into it writes it: the one its
    /// extension names, else the registry's default store format (SQLite); one that describes its stores
    /// (``StoreDescribingFormat``), by which an existing store is checked and a new one counted. A seed that is a
    /// store copied as it is keeps its format under a name another format's extension gives (a SQLite seed put in
    /// place as `Books.json`).
    /// - Throws: `.usage` when that format is no store format and the seed is no store to copy.
    private static func destinationFormat(of destination: URL, seed: any RecordFormat, registry: FormatRegistry) throws
        -> any StoreDescribingFormat
    {
        let format = try registry.outputFormat(for: destination, named: nil, storeByDefault: true)
        if let store = format as? any StoreDescribingFormat { return store }
        if seed is any StoreCopyingFormat, let store = seed as? any StoreDescribingFormat { return store }
        throw DecantError(
            .usage, "a seeded store is a store: \(format.name) is not a store format",
            at: Location(path: destination.displayPath))
    }

    /// The bytes of a rejects file written earlier in the run.
    /// - Throws: `.ioError` naming the file.
    private static func contents(of rejects: URL) throws -> Data {
        do {
            return try Data(contentsOf: rejects)
        } catch {
            throw DecantError(
                .ioError, "cannot read the rejects file back", at: Location(path: rejects.displayPath),
                underlyingError: error)
        }
    }

    /// Migrates an existing store of an older version to the destination version, in place, after a backup beside
    /// it (`Store.sqlite.backup-<version>`).
    private static func migrateInPlace(
        _ store: URL, from version: ObjectModel, report: Report, migration: StoreMigration.Options,
        lease: DestinationLease, progress: ((_ entity: String, _ written: Int) -> Void)?
    ) throws -> Report {
        let base = "\(store.displayPath).backup-\(version.versionName ?? "old")".replacingOccurrences(of: " ", with: "-")
        var backup = URL(fileURLWithPath: base)
        var number = 2
        while FileManager.default.fileExists(atPath: backup.path) {
            backup = URL(fileURLWithPath: "\(base)-\(number)")
            number += 1
        }
        let migrated = try StoreMigration.migrate(
            store: store, to: .inPlace(backup: backup), options: migration, lease: lease, progress: progress)
        var result = report
        result.action = migrated.action == .migrated ? .migrated : .alreadySeeded
        result.migratedFrom = migrated.sourceVersion
        result.version = migrated.destinationVersion
        result.backup = migrated.backup
        result.objects = migrated.written
        result.warnings += migrated.warnings
        result.add(migrated)
        return result
    }

    /// Copies a seed store as one consistent set into the lease's staging location, then moves it into place (its
    /// support folder first, the database last: its presence means "seeded").
    private static func copySeed(_ seed: URL, into lease: DestinationLease, as format: any StoreCopyingFormat) throws {
        do {
            try copyStoreSet(seed, as: format, to: lease.stagingFiles, shownAs: lease.displayPath)
            try lease.commit()
        } catch {
            lease.discard()
            throw error
        }
    }

    /// Copies the store at `seed` as one consistent set (``StoreCopyingFormat/copyStore(from:to:)``) to `files`: its
    /// main file at `files.main`, each support folder it has to the one of `files` (the set is shown as `shown` in
    /// messages).
    private static func copyStoreSet(
        _ seed: URL, as format: any StoreCopyingFormat, to files: StoreFileSet, shownAs shown: String
    ) throws {
        try format.copyStore(from: seed, to: files.main)
        for (from, into) in zip(format.files(at: seed).supportFolders, files.supportFolders)
        where FileManager.default.fileExists(atPath: from.path) {
            do {
                try FileManager.default.copyItem(at: from, to: into)
            } catch {
                throw DecantError(
                    .cannotCreateOutput, "cannot copy the seed's external data", at: Location(path: shown),
                    underlyingError: error)
            }
        }
    }
}
