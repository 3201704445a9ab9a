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
