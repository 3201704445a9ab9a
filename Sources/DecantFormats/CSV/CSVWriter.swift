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
/// The output is built under a temporary name beside the destination and moved into place by ``finish()``;
/// ``abandon()`` (or releasing the writer unfinished) removes it, leaving the destination as it was. An existing
/// destination folder is replaced only when it is empty or a CSV folder Decant wrote (it has `_decant.json`).
///
/// ```swift
/// var writer = try CSVWriter(creating: folder, model: model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class CSVWriter: RecordWriter {
    /// The model version the records follow.
    public let model: ObjectModel
    /// Where the finished output goes.
    public let destination: URL
    /// The dialect written.
    public let dialect: CSVDialect
    /// Whether the output is one file of one entity rather than a folder.
    public let isSingleFile: Bool
    /// What the writer let pass: to-many members a single file has no place for.
    public private(set) var diagnostics: [Diagnostic] = []

    private let displayPath: String
    private let staged: StagedOutput
    private enum State { case open, finished, abandoned }
    private var state = State.open
    /// The entity whose files are open, and those files (by file name).
    private var currentEntity: String?
    private var open: [String: CSVOutputFile] = [:]
    /// Every file created so far (a later batch of an entity appends to its files).
    private var created: Set<String> = []
    private var singleEntity: String?
    private var reported: Set<String> = []

    /// Starts a new output at `destination` for `model`: a single file when its extension is `csv`, else a folder.
    /// - Throws: `.cannotCreateOutput` when the destination is a folder Decant did not write (or a file, for a
    ///   folder output) or its folder is not writable.
    public init(creating destination: URL, model: ObjectModel, dialect: CSVDialect = .standard) throws {
        self.model = model
        self.destination = destination
        self.dialect = dialect
        self.displayPath = destination.displayPath
        self.isSingleFile = destination.pathExtension.lowercased() == "csv"
        self.staged = StagedOutput(destination: destination)
        try Self.checkReplaceable(destination, singleFile: isSingleFile, displayPath: displayPath)
        if !isSingleFile {
            do {
                try FileManager.default.createDirectory(at: staged.temporary, withIntermediateDirectories: false)
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
    private static func checkReplaceable(_ destination: URL, singleFile: Bool, displayPath: String) throws {
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
        guard batch.count > 0 else { return }
        let layout = batch.layout
        let name = layout.entityName
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
            entityFile.write(id.description)
            for (index, attribute) in layout.attributes.enumerated() {
                let cell = batch.cell(row: row, column: index)
                switch cell.kind {
                case .text:
                    batch.withBytes(of: cell) { entityFile.write(bytes: $0) }
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
                    continue
                }
                switch cell.kind {
                case .reference, .externalReference:
                    entityFile.write(batch.reference(of: cell).description)
                case .referenceList where cell.length == 1:
                    entityFile.write(batch.reference(of: batch.references[Int(cell.integer)]).description)
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
        let ordered = relationship.isOrdered
        let join = try file("\(name).\(relationship.name).csv") { output in
            output.write("owner")
            output.write("member")
            if ordered { output.write("position") }
        }
        let start = Int(cell.integer)
        for (position, member) in batch.references[start..<start + Int(cell.length)].enumerated() {
            join.write(owner.description)
            join.write(batch.reference(of: member).description)
            if ordered { join.write(String(position + 1)) }
            try join.endRecord()
        }
    }

    /// The open file `name`, opened to append or created with its header.
    private func file(_ name: String, header: (CSVOutputFile) -> Void) throws -> CSVOutputFile {
        if let output = open[name] { return output }
        let url = isSingleFile ? staged.temporary : staged.temporary.appendingPathComponent(name)
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
            try closeOpenFiles()
            if isSingleFile {
                if created.isEmpty {
                    guard FileManager.default.createFile(atPath: staged.temporary.path, contents: Data()) else {
                        throw DecantError(
                            .cannotCreateOutput, "cannot create the file", at: Location(path: displayPath))
                    }
                }
            } else {
                let metadata = CSVFolderMetadata(model: model, dialect: dialect)
                do {
                    try metadata.encoded().write(
                        to: staged.temporary.appendingPathComponent(CSVFolderMetadata.fileName))
                } catch {
                    throw DecantError(
                        .ioError, "cannot write \(CSVFolderMetadata.fileName)", at: Location(path: displayPath),
                        underlyingError: error)
                }
            }
            try moveIntoPlace()
            state = .finished
        } catch {
            abandon()
            throw error
        }
    }

    /// Renames the finished output into place. A folder replaces an earlier one by two renames: the old folder
    /// aside, the new one in, then the old one removed (put back if the second rename fails).
    private func moveIntoPlace() throws {
        try Self.checkReplaceable(destination, singleFile: isSingleFile, displayPath: displayPath)
        if isSingleFile {
            return try staged.commit(displayPath: displayPath)
        }
        let manager = FileManager.default
        var aside: URL?
        if manager.fileExists(atPath: destination.path) {
            let old = destination.deletingLastPathComponent()
                .appendingPathComponent(".\(destination.lastPathComponent).decant-old-\(UUID().uuidString)")
            guard rename(destination.path, old.path) == 0 else {
                throw DecantError(
                    .cannotCreateOutput, "cannot move the earlier folder aside: \(String(cString: strerror(errno)))",
                    at: Location(path: displayPath))
            }
            aside = old
        }
        guard rename(staged.temporary.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            if let aside { _ = rename(aside.path, destination.path) }
            throw DecantError(
                .cannotCreateOutput, "cannot move the finished output into place: \(reason)",
                at: Location(path: displayPath))
        }
        if let aside { try? manager.removeItem(at: aside) }
    }

    /// Gives up the output: closes every file, then removes the temporary output. The destination is untouched.
    public func abandon() {
        guard state == .open else { return }
        state = .abandoned
        for output in open.values { output.discard() }
        open.removeAll()
        staged.discard()
    }
}

@available(*, unavailable)
extension CSVWriter: Sendable {}
