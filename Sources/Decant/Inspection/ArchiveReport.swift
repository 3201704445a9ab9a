import DecantCore
import DecantCodecs
public import DecantFormats
public import Foundation

/// What `decant inspect` says about a keyed archive: its classes with their object counts, the coder keys of its
/// app classes with the kinds of value seen, and a starting class mapping to edit and pass to
/// `decant convert --class-mapping`.
///
/// ```swift
/// let report = try ArchiveReport(archive: URL(fileURLWithPath: "LegacyNotes.archive"))
/// print(report.text)
/// ```
public struct ArchiveReport: Sendable, Hashable, Encodable {
    /// Always `archive`.
    public var kind = "archive"
    /// What the archive holds.
    public var survey: ArchiveSurvey

    /// Surveys the archive at `url`.
    /// - Throws: `.fileNotFound` when it cannot be read, `.malformedInput` naming the object and key that are wrong.
    public init(archive url: URL, path: String? = nil) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw DecantError(
                .fileNotFound, "cannot read the archive", at: Location(path: path ?? url.displayPath),
                underlyingError: error)
        }
        self.survey = try ArchiveSurvey(data: data, path: path ?? url.displayPath)
    }

    private enum CodingKeys: String, CodingKey {
        case kind, path, encoding, objectCount, topKeys, rootClass, classes, mapping
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(survey.path, forKey: .path)
        try container.encode(survey.encoding, forKey: .encoding)
        try container.encode(survey.objectCount, forKey: .objectCount)
        try container.encode(survey.topKeys, forKey: .topKeys)
        try container.encodeIfPresent(survey.rootClass, forKey: .rootClass)
        try container.encode(survey.classes, forKey: .classes)
        try container.encode(survey.mapping, forKey: .mapping)
    }

    /// The report as text: classes, keys with kinds, then the starting mapping.
    public var text: String {
        var lines = [
            "\(survey.path): keyed archive (\(survey.encoding) property list), \(survey.objectCount) entries"
        ]
        lines.append(
            "  $top:  \(survey.topKeys.joined(separator: ", "))"
                + (survey.rootClass.map { " (root: \($0))" } ?? ""))
        let appClasses = survey.classes.filter { !$0.isValueClass }
        let valueClasses = survey.classes.filter(\.isValueClass)
        lines.append("  classes:")
        if appClasses.isEmpty { lines.append("    (no app classes)") }
        for archivedClass in appClasses {
            let superclasses =
                archivedClass.superclasses.isEmpty
                ? "" : " : " + archivedClass.superclasses.joined(separator: " : ")
            lines.append(
                "    \(archivedClass.name)\(superclasses)  \(archivedClass.count) "
                    + "object\(archivedClass.count == 1 ? "" : "s")"
            )
            for key in archivedClass.keys {
                let kinds = key.kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                    .map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
                lines.append("      \(key.name)  \(kinds)")
            }
        }
        if !valueClasses.isEmpty {
            lines.append(
                "  Foundation values: "
                    + valueClasses.map { "\($0.name) ×\($0.count)" }.joined(separator: ", "))
        }
        lines.append("  starting class mapping (edit, save as JSON, pass with --class-mapping):")
        let empty = "{ \"classes\" : { } }"
        let mapping =
            survey.mapping.classes.isEmpty
            ? empty : (try? survey.mapping.jsonData()).map { String(decoding: $0, as: UTF8.self) } ?? empty
        lines += mapping.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        return lines.joined(separator: "\n")
    }

    /// The report as the JSON document `--json` prints (see `schemas/inspect.schema.json`).
    public func jsonData() throws -> Data { try jsonDocument() }
}
