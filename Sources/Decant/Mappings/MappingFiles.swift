public import DecantCore
import DecantCodecs
import DecantFormats
import DecantYAML
public import Foundation

/// Loads Decant mapping files: JSON when the file is `.json` (or its first character is `{`), YAML otherwise.
///
/// ```swift
/// let mapping = try MappingFiles.load(from: URL(fileURLWithPath: "Notes2-Notes3.yaml"))
/// var options = StoreMigration.Options(bundle: notes)
/// options.mappings = [mapping]
/// ```
public enum MappingFiles: Sendable {
    /// Reads and checks one mapping file.
    /// - Throws: `.fileNotFound`; `.malformedInput` naming the file, line and key of what does not fit.
    public static func load(from url: URL) throws -> ExplicitMapping {
        let path = url.displayPath
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw DecantError(
                .fileNotFound,
                "cannot read the mapping file",
                at: Location(path: path),
                underlyingError: error
            )
        }
        let text = String(decoding: data, as: UTF8.self)
        return try parse(text, path: path)
    }

    /// Reads mapping-file text; `path` names it in errors and decides JSON (`.json`) or YAML.
    public static func parse(_ text: String, path: String) throws -> ExplicitMapping {
        let isJSON = path.lowercased().hasSuffix(".json") || text.drop { $0.isWhitespace }.first == "{"
        let root =
            isJSON
            ? try MappingFileReader.parseJSON(text, path: path) : try YAMLMappingNodes.parse(text, path: path)
        return try MappingFileReader.mapping(from: root, path: path)
    }
}

extension MappingFiles {
    /// What `--mapping` names, or the mapping search finds: Decant mapping files and Xcode mapping models.
    public struct Loaded: Sendable {
        /// Decant mapping files (YAML or JSON), one hop each.
        public var files: [ExplicitMapping] = []
        /// Xcode mapping models (`.xcmappingmodel`, `.cdm`) of this bundle; each is used for the hop its entity
        /// hashes fit.
        public var xcode: [XcodeMappingModel] = []
        /// What loading noticed and let pass: mapping models of another bundle (ignored, never compiled against this
        /// one), found files that do not read.
        public var notes: [String] = []
        /// The real paths loaded so far: a file reached twice (named twice, or through a link) counts once.
        public var paths: Set<String> = []

        public init() {}
    }

    /// The path that stands for a mapping file or model however it is reached: symbolic links resolved, an
    /// `xcmapping.xml` standing for its `.xcmappingmodel`.
    static func realPath(of url: URL) -> String {
        var url = url.standardizedFileURL.resolvingSymlinksInPath()
        if url.lastPathComponent.lowercased() == "xcmapping.xml" { url = url.deletingLastPathComponent() }
        return url.path
    }

    /// Loads what `url` names: a mapping file, an `.xcmappingmodel` (or its `xcmapping.xml`), a `.cdm`, or a folder
    /// holding any of these (searched like Core Data searches a bundle for `.cdm` files: each one is used where its
    /// hashes fit a hop, the others are ignored). A file reached twice is loaded once.
    /// - Throws: `.fileNotFound`; `.malformedInput` naming what does not read.
    public static func loadAny(from url: URL, bundle: ModelBundle, into loaded: inout Loaded) throws {
        let name = url.lastPathComponent.lowercased()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such mapping file or folder", at: Location(path: url.displayPath))
        }
        if name.hasSuffix(".cdm") || name.hasSuffix(".xcmappingmodel") || name == "xcmapping.xml" {
            try loadXcode(from: url, bundle: bundle, named: true, into: &loaded)
            return
        }
        guard isDirectory.boolValue else {
            guard loaded.paths.insert(realPath(of: url)).inserted else { return }
            loaded.files.append(try load(from: url))
            return
        }
        let entries = try FileManager.default.contentsOfDirectory(
            at: url, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles]
        ).sorted { $0.lastPathComponent < $1.lastPathComponent }
        for entry in entries {
            let entryName = entry.lastPathComponent.lowercased()
            if entryName.hasSuffix(".cdm") || entryName.hasSuffix(".xcmappingmodel") {
                try loadXcode(from: entry, bundle: bundle, named: false, into: &loaded)
            } else if [".yaml", ".yml", ".json"].contains(where: { entryName.hasSuffix($0) }) {
                guard loaded.paths.insert(realPath(of: entry)).inserted else { continue }
                loaded.files.append(try load(from: entry))
            } else if entry.hasDirectoryPath || (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                try loadAny(from: entry, bundle: bundle, into: &loaded)
            }
        }
    }

    /// Loads the Xcode mapping model at `url` when it is one of `bundle`'s: its entity hashes fit two of its
    /// versions (Core Data's test, coredata-formats.md 3.3). A mapping model of another bundle (it names another
    /// `.xcdatamodeld`, entities this bundle's versions do not have, or hashes that fit no two of them) is ignored
    /// with a note, never compiled against this bundle's entities.
    ///
    /// A found one (`named` false) is read for its hashes first (``XcodeMappingHeader``) and read whole only when
    /// they fit two versions, as Core Data compares a mapping model's hashes before it uses it: a `.xcmappingmodel`
    /// whose model paths name no version of `bundle` is ruled out by its entity names before its model snapshots are
    /// decoded (an entity's version hash covers its name, coredata-formats.md 8.4, so hashes of entities that no
    /// version has by name fit none). A named one is read whole, so that whatever in it does not read is an error.
    /// `versions` is `bundle`'s ``VersionSets``, when the caller keeps them for many files.
    /// - Throws: `.malformedInput` for a file that does not read; a found one (`named` false) that does not read is
    ///   ignored with a note instead.
    static func loadXcode(
        from url: URL, bundle: ModelBundle, named: Bool, into loaded: inout Loaded, versions: VersionSets? = nil
    ) throws {
        guard loaded.paths.insert(realPath(of: url)).inserted else { return }
        let versions = versions ?? VersionSets(bundle)
        if !named {
            do {
                let header = try XcodeMappingHeader(contentsOf: url)
                if header.needsSnapshot(bundle: bundle),
                    !versions.namesCouldFit(source: header.sourceEntityNames, destination: header.destinationEntityNames)
                {
                    loaded.notes.append(anotherBundleNote(url, "its entity hashes fit no two versions of \(bundle.name)"))
                    return
                }
                let hashes = try header.entityHashes(bundle: bundle)
                guard !versions.pairs(source: hashes.source, destination: hashes.destination).isEmpty else {
                    loaded.notes.append(anotherBundleNote(url, "its entity hashes fit no two versions of \(bundle.name)"))
                    return
                }
            } catch let error as DecantError {
                loaded.notes.append(note(for: error, url, bundle: bundle))
                return
            }
        }
        let model: XcodeMappingModel
        do {
            model = try XcodeMappingModel.load(contentsOf: url, bundle: bundle)
        } catch let error as DecantError where error.code == .modelMismatch || !named {
            loaded.notes.append(note(for: error, url, bundle: bundle))
            return
        }
        guard !versions.pairs(source: model.sourceEntityHashes, destination: model.destinationEntityHashes).isEmpty
        else {
            loaded.notes.append(anotherBundleNote(url, "its entity hashes fit no two versions of \(bundle.name)"))
            return
        }
        loaded.xcode.append(model)
    }

    /// The note for a mapping model that is let pass because reading it failed with `error`.
    private static func note(for error: DecantError, _ url: URL, bundle: ModelBundle) -> String {
        error.code == .modelMismatch
            ? anotherBundleNote(url, "not of \(bundle.name): \(error.message)")
            : "\(url.displayPath) is ignored: it does not read (\(error.message))"
    }

    /// A bundle's versions' entity hashes and entity names, computed once for the many mapping models a search finds.
    struct VersionSets: Sendable {
        /// Per version, in bundle order: its entity version hashes.
        var hashes: [Set<Data>]
        /// Per version: its entity names.
        var names: [Set<String>]

        init(_ bundle: ModelBundle) {
            let byName = bundle.versions.map(\.entityVersionHashes)
            hashes = byName.map { Set($0.values) }
            names = byName.map { Set($0.keys) }
        }

        /// The pairs of versions (indices, the older first) whose hashes hold every source hash and every destination
        /// hash respectively; none when either set is empty (coredata-formats.md 3.3).
        func pairs(source: Set<Data>, destination: Set<Data>) -> [(from: Int, to: Int)] {
            guard !source.isEmpty, !destination.isEmpty else { return [] }
            var pairs: [(from: Int, to: Int)] = []
            for from in hashes.indices where source.isSubset(of: hashes[from]) {
                for to in hashes.indices where to > from && destination.isSubset(of: hashes[to]) {
                    pairs.append((from, to))
                }
            }
            return pairs
        }

        /// Whether entities with these names could have hashes that fit a pair: some version has every source name
        /// and a later one every destination name. An entity's hash covers its name (coredata-formats.md 8.4), so
        /// when this is false no hashes of such entities fit.
        func namesCouldFit(source: Set<String>, destination: Set<String>) -> Bool {
            guard !source.isEmpty, !destination.isEmpty else { return false }
            return names.indices.contains { from in
                source.isSubset(of: names[from])
                    && names.indices.contains { $0 > from && destination.isSubset(of: names[$0]) }
            }
        }
    }

    /// The note for a mapping model of another bundle, left alone: a plan counts these and names them only with
    /// --verbose (``isAnotherBundleNote(_:)``).
    static func anotherBundleNote(_ url: URL, _ reason: String) -> String {
        "\(url.displayPath) is ignored: \(anotherBundleWords) (\(reason))"
    }

    /// Whether `note` is an ``anotherBundleNote(_:_:)``.
    static func isAnotherBundleNote(_ note: String) -> Bool {
        note.contains(" is ignored: \(anotherBundleWords) (")
    }

    private static let anotherBundleWords = "it is a mapping model of another bundle"

    /// The pairs of `bundle`'s versions (indices, the older first) whose entity hashes `model` fits: every source
    /// hash is the first version's and every destination hash the second's (coredata-formats.md 3.3).
    static func fittingPairs(_ model: XcodeMappingModel, bundle: ModelBundle) -> [(from: Int, to: Int)] {
        VersionSets(bundle).pairs(source: model.sourceEntityHashes, destination: model.destinationEntityHashes)
    }

    /// The Xcode mapping models that fit hops of `bundle`, as the engine runs them: for each pair of neighbouring
    /// versions the model whose source hashes are all the first version's and destination hashes all the second's
    /// (Core Data's test, coredata-formats.md 3.3); a model fitting no neighbours may span several versions.
    ///
    /// When the same mapping is there twice (a `.xcmappingmodel` and the `.cdm` Xcode compiled from it, or a copy),
    /// the one nearest `model` (fewest folder steps from the folder holding the model bundle to the file's,
    /// ``folderSteps(from:to:)``) is used, the first by path among equally near ones; without `model`, the first.
    /// - Throws: `.usage` when two different mapping models fit the same hop, naming both.
    public static func resolve(_ loaded: Loaded, bundle: ModelBundle, nearestTo model: URL? = nil) throws
        -> [MappingModel]
    {
        let versions = bundle.versions
        let sets = VersionSets(bundle)
        let pairs = loaded.xcode.map { sets.pairs(source: $0.sourceEntityHashes, destination: $0.destinationEntityHashes) }
        let steps = loaded.xcode.map { mapping in
            model.map { folderSteps(from: $0, to: URL(fileURLWithPath: mapping.path)) } ?? 0
        }
        /// The index of the nearest of `indices` (the first of equally near ones).
        func nearest(_ indices: [Int]) -> Int? { indices.min { (steps[$0], $0) < (steps[$1], $1) } }
        var used: Set<Int> = []
        var result: [MappingModel] = []
        for from in versions.indices.dropLast() {
            let fitting = loaded.xcode.indices.filter { index in
                !used.contains(index) && pairs[index].contains { $0.from == from && $0.to == from + 1 }
            }
            guard let first = fitting.first else { continue }
            for other in fitting.dropFirst() {
                guard loaded.xcode[other].entityMappings == loaded.xcode[first].entityMappings else {
                    throw DecantError(
                        .usage,
                        "two mapping models claim the hop \(versions[from].versionName ?? "?") → "
                            + "\(versions[from + 1].versionName ?? "?"): \(loaded.xcode[first].path) and "
                            + "\(loaded.xcode[other].path); keep one (or name the one to use with --mapping)"
                    )
                }
            }
            used.formUnion(fitting)
            let chosen = nearest(fitting) ?? first
            result.append(loaded.xcode[chosen].mappingModel(from: versions[from], to: versions[from + 1]))
        }
        // Models that span versions; the same mapping twice counts once here too, the nearest copy used.
        var spanning: [(index: Int, pair: (from: Int, to: Int))] = []
        for index in loaded.xcode.indices.sorted(by: { (steps[$0], $0) < (steps[$1], $1) }) where !used.contains(index) {
            guard let pair = pairs[index].first(where: { $0.to > $0.from + 1 }),
                !spanning.contains(where: { loaded.xcode[$0.index].entityMappings == loaded.xcode[index].entityMappings })
            else { continue }
            spanning.append((index, pair))
        }
        for (index, pair) in spanning.sorted(by: { $0.index < $1.index }) {
            result.append(loaded.xcode[index].mappingModel(from: versions[pair.from], to: versions[pair.to]))
        }
        return result
    }

    /// How many folder steps lead from the folder holding `model` (a model bundle) to the folder holding `file`: up
    /// to the nearest folder both are in, then down (a file beside the bundle is 0 steps away, one in a sibling
    /// folder 2). Relative paths are taken from the current folder; links are not resolved.
    static func folderSteps(from model: URL, to file: URL) -> Int {
        let start = model.standardizedFileURL.deletingLastPathComponent().pathComponents
        let end = file.standardizedFileURL.deletingLastPathComponent().pathComponents
        let shared = zip(start, end).prefix { $0 == $1 }.count
        return (start.count - shared) + (end.count - shared)
    }
}

extension StoreMigration.Options {
    /// Loads what `--mapping` names (``MappingFiles/loadAny(from:bundle:into:)``): Decant mapping files into
    /// ``mappings``, Xcode mapping models resolved to their hops into ``mappingModels``; mapping models of another
    /// bundle into ``mappingNotes``.
    ///
    /// ```swift
    /// var options = StoreMigration.Options(bundle: moody)
    /// try options.loadMappings(from: [URL(fileURLWithPath: "Migrations/")])   // every .xcmappingmodel in it
    /// ```
    public mutating func loadMappings(from urls: [URL]) throws {
        var loaded = MappingFiles.Loaded()
        loaded.paths = mappingPaths
        for url in urls { try MappingFiles.loadAny(from: url, bundle: bundle, into: &loaded) }
        // What a file names that its models lack is the file's mistake, found now and named at its line (65), as a
        // misspelt key is, rather than as a plan problem (1) once a store is read.
        for file in loaded.files {
            let mistakes = MigrationPlan.mappingFileMistakes(of: file, in: bundle)
            guard let found = mistakes.first else { continue }
            // Two checks may find one mistake (a property the source lacks): said once, with the nearest name.
            let line = found.location?.line
            let first = mistakes.first { $0.location?.line == line && $0.message.contains("(did you mean") } ?? found
            let others = Set(mistakes.compactMap(\.location?.line)).subtracting(line.map { [$0] } ?? []).count
            let more = others > 0 ? " (and mistakes at \(others) more line\(others == 1 ? "" : "s") of the file)" : ""
            throw DecantError(
                .malformedInput,
                "\(first.entity)\(first.property.map { ".\($0)" } ?? ""): \(first.message)"
                    + (first.advice.map { "; \($0)" } ?? "") + more,
                at: first.location ?? Location(path: file.path))
        }
        mappings += loaded.files
        mappingModels += try MappingFiles.resolve(loaded, bundle: bundle)
        mappingNotes += loaded.notes
        mappingPaths = loaded.paths
    }

    /// The mapping models the search finds for ``modelURL``'s project (``MappingSearch``), resolved to their hops,
    /// less those for a hop a mapping given in ``mappings`` or ``mappingModels`` starts (the given one wins), with
    /// what the search noticed. Empty when the search is off or no ``modelURL`` is set.
    func searchedMappings() throws -> (models: [MappingModel], outcome: StoreMigration.MappingSearchOutcome?) {
        guard searchesForMappings, let modelURL else { return ([], nil) }
        let here = FileManager.default.currentDirectoryPath
        let found: MappingSearch.Loaded
        if let mappingSearchMemo {
            let key = MappingSearch.Memo.Key(
                model: modelURL.standardizedFileURL.path, isRelative: !modelURL.relativePath.hasPrefix("/"),
                currentFolder: here, loadedPaths: mappingPaths, bundle: bundle)
            found = try mappingSearchMemo.loaded(for: key) {
                try MappingSearch.load(forModelAt: modelURL, bundle: bundle, skipping: mappingPaths, here: here)
            }
        } else {
            found = try MappingSearch.load(forModelAt: modelURL, bundle: bundle, skipping: mappingPaths, here: here)
        }
        let search = found.search
        let loaded = found.loaded
        let origins = found.origins
        func shown(_ url: URL) -> String { MappingSearch.shown(url, model: modelURL, here: here) }
        var notes = loaded.notes
        if search.isTruncated {
            notes.append(
                "the mapping search stopped at its bounds (\(MappingSearch.maximumDepth) folders deep, "
                    + "\(MappingSearch.maximumEntries) entries) in \(shown(search.root)); name further mapping "
                    + "models with --mapping")
        }
        func index(of name: String) -> Int? { bundle.index(ofVersionNamed: name) }
        let given = Set(
            mappings.compactMap { index(of: $0.source) } + mappingModels.compactMap { index(of: $0.sourceVersion) })
        // A mapping given for a hop wins: found ones for that hop are set aside before two found ones could clash.
        var kept = MappingFiles.Loaded()
        for model in loaded.xcode {
            if let pair = MappingFiles.fittingPairs(model, bundle: bundle).first(where: { given.contains($0.from) }) {
                notes.append(
                    "\(origins[model.path] ?? model.path) is not used: a mapping given with --mapping maps the hop "
                        + "from \(bundle.versions[pair.from].versionName ?? "?")")
                continue
            }
            kept.xcode.append(model)
        }
        let models = try MappingFiles.resolve(kept, bundle: bundle, nearestTo: modelURL)
        return (
            models,
            StoreMigration.MappingSearchOutcome(
                root: shown(search.root), found: search.found.map(shown), used: [], notes: notes,
                origins: origins)
        )
    }
}
