public import DecantCore
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
    /// What `--mapping` names: Decant mapping files and Xcode mapping models.
    public struct Loaded: Sendable {
        /// Decant mapping files (YAML or JSON), one hop each.
        public var files: [ExplicitMapping] = []
        /// Xcode mapping models (`.xcmappingmodel`, `.cdm`); each is used for the hop its entity hashes fit.
        public var xcode: [XcodeMappingModel] = []
        /// Whether each Xcode mapping model was named on its own (it must then fit a hop) rather than found in a folder.
        public var named: [Bool] = []

        public init() {}
    }

    /// Loads what `url` names: a mapping file, an `.xcmappingmodel` (or its `xcmapping.xml`), a `.cdm`, or a folder
    /// holding any of these (searched like Core Data searches a bundle for `.cdm` files: each one is used where its
    /// hashes fit a hop, the others are ignored).
    /// - Throws: `.fileNotFound`; `.malformedInput` naming what does not read.
    public static func loadAny(from url: URL, bundle: ModelBundle, into loaded: inout Loaded) throws {
        let name = url.lastPathComponent.lowercased()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such mapping file or folder", at: Location(path: url.displayPath))
        }
        if name.hasSuffix(".cdm") || name.hasSuffix(".xcmappingmodel") || name == "xcmapping.xml" {
            loaded.xcode.append(try XcodeMappingModel.load(contentsOf: url, bundle: bundle))
            loaded.named.append(true)
            return
        }
        guard isDirectory.boolValue else {
            loaded.files.append(try load(from: url))
            return
        }
        let entries = try FileManager.default.contentsOfDirectory(
            at: url, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles]
        ).sorted { $0.lastPathComponent < $1.lastPathComponent }
        for entry in entries {
            let entryName = entry.lastPathComponent.lowercased()
            if entryName.hasSuffix(".cdm") || entryName.hasSuffix(".xcmappingmodel") {
                loaded.xcode.append(try XcodeMappingModel.load(contentsOf: entry, bundle: bundle))
                loaded.named.append(false)
            } else if [".yaml", ".yml", ".json"].contains(where: { entryName.hasSuffix($0) }) {
                loaded.files.append(try load(from: entry))
            } else if entry.hasDirectoryPath || (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                try loadAny(from: entry, bundle: bundle, into: &loaded)
            }
        }
    }

    /// The Xcode mapping models that fit hops of `bundle`, as the engine runs them: for each pair of neighbouring
    /// versions the first model whose source hashes are all the first version's and destination hashes all the
    /// second's (Core Data's test, coredata-formats.md 3.3); a model fitting no neighbours may span several versions.
    /// - Throws: `.usage` for a model named on its own that fits no pair of versions.
    public static func resolve(_ loaded: Loaded, bundle: ModelBundle) throws -> [MappingModel] {
        let versions = bundle.versions
        let hashes = versions.map { Set($0.entityVersionHashes.values) }
        func fits(_ model: XcodeMappingModel, _ from: Int, _ to: Int) -> Bool {
            let s = model.sourceEntityHashes
            let d = model.destinationEntityHashes
            return !s.isEmpty && !d.isEmpty && s.isSubset(of: hashes[from]) && d.isSubset(of: hashes[to])
        }
        var used: Set<Int> = []
        var result: [MappingModel] = []
        for from in versions.indices.dropLast() {
            if let index = loaded.xcode.indices.first(where: { !used.contains($0) && fits(loaded.xcode[$0], from, from + 1) }) {
                used.insert(index)
                result.append(loaded.xcode[index].mappingModel(from: versions[from], to: versions[from + 1]))
            }
        }
        for (index, model) in loaded.xcode.enumerated() where !used.contains(index) {
            if let (from, to) = versions.indices.lazy.flatMap({ from in
                versions.indices.filter { $0 > from + 1 }.map { (from, $0) }
            }).first(where: { fits(model, $0.0, $0.1) }) {
                result.append(model.mappingModel(from: versions[from], to: versions[to]))
                continue
            }
            if index < loaded.named.count, loaded.named[index] {
                throw DecantError(
                    .usage,
                    "the mapping model's entity hashes fit no two versions of \(bundle.name), so it maps no hop of "
                        + "this migration",
                    at: Location(path: model.path)
                )
            }
        }
        return result
    }
}

extension StoreMigration.Options {
    /// Loads what `--mapping` names (``MappingFiles/loadAny(from:bundle:into:)``): Decant mapping files into
    /// ``mappings``, Xcode mapping models resolved to their hops into ``mappingModels``.
    ///
    /// ```swift
    /// var options = StoreMigration.Options(bundle: moody)
    /// try options.loadMappings(from: [URL(fileURLWithPath: "Migrations/")])   // every .xcmappingmodel in it
    /// ```
    public mutating func loadMappings(from urls: [URL]) throws {
        var loaded = MappingFiles.Loaded()
        for url in urls { try MappingFiles.loadAny(from: url, bundle: bundle, into: &loaded) }
        mappings += loaded.files
        mappingModels += try MappingFiles.resolve(loaded, bundle: bundle)
    }
}
