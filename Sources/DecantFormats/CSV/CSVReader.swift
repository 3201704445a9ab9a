public import DecantCore
import DecantCodecs
public import Foundation

/// Streams the objects of CSV input as record batches: one file of one entity, or a folder with a file per entity
/// (`Note.csv`) and a join file per to-many relationship (`Folder.notes.csv`), read one record at a time.
///
/// Entity files are read in model order, except that a file other files refer to (through to-one columns or a join
/// file's members) is read before theirs, so that a store writer knows the objects before their references arrive;
/// entities of one hierarchy keep their model order. Each file's header maps columns to the entity's attributes and
/// to-one relationships (``CSVFormat`` describes the files); missing columns read as the attribute's default value,
/// else nil. A join file's rows follow the order of its entity file and are merged in as each owner is read, so memory
/// holds one record and a chunk of each open file. A to-many relationship without a join file is carried by its
/// inverse (``RelationshipValue/viaInverse``) when the inverse is to-one or listed in its own join file, and empty
/// otherwise.
///
/// Everything the files hold is checked against the model: an unknown column or file, a field that does not fit
/// its attribute's type, a row with the wrong number of fields, a broken quote, invalid UTF-8 or a truncated file
/// is `.malformedInput` naming the file, line and column, the entity, the object and the property.
///
/// ```swift
/// var reader = try CSVReader(contentsOf: folder, options: FormatOptions(bundle: notes))
/// var batch = RecordLayout(entity: "Note", in: reader.model)!.emptyBatch()
/// while try reader.nextBatch(into: &batch) { print(batch.layout.entityName, batch.count) }
/// ```
public final class CSVReader: EntityNamingReader {
    /// The model the records follow.
    public let model: ObjectModel
    /// The entity `FormatOptions.entity` named, when the input holds objects of one unnamed entity.
    public private(set) var entityFromOptions: String?
    /// Records per batch.
    public var batchSize: Int
    /// The dialect the files are read in.
    public let dialect: CSVDialect

    let inputs: [EntityInput]
    private var nextInput = 0
    private var current: EntityCursor?
    let identities: CSVIdentities
    let entityNames: [String]
    /// The entities a join file's members may belong to: the identities of their objects are remembered, so that a
    /// member no entity file has is reported (the writer would otherwise drop the link without a word).
    let memberEntities: Set<String>
    /// The entities whose objects some file may refer to (the destinations of to-one columns and join files, and
    /// their sub-entities). An object of another entity identified by a key its store enforces (a uniqueness
    /// constraint) is started anonymous: nothing will look it up, and the store's own index refuses a key two
    /// objects share, so a writer need not remember its id (at millions of objects, that is most of the cost).
    private let referencedEntities: Set<String>
    /// The objects of ``memberEntities`` read so far.
    private var objectsRead: Set<ObjectReference> = []
    /// Members named by join files and not read (yet) from an entity file, with where each was first named.
    private var membersMissing: [ObjectReference: Location] = [:]

    /// One entity file and its join files.
    struct EntityInput {
        var layout: RecordLayout
        var url: URL
        var path: String
        var columns: CSVColumns
        /// Per layout relationship: its join file.
        var joins: [Int: JoinInput]
        /// Per layout relationship without a join file (to-many): what each record carries.
        var unlisted: [Int: RelationshipValue]
    }

    /// One join file.
    struct JoinInput {
        var url: URL
        var path: String
        var columns: CSVJoinColumns
    }

    /// Opens CSV input: a file (its entity is `options.entity`, else its name) or a folder. The model is
    /// `options.version` of `options.bundle` when given, else the version whose hashes a folder's `_decant.json`
    /// records, else the bundle's current version. The dialect is `options.csv.delimiter` and `options.csv.nullMarker`,
    /// else the folder's recorded dialect, else commas with empty unquoted fields for nil.
    ///
    /// Every header is read and checked here, before any record.
    /// - Throws: ``DecantError``: `.usage` without a bundle, for an unknown version or entity, or a bad dialect;
    ///   `.modelMismatch` when no version matches a folder's hashes; `.malformedInput` for an unknown file or column.
    public init(contentsOf url: URL, options: FormatOptions, batchSize: Int = 1024) throws {
        self.batchSize = max(1, batchSize)
        let displayPath = url.displayPath
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such file or folder", at: Location(path: displayPath))
        }
        let metadata = isDirectory.boolValue ? try CSVFolderMetadata.read(in: url, displayPath: displayPath) : nil
        let metadataLocation = Location(path: displayPath + "/" + CSVFolderMetadata.fileName)
        let dialect = try CSVDialect(
            options: options, defaults: try metadata?.dialect(at: metadataLocation) ?? .standard)
        self.dialect = dialect
        let model = try Self.resolveModel(
            options: options, metadata: metadata, at: metadataLocation, input: displayPath)
        self.model = model
        self.entityNames = model.entities.map(\.name)
        var identities = try CSVIdentities(model: model, keys: options.keys)

        // The files: entity files and join files.
        var entityFiles: [String: (url: URL, path: String)] = [:]
        var joinFiles: [(entity: String, relationship: Relationship, url: URL, path: String)] = []
        if isDirectory.boolValue {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
            } catch {
                throw DecantError(
                    .ioError, "cannot list the folder", at: Location(path: displayPath), underlyingError: error)
            }
            for name in names where !name.hasPrefix(".") && name.lowercased().hasSuffix(".csv") {
                let fileURL = url.appendingPathComponent(name)
                let path = displayPath + "/" + name
                let parts = name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard parts.count <= 2 else {
                    throw DecantError(
                        .malformedInput, "the file \(name) is not named Entity.csv or Entity.relationship.csv",
                        at: Location(path: path))
                }
                guard let entity = Self.entity(named: parts[0], in: model) else {
                    throw DecantError(
                        .malformedInput,
                        "no entity \(parts[0]) in model \(model.versionName ?? "(unnamed)"): files are named "
                            + "Entity.csv or Entity.relationship.csv (entities: "
                            + "\(model.entities.map(\.name).joined(separator: ", ")))", at: Location(path: path))
                }
                if parts.count == 1 {
                    if let other = entityFiles[entity.name] {
                        throw DecantError(
                            .malformedInput, "a second file for \(entity.name), besides \(other.path)",
                            at: Location(path: path, entity: entity.name))
                    }
                    entityFiles[entity.name] = (fileURL, path)
                } else {
                    let relationships = model.properties(of: entity).relationships.filter { !$0.isTransient }
                    let candidates = relationships.map { (name: $0.name, target: $0) }
                    let location = Location(path: path, entity: entity.name)
                    guard let relationship = try CSVColumns.match(parts[1], among: candidates, at: location),
                        relationship.isToMany
                    else {
                        throw DecantError(
                            .malformedInput,
                            "\(entity.name) has no to-many relationship \(parts[1]): a join file is named "
                                + "Entity.relationship.csv for a to-many relationship", at: location)
                    }
                    if joinFiles.contains(where: {
                        $0.entity == entity.name && $0.relationship.name == relationship.name
                    }) {
                        throw DecantError(
                            .malformedInput, "a second join file for \(entity.name).\(relationship.name)", at: location)
                    }
                    joinFiles.append((entity.name, relationship, fileURL, path))
                }
            }
        } else {
            let stem = url.deletingPathExtension().lastPathComponent
            guard let entity = Self.entity(named: options.entity ?? stem, in: model) else {
                let named =
                    options.entity.map { "--entity \($0) names no entity" }
                    ?? "the file name \(stem.debugDescription) names no entity"
                throw DecantError(
                    .usage,
                    "\(named) of model \(model.versionName ?? "(unnamed)"); give the entity with --entity "
                        + "(\(model.entities.map(\.name).joined(separator: ", ")))", at: Location(path: displayPath))
            }
            entityFiles[entity.name] = (url, displayPath)
            entityFromOptions = options.entity
        }

        // Headers, and from them how each entity's objects are identified.
        var inputs: [EntityInput] = []
        for entity in model.entities {
            guard let file = entityFiles[entity.name] else { continue }
            guard let layout = RecordLayout(entity: entity.name, in: model) else { continue }
            let tokenizer = try CSVTokenizer(
                url: file.url, path: file.path, entity: entity.name, delimiter: dialect.delimiter)
            defer { tokenizer.close() }
            let header = try tokenizer.nextRecord() ? (0..<tokenizer.fields.count).map(tokenizer.text) : []
            let columns = try CSVColumns(header: header, layout: layout) { tokenizer.location(ofField: $0) }
            if columns.idColumn != nil {
                identities.setMode(.explicit, for: entity.name)
            } else if let key = identities.keyAttribute(of: entity.name),
                let index = layout.attributeIndex(key.name), columns.attributeColumns[index] != nil
            {
                identities.setMode(.key(key), for: entity.name)
            } else {
                identities.setMode(.implicit, for: entity.name)
            }
            inputs.append(
                EntityInput(layout: layout, url: file.url, path: file.path, columns: columns, joins: [:], unlisted: [:])
            )
        }
        for join in joinFiles {
            let location = Location(path: join.path, entity: join.entity)
            guard let index = inputs.firstIndex(where: { $0.layout.entityName == join.entity }),
                let position = inputs[index].layout.relationshipIndex(join.relationship.name)
            else {
                throw DecantError(
                    .malformedInput,
                    "lists members of \(join.entity) objects, but there is no \(join.entity).csv", at: location)
            }
            let tokenizer = try CSVTokenizer(
                url: join.url, path: join.path, entity: join.entity, delimiter: dialect.delimiter)
            defer { tokenizer.close() }
            let header = try tokenizer.nextRecord() ? (0..<tokenizer.fields.count).map(tokenizer.text) : []
            // An empty join file lists no members.
            let columns =
                header.isEmpty
                ? CSVJoinColumns(owner: 0, member: 1, position: nil)
                : try CSVJoinColumns(
                    header: header, location: { tokenizer.location(ofField: $0) }, fileLocation: location)
            inputs[index].joins[position] = JoinInput(url: join.url, path: join.path, columns: columns)
            try Self.checkInverseColumns(
                of: join.relationship, owner: join.entity, in: model, inputs: inputs, at: location)
        }
        let listed = Set(joinFiles.map { "\($0.entity).\($0.relationship.name)" })
        for index in inputs.indices {
            for (position, relationship) in inputs[index].layout.relationships.enumerated()
            where relationship.isToMany && inputs[index].joins[position] == nil {
                inputs[index].unlisted[position] =
                    Self.isCarriedByInverse(relationship, in: model, listed: listed) ? .viaInverse : .toMany([])
            }
        }
        self.inputs = Self.readingOrder(inputs, in: model)
        self.identities = identities
        let destinations = Set(joinFiles.compactMap(\.relationship.destinationEntity))
        self.memberEntities = Self.hierarchies(of: destinations, in: model)
        var referenced = destinations
        for input in inputs {
            for (position, relationship) in input.layout.relationships.enumerated()
            where input.columns.relationshipColumns[position] != nil {
                if let destination = relationship.destinationEntity { referenced.insert(destination) }
            }
        }
        self.referencedEntities = Self.hierarchies(of: referenced, in: model)
    }

    /// The order entity files are read in: model order, except that the file of an entity that other files refer
    /// to (through a to-one column or a join file's members) is read before theirs, so that a store writer has its
    /// objects when the references arrive and resolves them from memory rather than staging each one for the end
    /// (a join file's million tag references, with `Tag` after `Note` in the model). Entities of one hierarchy, which
    /// share a store table, keep their model order, so their objects take the same keys; where files refer to each
    /// other both ways, model order decides.
    static func readingOrder(_ inputs: [EntityInput], in model: ObjectModel) -> [EntityInput] {
        let roots = inputs.map { input -> String in
            guard let entity = model.entity(named: input.layout.entityName) else { return input.layout.entityName }
            return (model.ancestors(of: entity).last ?? entity).name
        }
        var before: [[Int]] = []
        for (index, input) in inputs.enumerated() {
            var destinations: Set<String> = []
            for (position, relationship) in input.layout.relationships.enumerated()
            where input.columns.relationshipColumns[position] != nil || input.joins[position] != nil {
                if let destination = relationship.destinationEntity { destinations.insert(destination) }
            }
            let referred = hierarchies(of: destinations, in: model)
            before.append(
                inputs.indices.filter { other in
                    other != index
                        && (referred.contains(inputs[other].layout.entityName)
                            || (roots[other] == roots[index] && other < index))
                })
        }
        var placed = [Bool](repeating: false, count: inputs.count)
        var order: [EntityInput] = []
        while order.count < inputs.count {
            let unplaced = inputs.indices.filter { !placed[$0] }
            guard let next = unplaced.first(where: { before[$0].allSatisfy { placed[$0] } }) ?? unplaced.first
            else { break }
            placed[next] = true
            order.append(inputs[next])
        }
        return order
    }

    /// The entities named in `names` and their sub-entities.
    private static func hierarchies(of names: Set<String>, in model: ObjectModel) -> Set<String> {
        Set(
            model.entities.filter { entity in
                ([entity] + model.ancestors(of: entity)).contains { names.contains($0.name) }
            }.map(\.name))
    }

    /// Whether objects of `entity` identified by `key` need no remembered id: no file refers to the entity, and a
    /// uniqueness constraint of one attribute (the entity's or an ancestor's) makes the store refuse a shared key.
    func isUnreferencedStoreKey(_ key: CSVIdentities.Key, of entity: String) -> Bool {
        guard !referencedEntities.contains(entity), let holder = model.entity(named: entity) else { return false }
        return ([holder] + model.ancestors(of: holder)).contains { $0.uniquenessConstraints.contains([key.name]) }
    }

    /// Whether a table of reference texts takes one more: 4,096 texts and 1 MiB at most per column or join file
    /// (a folder's or tag's names, typically; references to millions of distinct objects are read one by one).
    static func remembersMore(_ table: ByteStringTable<ObjectReference>) -> Bool {
        table.count < 4096 && table.keyBytes < 1 << 20
    }

    /// Notes that an entity file holds `object`.
    func noteObject(_ object: ObjectReference) {
        guard memberEntities.contains(object.entity) else { return }
        objectsRead.insert(object)
        if !membersMissing.isEmpty { membersMissing[object] = nil }
    }

    /// Notes that a join file names `member` at `location`.
    func noteMember(_ member: ObjectReference, at location: @autoclosure () -> Location) {
        guard !objectsRead.contains(member), membersMissing[member] == nil else { return }
        membersMissing[member] = location()
    }

    /// After the last entity file: every member a join file named is an object some entity file holds.
    private func checkMembers() throws {
        guard let (member, location) = membersMissing.min(by: { Self.precedes($0.value, $1.value) }) else { return }
        let others = membersMissing.count - 1
        throw DecantError(
            .malformedInput,
            "member \(member.entity)/\(member.id) is not an object of \(member.entity).csv: the "
                + "member side of this link is missing"
                + (others > 0 ? " (and \(others) more member\(others == 1 ? "" : "s") no entity file has)" : ""),
            at: location)
    }

    private static func precedes(_ a: Location, _ b: Location) -> Bool {
        (a.path ?? "", a.line ?? 0, a.column ?? 0) < (b.path ?? "", b.line ?? 0, b.column ?? 0)
    }

    /// The model: `options.version`, else the version matching the folder's recorded hashes, else the current one.
    private static func resolveModel(
        options: FormatOptions, metadata: CSVFolderMetadata?, at location: Location, input: String
    ) throws -> ObjectModel {
        if options.version == nil, let metadata, !metadata.entityVersionHashes.isEmpty, let bundle = options.bundle {
            return try ModelMatch.resolve(
                storeHashes: try metadata.hashes(at: location), bundle: bundle, cachedModel: nil, at: location)
        }
        return try options.modelForModelLessInput(at: Location(path: input))
    }

    /// The entity a file name names: exactly, else ignoring case when that is unambiguous.
    private static func entity(named name: String, in model: ObjectModel) -> Entity? {
        if let exact = model.entity(named: name) { return exact }
        let folded = model.entities.filter { $0.name.lowercased() == name.lowercased() }
        return folded.count == 1 ? folded[0] : nil
    }

    /// Whether a to-many relationship without a join file is carried by its inverse: a to-one, or a to-many listed
    /// in its own join files.
    private static func isCarriedByInverse(
        _ relationship: Relationship, in model: ObjectModel, listed: Set<String>
    ) -> Bool {
        guard let inverse = model.inverse(of: relationship) else { return false }
        if !inverse.isToMany { return true }
        let destination = relationship.destinationEntity ?? ""
        return model.entities.contains { entity in
            (entity.name == destination || model.ancestors(of: entity).contains { $0.name == destination })
                && listed.contains("\(entity.name).\(inverse.name)")
        }
    }

    /// A one-to-many in a join file is stored by stores on its inverse to-one: every member file must have that
    /// column, or the membership would be lost on the way.
    private static func checkInverseColumns(
        of relationship: Relationship, owner: String, in model: ObjectModel, inputs: [EntityInput],
        at location: Location
    ) throws {
        guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
            let destination = relationship.destinationEntity
        else { return }
        for input in inputs {
            let name = input.layout.entityName
            guard let entity = model.entity(named: name),
                name == destination || model.ancestors(of: entity).contains(where: { $0.name == destination }),
                let position = input.layout.relationshipIndex(inverse.name),
                input.columns.relationshipColumns[position] == nil
            else { continue }
            throw DecantError(
                .malformedInput,
                "lists members of \(owner).\(relationship.name), whose inverse \(name).\(inverse.name) has no "
                    + "column in \(input.path): stores keep this membership on \(inverse.name); add a "
                    + "\(inverse.name) column (\(owner)/p1, …) to \(input.path)", at: location)
        }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        while true {
            if current == nil {
                guard nextInput < inputs.count else {
                    try checkMembers()
                    return false
                }
                current = try EntityCursor(input: inputs[nextInput], reader: self)
                nextInput += 1
            }
            guard let cursor = current else { return false }
            batch.removeAll(newLayout: cursor.input.layout)
            batch.entityNames = entityNames
            let more = try cursor.fill(&batch, limit: batchSize)
            if !more {
                try cursor.finish()
                current = nil
            }
            if batch.count > 0 { return true }
        }
    }
}

@available(*, unavailable)
extension CSVReader: Sendable {}
