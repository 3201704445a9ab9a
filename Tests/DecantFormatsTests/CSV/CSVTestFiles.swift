import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation

/// Writing CSV inputs by hand and reading CSV outputs back, for the CSV tests.
enum CSVTestFiles {
    /// A new temporary folder holding `files` (name → text, written as UTF-8 bytes as they are).
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = try Fixtures.temporaryDirectory().appendingPathComponent("input", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    /// Every record of `url`, per entity, in the order read.
    static func read(_ url: URL, options: FormatOptions, batchSize: Int = 1024) throws -> [String: [Record]] {
        var reader = try CSVReader(contentsOf: url, options: options, batchSize: batchSize)
        return try records(of: &reader)
    }

    /// Every record a reader yields, per entity.
    static func records(of reader: inout some RecordReader) throws -> [String: [Record]] {
        var result: [String: [Record]] = [:]
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return [:] }
        var batch = layout.emptyBatch()
        while try reader.nextBatch(into: &batch) {
            result[batch.layout.entityName, default: []] += (0..<batch.count).map { batch.record(at: $0) }
        }
        return result
    }

    /// The records of `batches` as they read back from a batch (values typed by the layout), per entity.
    static func records(of batches: [RecordBatch]) -> [String: [Record]] {
        var result: [String: [Record]] = [:]
        for batch in batches {
            result[batch.layout.entityName, default: []] += (0..<batch.count).map { batch.record(at: $0) }
        }
        return result
    }

    /// Writes `batches` to a new CSV output at `url`.
    static func write(_ batches: [RecordBatch], model: ObjectModel, to url: URL, dialect: CSVDialect = .standard) throws
    {
        let writer = try CSVWriter(creating: url, model: model, dialect: dialect)
        for batch in batches { try writer.write(batch) }
        try writer.finish()
    }

    /// The error reading `url` throws, when it is a ``DecantError``.
    static func readError(_ url: URL, options: FormatOptions) -> DecantError? {
        do {
            _ = try read(url, options: options)
            return nil
        } catch {
            return error as? DecantError
        }
    }

    /// A bundle of one version.
    static func bundle(_ model: ObjectModel) -> ModelBundle {
        ModelBundle(
            name: model.versionName ?? "Model", versions: [model], currentVersionName: model.versionName,
            sourceKind: .xcdatamodeld)
    }

    /// `Folder{name} ⇄ Note{createdAt, title, wordCount, pinned, folder}` with a uniqueness constraint on
    /// `Folder.name`.
    static let notes: ObjectModel = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        folder.uniquenessConstraints = [["name"]]
        var note = Entity(name: "Note")
        var pinned = Attribute(name: "pinned", type: .boolean, isOptional: false)
        pinned.defaultValue = "YES"
        note.attributes = [
            Attribute(name: "createdAt", type: .date, isOptional: true),
            Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "wordCount", type: .integer32, isOptional: true),
            pinned,
        ]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        return ObjectModel(versionName: "Notes", entities: [folder, note], versionIdentifiers: ["1"])
    }()
}
