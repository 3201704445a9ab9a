public import DecantCore
public import Foundation

/// What `decant inspect` says about an input in a record format (JSON, CSV, …): its format, the entities it holds
/// with their object counts, and the model version it names. With a model, the whole input is read through it, so
/// what does not fit the model stops with a located error (exit 65) naming the file, line, entity and property.
///
/// ```swift
/// let report = try RecordsReport(input: URL(fileURLWithPath: "notes/"), options: FormatOptions(bundle: notes))
/// print(report.text)
/// ```
public struct RecordsReport: Sendable, Codable, Hashable {
    /// Always `records`.
    public var kind = "records"
    /// The path inspected, as given.
    public var path: String
    /// The format's name.
    public var format: String
    /// The model version the input follows or names.
    public var modelVersion: String?
    /// Whether every object was read through the model (`--model` given).
    public var checkedAgainstModel: Bool
    /// Objects per entity.
    public var entityCounts: [String: Int]
    /// Other facts (files, links).
    public var notes: [String]
    /// With a model that has Transformable attributes: what their values hold and whether
    /// `NSSecureUnarchiveFromData` decodes it.
    public var transformables: TransformableReport?

    /// Inspects `input`: through the model when `options.bundle` is set, else as the format can without one.
    /// - Throws: `.usage` when the format needs a model to be read; the reader's errors otherwise.
    public init(input: URL, format name: String? = nil, options: FormatOptions, registry: FormatRegistry = .builtIn) throws {
        let format = try registry.inputFormat(of: input, named: name)
        self.path = input.displayPath
        self.format = format.name
        if options.bundle != nil {
            var reader = try format.makeReader(at: input, options: options)
            var counts: [String: Int] = [:]
            var audit = TransformableAudit(model: reader.model, path: input.displayPath)
            if let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model) {
                var batch = RecordBatch(layout: layout)
                while try reader.nextBatch(into: &batch) {
                    counts[batch.layout.entityName, default: 0] += batch.count
                    audit.add(batch)
                }
            }
            self.transformables = audit.report.isEmpty ? nil : audit.report
            self.modelVersion = reader.model.versionName
            self.checkedAgainstModel = true
            self.entityCounts = counts
            self.notes = reader.diagnostics.map(\.description)
        } else if let describable = format as? any DescribableFormat {
            let description = try describable.describe(at: input, options: options)
            self.modelVersion = description.modelVersion
            self.checkedAgainstModel = false
            self.entityCounts = description.entityCounts
            self.notes = description.notes
        } else {
            throw DecantError(
                .usage, "a \(format.name) input is described through its model: give it with --model",
                at: Location(path: input.displayPath))
        }
    }

    /// The report as human-readable text.
    public var text: String {
        var lines = ["\(path): \(format)" + (modelVersion.map { ", model version \($0)" } ?? "")]
        lines.append(
            checkedAgainstModel ? "  every object read through the model: it fits" : "  (not checked against a model; give --model)")
        lines.append("  objects:")
        for name in entityCounts.keys.sorted() { lines.append("    \(name)  \(entityCounts[name] ?? 0)") }
        for note in notes { lines.append("  \(note)") }
        if let transformables { lines += transformables.lines }
        return lines.joined(separator: "\n")
    }
}
