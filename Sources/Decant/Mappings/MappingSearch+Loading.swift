import DecantCore
import Foundation
import Synchronization

extension MappingSearch {
    /// What a search found and read for one bundle: the search, the mapping models of the bundle read whole, the notes
    /// on those let pass, and per model read the path it was found at (as shown).
    struct Loaded: Sendable {
        var search: MappingSearch
        var loaded: MappingFiles.Loaded
        var origins: [String: String]
    }

    /// Searches the project of the model at `model` and loads the mapping models found that fit hops of `bundle`
    /// (``MappingFiles/loadXcode(from:bundle:named:into:versions:)``: each read for its hashes first, read whole only
    /// when they fit), skipping the real paths in `skipping` (mappings given with --mapping). Found paths are read
    /// and named as ``shown(_:model:here:)`` shows them.
    static func load(forModelAt model: URL, bundle: ModelBundle, skipping: Set<String>, here: String) throws -> Loaded {
        let search = find(forModelAt: model)
        var loaded = MappingFiles.Loaded()
        loaded.paths = skipping
        var origins: [String: String] = [:]
        let versions = MappingFiles.VersionSets(bundle)
        for found in search.found {
            // Read through the path shown, so that what a note or an error says of it is named as shown too.
            let url = URL(fileURLWithPath: shown(found, model: model, here: here))
            let count = loaded.xcode.count
            try MappingFiles.loadXcode(from: url, bundle: bundle, named: false, into: &loaded, versions: versions)
            if loaded.xcode.count > count, let mapping = loaded.xcode.last { origins[mapping.path] = url.displayPath }
        }
        return Loaded(search: search, loaded: loaded, origins: origins)
    }

    /// A path the search works on (absolute) as the user would type it: relative to the current folder `here` when
    /// the model was named by a relative path, absolute otherwise.
    static func shown(_ url: URL, model: URL, here: String) -> String {
        let path = url.standardizedFileURL.path
        guard !model.relativePath.hasPrefix("/") else { return path }
        if path == here { return "." }
        return path.hasPrefix(here + "/") ? String(path.dropFirst(here.count + 1)) : path
    }

    /// Keeps what the search found and read, for every run made with one ``StoreMigration/Options`` value and its
    /// copies (``StoreMigration/Options/searchingMappingsOnce()``): a batch of stores, or a seeding that plans and
    /// then migrates, searches and reads the mapping models once. Runs that ask at the same time wait for the one
    /// search. Keyed by everything the result depends on (the model's path, the current folder, the paths given with
    /// --mapping, the bundle); files changed after the search are not seen.
    final class Memo: Sendable {
        struct Key: Hashable, Sendable {
            var model: String
            var isRelative: Bool
            var currentFolder: String
            var loadedPaths: Set<String>
            var bundle: ModelBundle
        }

        private let entries = Mutex<[Key: Loaded]>([:])

        init() {}

        /// What `key` loaded before, else what `make` loads now (kept when it does not throw).
        func loaded(for key: Key, _ make: () throws -> Loaded) throws -> Loaded {
            try entries.withLock { entries in
                if let known = entries[key] { return known }
                let made = try make()
                entries[key] = made
                return made
            }
        }
    }
}

extension StoreMigration.Options {
    /// These options with the mapping search's result kept for every run made with them (or a copy of them): the
    /// project is searched, and its mapping models read, once for all the stores of a batch, as for a seeding's plan
    /// and migration. Mapping models changed on disk after the first run are not seen by the later ones.
    ///
    /// ```swift
    /// let settings = options.searchingMappingsOnce()
    /// for store in stores { _ = try StoreMigration.migrate(store: store, to: .inPlace(backup: nil), options: settings) }
    /// ```
    public func searchingMappingsOnce() -> StoreMigration.Options {
        var options = self
        if options.mappingSearchMemo == nil { options.mappingSearchMemo = MappingSearch.Memo() }
        return options
    }
}
