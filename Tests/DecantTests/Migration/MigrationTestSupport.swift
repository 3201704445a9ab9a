import Decant
import DecantTestSupport
import Foundation
import Testing

/// Builds stores from records and reads them back, for migration tests.
enum MigrationFixtures {
    /// The samples' Notes bundle (v1 `Notes`, v2 `Notes 2`, v3 `Notes 3`).
    static func notes() throws -> ModelBundle {
        try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
    }

    /// A bundle of models built in code, the last one current.
    static func bundle(_ name: String, _ versions: [ObjectModel]) -> ModelBundle {
        ModelBundle(
            name: name,
            versions: versions,
            currentVersionName: versions.last?.versionName,
            sourceKind: .xcdatamodeld
        )
    }

    /// Version `version` of the story `Folder{name} ⇄ Note{content; folder}` whose version 2 renames the note's
    /// `content` to `text` (a renaming identifier), named `name version`; `note` adds to the Note of that version, its
    /// attributes after the text.
    static func folderNotes(_ name: String, version: Int, note change: (inout Entity) -> Void = { _ in })
        -> ObjectModel
    {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        var text = Attribute(name: version == 1 ? "content" : "text", type: .string, isOptional: true)
        if version > 1 { text.renamingIdentifier = "content" }
        note.attributes = [text]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        change(&note)
        return ObjectModel(versionName: "\(name) \(version)", entities: [folder, note])
    }

    /// Writes a SQLite store of `model` holding `records` (grouped by entity, in the order given).
    static func writeStore(at url: URL, model: ObjectModel, records: [Record]) throws {
        let writer = try SQLiteStoreWriter(creating: url, model: model)
        var order: [String] = []
        var byEntity: [String: [Record]] = [:]
        for record in records {
            if byEntity[record.entity] == nil { order.append(record.entity) }
            byEntity[record.entity, default: []].append(record)
        }
        for entity in order {
            guard let layout = RecordLayout(entity: entity, in: model) else { continue }
            var batch = RecordBatch(layout: layout)
            for record in byEntity[entity] ?? [] { batch.append(record) }
            try writer.write(batch)
        }
        try writer.finish()
    }

    /// Every record of the store at `url`, per entity, in primary-key order.
    static func read(_ url: URL, bundle: ModelBundle) throws -> [String: [Record]] {
        var reader = try SQLiteFormat().makeReader(at: url, options: FormatOptions(bundle: bundle))
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else {
            return [:]
        }
        var batch = RecordBatch(layout: layout)
        var result: [String: [Record]] = [:]
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count { result[batch.layout.entityName, default: []].append(batch.record(at: row)) }
        }
        return result
    }

    /// Migrates `store` again into a fresh file and returns whether the result reads the same as `output` and has the
    /// same hashes: running the same migration twice gives the same result.
    static func sameAgain(
        _ store: URL,
        as output: URL,
        options: StoreMigration.Options,
        bundle: ModelBundle
    ) throws -> Bool {
        let again = output.deletingLastPathComponent().appendingPathComponent("again-\(output.lastPathComponent)")
        defer { SQLiteFormat().files(at: again).remove() }
        _ = try StoreMigration.migrate(store: store, to: .file(again), options: options)
        return try read(again, bundle: bundle) == read(output, bundle: bundle) && hashes(again) == hashes(output)
    }

    /// The store's metadata entity hashes.
    static func hashes(_ url: URL) throws -> [String: Data] {
        try SQLiteStore(contentsOf: url).metadata.entityVersionHashes
    }

    /// An attribute's value in a record, by name.
    static func value(_ record: Record, _ name: String, model: ObjectModel) -> Value? {
        guard let layout = RecordLayout(entity: record.entity, in: model), let index = layout.attributeIndex(name)
        else {
            return nil
        }
        return record.values[index]
    }

    /// A relationship's value in a record, by name.
    static func relationship(_ record: Record, _ name: String, model: ObjectModel) -> RelationshipValue? {
        guard let layout = RecordLayout(entity: record.entity, in: model), let index = layout.relationshipIndex(name)
        else {
            return nil
        }
        return record.relationships[index]
    }

    /// Builds a record for `entity` of `model` from named values (missing attributes nil, relationships empty).
    static func record(
        _ entity: String,
        _ key: Int64,
        in model: ObjectModel,
        _ values: [String: Value] = [:],
        relationships: [String: RelationshipValue] = [:]
    ) -> Record {
        let layout = RecordLayout(entity: entity, in: model)
        let attributes = layout?.attributes.map { values[$0.name] ?? .null } ?? []
        let links =
            layout?.relationships.map { relationship in
                relationships[relationship.name] ?? (relationship.isToMany ? .toMany([]) : .toOne(nil))
            } ?? []
        return Record(entity: entity, id: .primaryKey(key), values: attributes, relationships: links)
    }
}

extension ObjectReference {
    /// `Entity/p<key>`.
    static func pk(_ entity: String, _ key: Int64) -> ObjectReference {
        ObjectReference(entity: entity, id: .primaryKey(key))
    }
}
