public import DecantCore
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
    /// Scratch bytes for a reference or id by primary key, spelled without a String per field.
    private var spelling: [UInt8] = []
    /// The object whose to-many lists come in parts, and per relationship cut short the members listed so far.
    private var continuedOwner: RecordID?
    private var listed: [Int: Int] = [:]

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
        let entityFile = try file(isSingleFile ? destination.lastPathComponent : "\(name).csv") { output in
            output.write(CSVColumns.idHeader)
            for attribute in layout.attributes { output.write(attribute.name) }
            for relationship in layout.relationships where !relationship.isToMany { output.write(relationship.name) }
        }
        let attributeCount = layout.attributes.count
        for row in 0..<batch.count {
            let id = batch.id(at: row)
            writeID(id, to: entityFile)
            for (index, attribute) in layout.attributes.enumerated() {
                let cell = batch.cell(row: row, column: index)
                switch cell.kind {
                case .text:
                    batch.withBytes(of: cell) { entityFile.write(bytes: $0) }
                case .real where attribute.type == .date && writeDate(cell, to: entityFile):
                    // The text ``CSVValueText/format(_:as:in:)`` gives, from bytes (the NDJSON writer's way): a
                    // String per date was a third of a store's export.
                    continue
                default:
                    if let text = CSVValueText.format(cell, as: attribute.type, in: batch) {
                        entityFile.write(text)
                    } else {
                        entityFile.writeNil()
                    }
                }
            }
            for (index, relationship) in layout.relationships.enumerated() {
                let cell = batch.cell(row: row, column: attributeCount + index)
                if relationship.isToMany {
                    try writeMembers(cell, of: id, through: relationship, batch: batch)
                    if batch.isContinued(cell) {
                        continuedOwner = id
                        listed[index] = Int(cell.length)
                    }
                    continue
                }
                switch cell.kind {
                case .reference, .externalReference:
                    writeReference(cell, of: batch, to: entityFile)
                case .referenceList where cell.length == 1:
                    writeReference(batch.references[Int(cell.integer)], of: batch, to: entityFile)
                case .referenceList where cell.length > 1:
                    throw DecantError(
                        .malformedInput, "the to-one relationship \(relationship.name) has \(cell.length) destinations",
                        at: Location(
                            path: displayPath, entity: name, object: "\(name)/\(id)", keyPath: relationship.name))
                default:
                    entityFile.writeNil()
                }
            }
            try entityFile.endRecord()
        }
    }

    /// Lists the members of one to-many relationship of one object in its join file (created on the first list,
    /// even an empty one, so that reading back knows the relationship is listed there).
    private func writeMembers(
        _ cell: RecordBatch.Cell, of owner: RecordID, through relationship: Relationship, batch: RecordBatch
    ) throws {
        guard cell.kind == .referenceList else { return }
        let name = batch.layout.entityName
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
            batch.references[start..<start + Int(cell.length)], of: owner, through: relationship, after: 0,
            batch: batch)
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
                batch.references[...], of: owner, through: batch.layout.relationships[position], after: before,
                batch: batch)
        }
        listed[position] = continuation.isFinal ? nil : before + batch.references.count
        if listed.isEmpty { continuedOwner = nil }
    }

    /// Writes one join row per member of `owner`, positions (of an ordered relationship) counted on from `after`.
    private func writeJoinRows(
        _ members: ArraySlice<RecordBatch.Cell>, of owner: RecordID, through relationship: Relationship, after: Int,
        batch: RecordBatch
    ) throws {
        let ordered = relationship.isOrdered
        let join = try file("\(batch.layout.entityName).\(relationship.name).csv") { output in
            output.write("owner")
            output.write("member")
            if ordered { output.write("position") }
        }
        for (position, member) in members.enumerated() {
            writeID(owner, to: join)
            writeReference(member, of: batch, to: join)
            if ordered { join.write(String(after + position + 1)) }
            try join.endRecord()
        }
    }

    /// Writes the field `Entity/p12` of a reference cell, as its ``ObjectReference/description`` spells it: by
    /// primary key from bytes (two million join rows made four million Strings), any other through the description.
    private func writeReference(_ cell: RecordBatch.Cell, of batch: RecordBatch, to file: CSVOutputFile) {
        let index = Int(cell.length)
        guard cell.kind == .reference, cell.integer >= 0, batch.entityNames.indices.contains(index) else {
            return file.write(batch.reference(of: cell).description)
        }
        spelling.removeAll(keepingCapacity: true)
        spelling.append(contentsOf: batch.entityNames[index].utf8)
        spelling.append(UInt8(ascii: "/"))
        Self.appendPrimaryKey(cell.integer, to: &spelling)
        spelling.withUnsafeBytes { file.write(bytes: $0) }
    }

    /// Writes the ISO 8601 text of a date cell (``ExactDate/appendText(referenceSeconds:to:)``) and returns true,
    /// or writes nothing and returns false where there is no such text.
    private func writeDate(_ cell: RecordBatch.Cell, to file: CSVOutputFile) -> Bool {
        spelling.removeAll(keepingCapacity: true)
        let seconds = Double(bitPattern: UInt64(bitPattern: cell.integer))
        guard ExactDate.appendText(referenceSeconds: seconds, to: &spelling) else { return false }
        spelling.withUnsafeBytes { file.write(bytes: $0) }
        return true
    }

    /// Writes the field of an object's id, as its ``RecordID/description`` spells it (`p12`, or the source's id).
    private func writeID(_ id: RecordID, to file: CSVOutputFile) {
        guard case .primaryKey(let key) = id, key >= 0 else { return file.write(id.description) }
        spelling.removeAll(keepingCapacity: true)
        Self.appendPrimaryKey(key, to: &spelling)
        spelling.withUnsafeBytes { file.write(bytes: $0) }
    }

    /// Appends `p` and the decimal digits of `key` (not negative).
    private static func appendPrimaryKey(_ key: Int64, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "p"))
        var count = 0
        var rest = UInt64(key)
        repeat {
            count += 1
            rest /= 10
        } while rest > 0
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        var value = UInt64(key)
        var position = start + count - 1
        repeat {
            bytes[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            position -= 1
        } while value > 0
    }

    /// The open file `name`, opened to append or created with its header.
    private func file(_ name: String, header: (CSVOutputFile) -> Void) throws -> CSVOutputFile {
        if let output = open[name] { return output }
        let url = isSingleFile ? target : target.appendingPathComponent(name)
        let path = isSingleFile ? displayPath : displayPath + "/" + name
        let exists = created.contains(name)
        let output = try CSVOutputFile(url: url, path: path, dialect: dialect, append: exists)
        if !exists {
            created.insert(name)
            header(output)
            try output.endRecord()
        }
        open[name] = output
        return output
    }

    private func closeOpenFiles() throws {
        let files = open
        open.removeAll()
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
