import DecantCore
import DecantCodecs
public import DecantFormats
public import Foundation

/// What `decant inspect` says about a plain property list: its top-level shape, the arrays of dictionaries it holds
/// (key path, count, keys with the kinds of value seen), the values holding keyed archives decoded in place, and a
/// starting mapping to edit and pass to `decant convert --plist-mapping`.
///
/// ```swift
/// let report = try PropertyListReport(propertyList: URL(fileURLWithPath: "Bookmarks.plist"))
/// print(report.text)
/// ```
public struct PropertyListReport: Sendable, Hashable, Encodable {
    /// Always `propertyList`.
    public var kind = "propertyList"
    /// What the property list holds.
    public var survey: PropertyListSurvey

    /// Surveys the property list at `url`.
    /// - Throws: `.fileNotFound` when it cannot be read, `.malformedInput` naming the offset, line or value that is
    ///   wrong.
    public init(propertyList url: URL, path: String? = nil) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw DecantError(
                .fileNotFound, "cannot read the property list", at: Location(path: path ?? url.displayPath),
                underlyingError: error)
        }
        self.survey = try PropertyListSurvey(data: data, path: path ?? url.displayPath)
    }

    private enum CodingKeys: String, CodingKey {
        case kind, path, encoding, top, topCount, topKeys, arrays, archives, archiveCount, mapping
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(survey.path, forKey: .path)
        try container.encode(survey.encoding, forKey: .encoding)
        try container.encode(survey.top, forKey: .top)
        try container.encode(survey.topCount, forKey: .topCount)
        try container.encode(survey.topKeys, forKey: .topKeys)
        try container.encode(survey.arrays, forKey: .arrays)
        try container.encode(survey.archives, forKey: .archives)
        try container.encode(survey.archiveCount, forKey: .archiveCount)
        try container.encode(survey.mapping, forKey: .mapping)
    }

    /// The report as text: the top level, the arrays with their keys, the archived values, the starting mapping.
    public var text: String {
        func kinds(_ key: PropertyListSurvey.Key) -> String {
            key.kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) ×\($0.value)" }
                .joined(separator: ", ")
        }
        let unit = survey.top == "dictionary" ? "key" : "element"
        var lines = [
            "\(survey.path): property list (\(survey.encoding)), top level: \(survey.top)"
                + (["array", "set", "dictionary"].contains(survey.top)
                    ? " of \(survey.topCount) \(unit)\(survey.topCount == 1 ? "" : "s")" : "")
        ]
        if !survey.topKeys.isEmpty {
            lines.append("  top-level keys:")
            for key in survey.topKeys {
                lines.append("    \(key.name)  \(key.kinds.keys.sorted().joined(separator: ", "))")
            }
        }
        lines.append("  arrays of dictionaries:")
        if survey.arrays.isEmpty { lines.append("    (none)") }
        for array in survey.arrays {
            lines.append(
                "    \(array.keyPath.isEmpty ? "(top level)" : array.keyPath)  \(array.count) "
                    + "dictionar\(array.count == 1 ? "y" : "ies")" + (array.isTopLevel ? "" : " (nested)"))
            for key in array.keys { lines.append("      \(key.name)  \(kinds(key))") }
        }
        if survey.archiveCount > 0 {
            lines.append("  values holding keyed archives (\(survey.archiveCount)):")
            for archive in survey.archives {
                lines.append("    \(archive.place)  \(archive.value) (\(archive.objectCount) entries)")
            }
            if survey.archiveCount > survey.archives.count {
                lines.append("    … and \(survey.archiveCount - survey.archives.count) more")
            }
        }
        if survey.arrays.filter(\.isTopLevel).count > 1 {
            lines.append(
                "  several arrays to convert: the mapping's keyPath names the first; choose one with --key-path")
        }
        lines.append("  starting mapping (edit, save as JSON, pass with --plist-mapping):")
        let mapping = (try? survey.mapping.jsonData()).map { String(decoding: $0, as: UTF8.self) }
            ?? "{ \"arrays\" : { }, \"keyPath\" : null }"
        lines += mapping.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        return lines.joined(separator: "\n")
    }

    /// The report as the JSON document `--json` prints (see `schemas/inspect.schema.json`).
    public func jsonData() throws -> Data { try jsonDocument() }
}
