public import DecantCore
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

    private let inputs: [EntityInput]
    private var nextInput = 0
    private var current: EntityCursor?
    private let identities: CSVIdentities
    private let entityNames: [String]
    /// The entities a join file's members may belong to: the identities of their objects are remembered, so that a
    /// member no entity file has is reported (the writer would otherwise drop the link without a word).
    private let memberEntities: Set<String>
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
    fileprivate struct EntityInput {
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
    fileprivate struct JoinInput {
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
    fileprivate static func readingOrder(_ inputs: [EntityInput], in model: ObjectModel) -> [EntityInput] {
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
    fileprivate func isUnreferencedStoreKey(_ key: CSVIdentities.Key, of entity: String) -> Bool {
        guard !referencedEntities.contains(entity), let holder = model.entity(named: entity) else { return false }
        return ([holder] + model.ancestors(of: holder)).contains { $0.uniquenessConstraints.contains([key.name]) }
    }

    /// Whether a table of reference texts takes one more: 4,096 texts and 1 MiB at most per column or join file
    /// (a folder's or tag's names, typically; references to millions of distinct objects are read one by one).
    fileprivate static func remembersMore(_ table: ByteStringTable<ObjectReference>) -> Bool {
        table.count < 4096 && table.keyBytes < 1 << 20
    }

    /// Notes that an entity file holds `object`.
    fileprivate func noteObject(_ object: ObjectReference) {
        guard memberEntities.contains(object.entity) else { return }
        objectsRead.insert(object)
        if !membersMissing.isEmpty { membersMissing[object] = nil }
    }

    /// Notes that a join file names `member` at `location`.
    fileprivate func noteMember(_ member: ObjectReference, at location: @autoclosure () -> Location) {
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

    /// The inverse of `relationship`, when the model declares one.
    private static func inverse(of relationship: Relationship, in model: ObjectModel) -> Relationship? {
        guard let name = relationship.inverseName,
            let holder = model.entity(named: relationship.inverseEntity ?? relationship.destinationEntity ?? "")
        else { return nil }
        return model.properties(of: holder).relationships.first { $0.name == name }
    }

    /// Whether a to-many relationship without a join file is carried by its inverse: a to-one, or a to-many listed
    /// in its own join files.
    private static func isCarriedByInverse(
        _ relationship: Relationship, in model: ObjectModel, listed: Set<String>
    ) -> Bool {
        guard let inverse = inverse(of: relationship, in: model) else { return false }
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
        guard let inverse = inverse(of: relationship, in: model), !inverse.isToMany,
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

    // MARK: One entity file

    /// The open entity file and its join files.
    private final class EntityCursor {
        let input: EntityInput
        let tokenizer: CSVTokenizer
        /// Per layout relationship, its join file's cursor.
        let joins: [Int: JoinCursor]
        unowned let reader: CSVReader
        let entity: Entity?
        /// Per layout attribute without a column: its default value.
        let defaults: [Int: Value]
        let width: Int
        var exhausted = false
        /// Per layout attribute: its type, and whether a field of that type is the value's text.
        let types: [AttributeType]
        let textual: [Bool]
        /// Whether records identified by their key start anonymous (``CSVReader/isUnreferencedStoreKey(_:of:)``).
        let keysUnreferenced: Bool
        /// How the file identifies its objects, and the column of the key (looked up once, not per row).
        let mode: CSVIdentities.Mode
        let keyColumn: Int?
        /// Whether the reader notes this entity's objects (``CSVReader/memberEntities``).
        let notesObjects: Bool
        /// Per layout relationship: where its value comes from.
        let sources: [RelationshipSource]
        /// Per layout relationship with a column: the reference each text read so far names, by the field's bytes.
        var references: [ByteStringTable<ObjectReference>]

        /// Where one relationship's value comes from.
        enum RelationshipSource {
            case column(Int)
            case join(JoinCursor)
            case viaInverse
            case empty
            case null
        }

        init(input: EntityInput, reader: CSVReader) throws {
            self.input = input
            self.reader = reader
            types = input.layout.attributes.map(\.type)
            textual = types.map(CSVValueText.isTextual)
            self.entity = reader.model.entity(named: input.layout.entityName)
            let name = input.layout.entityName
            mode = reader.identities.mode(of: name)
            if case .key(let key) = mode {
                keysUnreferenced = reader.isUnreferencedStoreKey(key, of: name)
                keyColumn = input.layout.attributeIndex(key.name).flatMap { input.columns.attributeColumns[$0] }
            } else {
                keysUnreferenced = false
                keyColumn = nil
            }
            tokenizer = try CSVTokenizer(
                url: input.url, path: input.path, entity: name, delimiter: reader.dialect.delimiter)
            width = try tokenizer.nextRecord() ? tokenizer.fields.count : 0
            var joins: [Int: JoinCursor] = [:]
            for (position, join) in input.joins {
                joins[position] = try JoinCursor(
                    input: join, owner: name, relationship: input.layout.relationships[position], reader: reader)
            }
            self.joins = joins
            notesObjects = reader.memberEntities.contains(name)
            sources = input.layout.relationships.indices.map { index in
                if let column = input.columns.relationshipColumns[index] { return .column(column) }
                if let join = joins[index] { return .join(join) }
                guard input.layout.relationships[index].isToMany else { return .null }
                if case .viaInverse = input.unlisted[index] ?? .toMany([]) { return .viaInverse }
                return .empty
            }
            references = input.layout.relationships.map { _ in ByteStringTable() }
            var defaults: [Int: Value] = [:]
            for (index, attribute) in input.layout.attributes.enumerated()
            where input.columns.attributeColumns[index] == nil {
                // The model's default as the model parsed it (``Attribute/defaultLiteral``), as inference and the
                // compiled model see it.
                if let value = attribute.defaultLiteral { defaults[index] = value }
            }
            self.defaults = defaults
        }

        /// Appends up to `limit` records; returns whether records may remain.
        func fill(_ batch: inout RecordBatch, limit: Int) throws -> Bool {
            guard !exhausted, width > 0 else { return false }
            let layout = input.layout
            let name = layout.entityName
            while batch.count < limit {
                guard try tokenizer.nextRecord() else {
                    exhausted = true
                    return false
                }
                let line = tokenizer.recordLine
                guard tokenizer.fields.count == width else {
                    throw DecantError(
                        .malformedInput,
                        "expected \(width) fields, as in the header (\(input.columns.names.joined(separator: ", "))), "
                            + "found \(tokenizer.fields.count)",
                        at: Location(path: input.path, line: line, entity: name))
                }
                if entity?.isAbstract == true {
                    throw DecantError(
                        .malformedInput,
                        "\(name) is abstract: its objects belong in the files of its sub-entities",
                        at: Location(path: input.path, line: line, entity: name))
                }
                let (id, anonymous) = try identity(line: line)
                if notesObjects { reader.noteObject(ObjectReference(entity: name, id: id)) }
                if anonymous, case .external(let text) = id {
                    batch.beginRecord(anonymous: text)
                } else {
                    batch.beginRecord(id: id)
                }
                for index in 0..<types.count {
                    guard let column = input.columns.attributeColumns[index] else {
                        batch.append(defaults[index] ?? .null, as: types[index])
                        continue
                    }
                    try appendAttribute(index, column: column, id: id, to: &batch)
                }
                if layout.relationships.isEmpty {
                    batch.endRecord()
                    continue
                }
                for (index, source) in sources.enumerated() {
                    switch source {
                    case .column(let column):
                        if isNil(column, textual: false) {
                            batch.appendNull()
                        } else {
                            batch.appendReference(try reference(index, column: column, id: id))
                        }
                    case .join(let join):
                        batch.appendReferenceList(try join.members(of: id))
                    case .viaInverse:
                        batch.appendViaInverse()
                    case .empty:
                        batch.appendReferenceList([])
                    case .null:
                        batch.appendNull()
                    }
                }
                batch.endRecord()
            }
            return true
        }

        /// Checks that every join file was read to its end, then closes the files.
        func finish() throws {
            defer {
                tokenizer.close()
                for join in joins.values { join.close() }
            }
            for position in joins.keys.sorted() { try joins[position]?.finish() }
        }

        /// The object the (non-nil) field `column` of relationship `index` names: a text read before names the
        /// object it named then (looked up by the field's bytes, no String made), any other is read by
        /// ``CSVIdentities/reference(_:through:of:at:)`` and remembered (``CSVReader/remembersMore(_:)``).
        private func reference(_ index: Int, column: Int, id: RecordID) throws -> ObjectReference {
            if let known = tokenizer.withBytes(column, { references[index].value(for: $0) }) { return known }
            let relationship = input.layout.relationships[index]
            // The location is built only for an error: per row, it cost more than the reference.
            let text = CSVValueText.trimmingSpaces(tokenizer.text(column))
            let reference = try reader.identities.reference(
                text, through: relationship, of: input.layout.entityName,
                at: objectLocation(column, id: id, keyPath: relationship.name))
            if CSVReader.remembersMore(references[index]) {
                tokenizer.withBytes(column) { references[index].insert(reference, for: $0) }
            }
            return reference
        }

        /// The identity of the current record, and whether nothing can refer to it (an id from its line).
        private func identity(line: Int) throws -> (id: RecordID, anonymous: Bool) {
            let name = input.layout.entityName
            switch mode {
            case .explicit:
                guard let column = input.columns.idColumn else { return (.external("\(name):\(line)"), true) }
                if let key = tokenizer.withBytes(column, CSVIdentities.primaryKey) { return (.primaryKey(key), false) }
                let id = try reader.identities.id(
                    of: name, text: CSVValueText.trimmingSpaces(tokenizer.text(column)),
                    at: tokenizerLocation(column, keyPath: CSVColumns.idHeader))
                return (id, false)
            case .key(let attribute):
                guard let column = keyColumn, !isNil(column, textual: CSVValueText.isTextual(attribute.type))
                else { return (.external("\(name):\(line)"), true) }
                if let id = tokenizer.withBytes(column, { CSVIdentities.plainID($0, mode: mode) }) {
                    return (id, keysUnreferenced)
                }
                let id = try reader.identities.id(
                    of: name, text: tokenizer.text(column), at: tokenizerLocation(column, keyPath: attribute.name))
                return (id, keysUnreferenced)
            case .implicit:
                return (.external("\(name):\(line)"), true)
            }
        }

        /// An integer written as decimal digits with an optional minus sign (at most 18 digits, so it fits), read
        /// from its bytes; nil for anything else, which then takes the general path.
        private static func plainInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
            var index = 0
            let negative = bytes.first == UInt8(ascii: "-")
            if negative { index = 1 }
            guard bytes.count > index, bytes.count - index <= 18 else { return nil }
            var value: Int64 = 0
            while index < bytes.count {
                let byte = bytes[index]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
                index += 1
            }
            return negative ? -value : value
        }

        /// A field of a non-textual type read straight from its bytes where it has the one plain spelling the
        /// writer gives it: digits for integers, `true`/`false`, an ISO 8601 date; nil for anything else.
        private static func fastParsed(
            _ bytes: UnsafeRawBufferPointer, as type: AttributeType
        ) -> CSVValueText.Parsed? {
            switch type {
            case .integer16, .integer32, .integer64:
                return plainInteger(bytes).map(CSVValueText.Parsed.integer)
            case .boolean:
                if bytes.elementsEqual("true".utf8) { return .integer(1) }
                if bytes.elementsEqual("false".utf8) { return .integer(0) }
                return plainInteger(bytes).map(CSVValueText.Parsed.integer)
            case .date:
                // What parseDate reads as ISO 8601: at least ten bytes with dashes at 4 and 7, nothing to trim.
                guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                    let first = bytes.first, first != 0x20, first != 0x09, let last = bytes.last, last != 0x20,
                    last != 0x09,
                    case .success(let seconds) = ExactDate.referenceSeconds(isoUTF8: bytes)
                else { return nil }
                return .real(seconds)
            default:
                return nil
            }
        }

        /// Where field `column` of object `id` is, for the property `keyPath`.
        private func objectLocation(_ column: Int, id: RecordID, keyPath: String) -> Location {
            var location = tokenizer.location(ofField: column)
            location.object = "\(input.layout.entityName)/\(id)"
            location.keyPath = keyPath
            return location
        }

        private func tokenizerLocation(_ column: Int, keyPath: String) -> Location {
            var location = tokenizer.location(ofField: column)
            location.keyPath = keyPath
            return location
        }

        /// Whether field `column` is nil: the null marker unquoted; else an empty field, unquoted or (for columns
        /// that are not text) quoted.
        private func isNil(_ column: Int, textual: Bool) -> Bool {
            let field = tokenizer.fields[column]
            let empty = field.start == field.end
            if let marker = reader.dialect.nullMarker {
                if !field.quoted && !empty {
                    return tokenizer.withBytes(column) { $0.elementsEqual(marker.utf8) }
                }
                return empty && !textual
            }
            return empty && (!field.quoted || !textual)
        }

        private func appendAttribute(
            _ index: Int, column: Int, id: RecordID, to batch: inout RecordBatch
        ) throws {
            let type = types[index]
            if isNil(column, textual: textual[index]) {
                return batch.appendNull()
            }
            switch type {
            case .string, .uri, .undefined, .objectID, .composite:
                tokenizer.withBytes(column) { batch.appendText(utf8: $0) }
            case .integer16, .integer32, .integer64, .boolean, .date:
                if let value = tokenizer.withBytes(column, { Self.fastParsed($0, as: type) }) {
                    return value.append(to: &batch)
                }
                try appendParsed(index, column: column, id: id, to: &batch)
            default:
                try appendParsed(index, column: column, id: id, to: &batch)
            }
        }

        /// Appends a field of a non-textual type parsed from its text.
        private func appendParsed(_ index: Int, column: Int, id: RecordID, to batch: inout RecordBatch) throws {
            let type = types[index]
            let text = tokenizer.text(column)
            guard let value = CSVValueText.parse(text, as: type) else {
                let attribute = input.layout.attributes[index]
                var location = tokenizer.location(ofField: column)
                location.object = "\(input.layout.entityName)/\(id)"
                location.keyPath = attribute.name
                let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
                throw DecantError(
                    .malformedInput,
                    "expected \(CSVValueText.expectation(for: type)) for \(type.modelName) attribute "
                        + "\(attribute.name), found \(shown.debugDescription)", at: location)
            }
            value.append(to: &batch)
        }
    }

    // MARK: One join file

    /// The open join file of one to-many relationship, read alongside its owners' file.
    private final class JoinCursor {
        let input: JoinInput
        let owner: String
        let relationship: Relationship
        let tokenizer: CSVTokenizer
        unowned let reader: CSVReader
        let width: Int
        /// The row read last and not yet given to its owner (the tokenizer's current record).
        var pending: (owner: RecordID, member: ObjectReference, position: Int64?, line: Int)?
        var exhausted = false
        /// How owners are identified (looked up once, not per row).
        let ownerMode: CSVIdentities.Mode
        /// The member each text read so far names, by the field's bytes (each noted once, when first read).
        var knownMembers = ByteStringTable<ObjectReference>()
        /// The members of the current owner (reused from owner to owner), and their positions when ordered.
        var list: [ObjectReference] = []
        var rows: [(position: Int64, index: Int, member: ObjectReference)] = []
        /// Whether members are sorted by a position column.
        let sorted: Bool

        init(input: JoinInput, owner: String, relationship: Relationship, reader: CSVReader) throws {
            self.input = input
            self.owner = owner
            self.relationship = relationship
            self.reader = reader
            ownerMode = reader.identities.mode(of: owner)
            sorted = input.columns.position != nil && relationship.isOrdered
            tokenizer = try CSVTokenizer(
                url: input.url, path: input.path, entity: owner, delimiter: reader.dialect.delimiter)
            width = try tokenizer.nextRecord() ? tokenizer.fields.count : 0
            exhausted = width == 0
        }

        func close() { tokenizer.close() }

        /// The members of `id`: the rows at the cursor whose owner it is, in position order.
        func members(of id: RecordID) throws -> [ObjectReference] {
            list.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
            while true {
                if pending == nil {
                    guard try readRow() else { break }
                }
                guard let row = pending, row.owner == id else { break }
                if sorted {
                    rows.append((row.position ?? .max, rows.count, row.member))
                } else {
                    list.append(row.member)
                }
                pending = nil
            }
            if sorted {
                rows.sort { ($0.position, $0.index) < ($1.position, $1.index) }
                list.append(contentsOf: rows.lazy.map(\.member))
            }
            return list
        }

        /// Checks that no row is left: a row left over belongs to no object of the entity file, or is out of order.
        func finish() throws {
            if pending == nil { _ = try readRow() }
            guard let row = pending else { return }
            // The pending row is the tokenizer's current record.
            let text = CSVValueText.trimmingSpaces(tokenizer.text(input.columns.owner))
            throw DecantError(
                .malformedInput,
                "owner \(text.debugDescription) is not an object of \(owner).csv, or this file's rows are not "
                    + "grouped by owner in the order of \(owner).csv",
                at: Location(path: input.path, line: row.line, entity: owner, keyPath: relationship.name))
        }

        private func readRow() throws -> Bool {
            guard !exhausted else { return false }
            guard try tokenizer.nextRecord() else {
                exhausted = true
                return false
            }
            let line = tokenizer.recordLine
            guard tokenizer.fields.count == width else {
                throw DecantError(
                    .malformedInput, "expected \(width) fields, as in the header, found \(tokenizer.fields.count)",
                    at: Location(path: input.path, line: line, entity: owner, keyPath: relationship.name))
            }
            let columns = input.columns
            let ownerID: RecordID
            if let plain = tokenizer.withBytes(columns.owner, { CSVIdentities.plainID($0, mode: ownerMode) }) {
                ownerID = plain
            } else {
                let ownerText = CSVValueText.trimmingSpaces(tokenizer.text(columns.owner))
                ownerID = try reader.identities.id(of: owner, text: ownerText, at: location(columns.owner))
            }
            let member: ObjectReference
            if let known = tokenizer.withBytes(columns.member, { knownMembers.value(for: $0) }) {
                // Read and noted before (a second note changes nothing).
                member = known
            } else {
                let memberText = CSVValueText.trimmingSpaces(tokenizer.text(columns.member))
                guard !memberText.isEmpty else {
                    throw DecantError(.malformedInput, "an empty member", at: location(columns.member))
                }
                member = try reader.identities.reference(
                    memberText, through: relationship, of: owner, at: location(columns.member))
                reader.noteMember(member, at: location(columns.member))
                if CSVReader.remembersMore(knownMembers) {
                    tokenizer.withBytes(columns.member) { knownMembers.insert(member, for: $0) }
                }
            }
            var position: Int64?
            if let column = columns.position {
                let text = CSVValueText.trimmingSpaces(tokenizer.text(column))
                if !text.isEmpty {
                    guard let value = Int64(text) else {
                        throw DecantError(
                            .malformedInput, "expected an integer position, found \(text.debugDescription)",
                            at: location(column))
                    }
                    position = value
                }
            }
            pending = (ownerID, member, position, line)
            return true
        }

        private func location(_ column: Int) -> Location {
            var location = tokenizer.location(ofField: column)
            location.keyPath = relationship.name
            return location
        }
    }
}

@available(*, unavailable)
extension CSVReader: Sendable {}
