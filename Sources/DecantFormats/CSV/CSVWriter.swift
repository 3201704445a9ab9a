public import DecantCore
import DecantCodecs
public import Foundation

/// Writes record batches as CSV: a folder with one file per entity (`Note.csv`), one join file per to-many
/// relationship whose members are listed (`Folder.notes.csv`) and `_decant.json` (the model version and dialect),
/// or, for a destination ending in `.csv`, one file of one entity.
///
/// Rows are written as batches come, in the order they come. An entity file has the object id (`_id`), every
/// attribute and every to-one relationship (`Folder/p3`), in ``RecordLayout`` order; values take the text forms
/// that read back bit for bit (``CSVFormat`` lists them). A to-many relationship carried by its inverse
/// (``RelationshipValue/viaInverse``) needs no join file: the inverse to-one column holds it.
///
/// ``init(writingAt:model:dialect:)`` writes where it is told (a job's staging location, ``DestinationLease/staging``;
/// the job moves the output into place). ``init(creating:model:dialect:)``, for use on its own, builds the output
/// beside the destination (a ``DestinationLease``) and moves it into place in ``finish()``. ``abandon()`` (or
/// releasing the writer unfinished) removes what it wrote, leaving the destination as it was. An existing
/// destination folder is replaced only when it is empty or a CSV folder Decant wrote (it has `_decant.json`):
/// ``CSVFormat`` says so to every job (``RecordFormat/checkReplaceable(_:displayPath:)``).
///
/// ```swift
/// var writer = try CSVWriter(creating: folder, model: model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class CSVWriter: RecordWriter, MemberPartsConsumer {
    /// The model version the records follow.
    public let model: ObjectModel
    /// Where the finished output goes.
    public private(set) var destination: URL
    /// The dialect written.
    public let dialect: CSVDialect
    /// Whether the output is one file of one entity rather than a folder.
    public let isSingleFile: Bool
    /// What the writer let pass: to-many members a single file has no place for.
    public private(set) var diagnostics: [Diagnostic] = []

    private let displayPath: String
    /// Where the output is written.
    private let target: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:dialect:)``).
    private var lease: DestinationLease?
    private enum State { case open, finished, abandoned }
    private var state = State.open
    /// The entity whose files are open, and those files (by file name).
    private var currentEntity: String?
    private var open: [String: CSVOutputFile] = [:]
    /// Every file created so far (a later batch of an entity appends to its files).
    private var created: Set<String> = []
    private var singleEntity: String?
    private var reported: Set<String> = []
    /// The object whose to-many lists come in parts, and per relationship cut short the members listed so far.
    private var continuedOwner: RecordID?
    private var listed: [Int: Int] = [:]
    /// Per relationship position of ``currentEntity``: its open join file, so a row does not name the file again.
    private var joinFiles: [Int: CSVOutputFile] = [:]

    /// Takes to-many lists in parts: further members are appended to the join file as they come.
    public var takesMemberParts: Bool { true }

    /// Starts a new output at `destination` for `model`: a single file when its extension is `csv`, else a folder.
    /// - Throws: `.cannotCreateOutput` when the destination is a folder Decant did not write (or a file, for a
    ///   folder output) or its folder is not writable.
    public convenience init(creating destination: URL, model: ObjectModel, dialect: CSVDialect = .standard) throws {
        let lease = try DestinationLease(destination: destination, format: CSVFormat())
        try self.init(writingAt: lease.staging, model: model, dialect: dialect)
        self.lease = lease
        self.destination = destination
    }

    /// Starts a new output for `model` at `url`, where nothing is yet (a job's staging location): a single file when
    /// its extension is `csv`, else a folder.
    /// - Throws: `.cannotCreateOutput` when something is at `url` or its folder is not writable.
    public init(writingAt destination: URL, model: ObjectModel, dialect: CSVDialect = .standard) throws {
        self.model = model
        self.destination = destination
        self.target = destination
        self.dialect = dialect
        self.displayPath = destination.displayPath
        self.isSingleFile = destination.pathExtension.lowercased() == "csv"
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw DecantError(
                .cannotCreateOutput, "something is already at the output's location", at: Location(path: displayPath))
        }
        if !isSingleFile {
            do {
                try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
            } catch {
                throw DecantError(
                    .cannotCreateOutput, "cannot create a folder here", at: Location(path: displayPath),
                    underlyingError: error)
            }
        }
    }

    deinit {
        abandon()
    }

    /// Refuses a destination the output must not replace: for a folder, anything but an empty folder or a CSV
    /// folder Decant wrote; for a file, a folder.
    static func checkReplaceable(_ destination: URL, singleFile: Bool, displayPath: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory) else { return }
        let location = Location(path: displayPath)
        if singleFile {
            if isDirectory.boolValue {
                throw DecantError(.cannotCreateOutput, "a folder is in the way of the CSV file", at: location)
            }
            return
        }
        guard isDirectory.boolValue else {
            throw DecantError(
                .cannotCreateOutput,
                "a file is in the way of the CSV folder (a CSV file is written to a path ending in .csv)",
                at: location)
        }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: destination.path)) ?? []
        guard contents.isEmpty || contents.contains(CSVFolderMetadata.fileName) else {
            throw DecantError(
                .cannotCreateOutput,
                "the folder exists and is not a CSV folder Decant wrote (it has no \(CSVFolderMetadata.fileName)): "
                    + "choose another output or remove it", at: location)
        }
    }

    public func write(_ batch: RecordBatch) throws {
        guard state == .open else {
            throw DecantError(.usage, "the CSV writer is already closed", at: Location(path: displayPath))
        }
        if let continuation = batch.continuation { return try writeMembers(continuation, of: batch) }
        guard batch.count > 0 else { return }
        if continuedOwner != nil {
            throw DecantError(
                .internalError, "an object's to-many members stopped before its last part",
                at: Location(path: displayPath, entity: currentEntity))
        }
        let layout = batch.layout
        let name = layout.entityName
        if let composite = layout.attributes.first(where: { $0.type == .composite }) {
            throw CSVColumns.compositeRefusal(entity: name, attribute: composite.name, at: Location(path: displayPath))
        }
        if isSingleFile {
            if let singleEntity, singleEntity != name {
                throw DecantError(
                    .usage,
                    "a CSV file holds one entity, and the input has \(singleEntity) and \(name) objects: write to a "
                        + "folder (a path without .csv, with --to csv)", at: Location(path: displayPath, entity: name))
            }
            singleEntity = name
        }
        if currentEntity != name {
            try closeOpenFiles()
            currentEntity = name
        }
        let entityFile = try file(isSingleFile ? destination.lastPathComponent : "\(name).csv") { header in
            header.write(CSVColumns.idHeader)
            for attribute in layout.attributes { header.write(attribute.name) }
            for relationship in layout.relationships where !relationship.isToMany { header.write(relationship.name) }
        }
        // Per column, what its fields are spelled from, decided once per batch: the layout's `Attribute`s copied
        // field by field were a tenth of a store's export.
        let types = layout.attributes.map(\.type)
        let toMany = layout.relationships.map(\.isToMany)
        let attributeCount = types.count
        let width = batch.width
        try entityFile.withRecords { records in
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.bytes.withUnsafeBytes { storage in
                    for row in 0..<batch.count {
                        let identity = batch.identities[row]
                        let id: RecordID
                        if identity.kind == .integer {
                            id = .primaryKey(identity.integer)
                        } else {
                            id = batch.id(at: row)
                        }
                        Self.writeID(id, to: &records)
                        let first = row * width
                        for index in 0..<attributeCount {
                            let cell = cells[first + index]
                            let type = types[index]
                            switch cell.kind {
                            case .null:
                                records.writeNil()
                            case .text:
                                let start = Int(cell.integer)
                                records.write(
                                    bytes: UnsafeRawBufferPointer(rebasing: storage[start..<start + Int(cell.length)]))
                            case .integer where type == .integer16 || type == .integer32 || type == .integer64:
                                records.writeInteger(cell.integer)
                            case .integer where type == .boolean && (cell.integer == 0 || cell.integer == 1):
                                records.write(cell.integer == 1 ? "true" : "false")
                            case .real
                            where type == .date
                                && records.writeDate(
                                    referenceSeconds: Double(bitPattern: UInt64(bitPattern: cell.integer))):
                                // The text ``CSVValueText/format(_:as:in:)`` gives, from bytes (the NDJSON writer's
                                // way): a String per date was a third of a store's export.
                                continue
                            case .integer where type == .date && records.writeDate(referenceSeconds: Double(cell.integer)):
                                // A date of whole seconds, which SQLite keeps as an integer (a quarter of the
                                // realistic store's dates), spelled as the real one is.
                                continue
                            default:
                                if let text = CSVValueText.format(cell, as: type, in: batch) {
                                    records.write(text)
                                } else {
                                    records.writeNil()
                                }
                            }
                        }
                        for index in toMany.indices {
                            let cell = cells[first + attributeCount + index]
                            if toMany[index] {
                                try writeMembers(cell, of: id, at: index, batch: batch)
                                if batch.isContinued(cell) {
                                    continuedOwner = id
                                    listed[index] = Int(cell.length)
                                }
                                continue
                            }
                            switch cell.kind {
                            case .reference, .externalReference:
                                Self.writeReference(cell, of: batch, to: &records)
                            case .referenceList where cell.length == 1:
                                Self.writeReference(batch.references[Int(cell.integer)], of: batch, to: &records)
                            case .referenceList where cell.length > 1:
                                let relationship = layout.relationships[index]
                                throw DecantError(
                                    .malformedInput,
                                    "the to-one relationship \(relationship.name) has \(cell.length) destinations",
                                    at: Location(
                                        path: displayPath, entity: name, object: "\(name)/\(id)",
                                        keyPath: relationship.name))
                            default:
                                records.writeNil()
                            }
                        }
                        records.endRecord()
                        try entityFile.flushIfFull(&records)
                    }
                }
            }
        }
    }

    /// Lists the members of one to-many relationship of one object in its join file (created on the first list,
    /// even an empty one, so that reading back knows the relationship is listed there).
    private func writeMembers(
        _ cell: RecordBatch.Cell, of owner: RecordID, at position: Int, batch: RecordBatch
    ) throws {
        guard cell.kind == .referenceList else { return }
        let name = batch.layout.entityName
        let relationship = batch.layout.relationships[position]
        if isSingleFile {
            let key = "\(name).\(relationship.name)"
            if cell.length > 0 && reported.insert(key).inserted {
                diagnostics.append(
                    Diagnostic(
                        .unstoredProperty,
                        "members of the to-many relationship \(key) are not written: a single CSV file has no join "
                            + "files (write to a folder to keep them)",
                        at: Location(path: displayPath, entity: name, keyPath: relationship.name)))
            }
            return
        }
        let start = Int(cell.integer)
        try writeJoinRows(
            batch.references[start..<start + Int(cell.length)], of: owner, at: position, after: 0, batch: batch)
    }

    /// Lists further members of a relationship of the object whose lists came cut short (``RecordBatch/Continuation``).
    private func writeMembers(_ continuation: RecordBatch.Continuation, of batch: RecordBatch) throws {
        let position = continuation.relationship
        guard let owner = continuedOwner, let before = listed[position],
            batch.layout.relationships.indices.contains(position), currentEntity == batch.layout.entityName
        else {
            throw DecantError(
                .internalError, "members of \(batch.layout.entityName) came with no object cut short before them",
                at: Location(path: displayPath, entity: batch.layout.entityName))
        }
        if !isSingleFile {
            try writeJoinRows(
                batch.references[...], of: owner, at: position, after: before, batch: batch)
        }
        listed[position] = continuation.isFinal ? nil : before + batch.references.count
        if listed.isEmpty { continuedOwner = nil }
    }

    /// Writes one join row per member of `owner`, positions (of an ordered relationship) counted on from `after`.
    private func writeJoinRows(
        _ members: ArraySlice<RecordBatch.Cell>, of owner: RecordID, at relationshipPosition: Int, after: Int,
        batch: RecordBatch
    ) throws {
        let relationship = batch.layout.relationships[relationshipPosition]
        let ordered = relationship.isOrdered
        let join: CSVOutputFile
        if let known = joinFiles[relationshipPosition] {
            join = known
        } else {
            join = try file("\(batch.layout.entityName).\(relationship.name).csv") { header in
                header.write("owner")
                header.write("member")
                if ordered { header.write("position") }
            }
            joinFiles[relationshipPosition] = join
        }
        try join.withRecords { records in
            for (position, member) in members.enumerated() {
                Self.writeID(owner, to: &records)
                Self.writeReference(member, of: batch, to: &records)
                if ordered { records.writeInteger(Int64(after + position + 1)) }
                records.endRecord()
                try join.flushIfFull(&records)
            }
        }
    }

    /// Writes the field `Entity/p12` of a reference cell, as its ``ObjectReference/description`` spells it: by
    /// primary key from bytes (two million join rows made four million Strings), any other through the description.
    private static func writeReference(_ cell: RecordBatch.Cell, of batch: RecordBatch, to records: inout CSVRecordBuffer)
    {
        let index = Int(cell.length)
        guard cell.kind == .reference, cell.integer >= 0, batch.entityNames.indices.contains(index) else {
            return records.write(batch.reference(of: cell).description)
        }
        records.writeReference(entity: batch.entityNames[index], primaryKey: cell.integer)
    }

    /// Writes the field of an object's id, as its ``RecordID/description`` spells it (`p12`, or the source's id).
    private static func writeID(_ id: RecordID, to records: inout CSVRecordBuffer) {
        guard case .primaryKey(let key) = id, key >= 0 else { return records.write(id.description) }
        records.writePrimaryKey(key)
    }

    /// The open file `name`, opened to append or created with its header.
    private func file(_ name: String, header: (inout CSVRecordBuffer) -> Void) throws -> CSVOutputFile {
        if let output = open[name] { return output }
        let url = isSingleFile ? target : target.appendingPathComponent(name)
        let path = isSingleFile ? displayPath : displayPath + "/" + name
        let exists = created.contains(name)
        let output = try CSVOutputFile(url: url, path: path, dialect: dialect, append: exists)
        if !exists {
            created.insert(name)
            try output.withRecords { records in
                header(&records)
                records.endRecord()
                try output.flushIfFull(&records)
            }
        }
        open[name] = output
        return output
    }

    private func closeOpenFiles() throws {
        let files = open
        open.removeAll()
        joinFiles.removeAll()
        for name in files.keys.sorted() { try files[name]?.close() }
    }

    public func finish() throws {
        guard state == .open else { return }
        do {
            if continuedOwner != nil {
                throw DecantError(
                    .internalError, "an object's to-many members stopped before its last part",
                    at: Location(path: displayPath, entity: currentEntity))
            }
            try closeOpenFiles()
            if isSingleFile {
                if created.isEmpty {
                    guard FileManager.default.createFile(atPath: target.path, contents: Data()) else {
                        throw DecantError(
                            .cannotCreateOutput, "cannot create the file", at: Location(path: displayPath))
                    }
                }
            } else {
                let metadata = CSVFolderMetadata(model: model, dialect: dialect)
                do {
                    try metadata.encoded().write(
                        to: target.appendingPathComponent(CSVFolderMetadata.fileName))
                } catch {
                    throw DecantError(
                        .ioError, "cannot write \(CSVFolderMetadata.fileName)", at: Location(path: displayPath),
                        underlyingError: error)
                }
            }
            state = .finished
            try lease?.commit()
        } catch {
            abandon()
            throw error
        }
    }

    /// Gives up the output: closes every file, then removes what it wrote. The destination is untouched.
    public func abandon() {
        guard state == .open else { return }
        state = .abandoned
        for output in open.values { output.discard() }
        open.removeAll()
        joinFiles.removeAll()
        try? FileManager.default.removeItem(at: target)
    }
}

extension CSVFormat {
    /// A CSV output replaces an existing file, an empty folder or a CSV folder Decant wrote (it has
    /// `_decant.json`); a folder in the way of a file, a file in the way of a folder or any other folder is refused.
    public func checkReplaceable(_ url: URL, displayPath: String) throws {
        try CSVWriter.checkReplaceable(url, singleFile: url.pathExtension.lowercased() == "csv", displayPath: displayPath)
    }
}

@available(*, unavailable)
extension CSVWriter: Sendable {}
