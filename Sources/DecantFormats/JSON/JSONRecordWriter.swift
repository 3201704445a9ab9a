public import DecantCore
import DecantCodecs
public import Foundation

/// Writes Decant's JSON document, or its NDJSON form, batch by batch as the batches come.
///
/// The document is the ``JSONDocumentHeader`` under `"decant"`, then `"objects"`, one object per line:
/// ```json
/// {
///   "decant": {"formatVersion":1,"model":{"name":"Notes 3",…},"metadata":{…}},
///   "objects": [
///     {"@id":"Folder/p1","name":"Home"},
///     {"@id":"Note/p1","date":"2024-05-19T18:14:06.84Z","text":"milk","title":null,"folder":"Folder/p1"}
///   ]
/// }
/// ```
/// The NDJSON form has the header alone on the first line (`{"decant":{…}}`), then one object per line.
///
/// Every attribute is written, nil as `null`: integers and doubles as numbers (a double as the shortest text
/// that reads back to the same bits; NaN and infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`),
/// booleans as `true`/`false`, decimals as strings of their exact digits, dates as ISO 8601 in UTC with the exact
/// fraction of a second (a number of seconds since 2001-01-01 when no ISO text reads back to the same Double),
/// binary and transformable data as base64, UUIDs in upper case, a missing externally stored file as
/// `{"externalDataReference": "NAME"}`. With ``JSONOptions/decodesTransformables``, a Transformable value whose keyed
/// archive holds only Foundation's plain values (``FoundationValue``) is written as `{"archived": V}` instead (see
/// `docs/USAGE.md`), and the others stay base64, counted in one warning per attribute (``diagnostics``). A to-one
/// relationship is an object id or `null`, a to-many one an array of ids (ordered ones in order); a to-many
/// relationship whose membership its to-one inverse carries (``RelationshipValue/viaInverse``) is left out, and the
/// inverse holds it.
///
/// ``init(writingAt:model:style:)`` writes where it is told (a job's staging location, ``DestinationLease/staging``;
/// the job moves the output into place). ``init(creating:model:style:)``, for use on its own, builds the output
/// beside the destination (a ``DestinationLease``) and renames it into place in ``finish()``. ``abandon()`` (or
/// releasing the writer unfinished) removes what it wrote, leaving an existing file untouched.
/// ```swift
/// var writer = try JSONRecordWriter(creating: url, model: model, style: .lines)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class JSONRecordWriter: RecordWriter, MemberPartsConsumer {
    /// The two shapes of Decant's JSON output (and of the input ``JSONRecordReader`` expects).
    ///
    /// ```swift
    /// let style: JSONRecordWriter.Style = url.pathExtension == "ndjson" ? .lines : .document
    /// ```
    public enum Style: String, Sendable, Hashable, CaseIterable {
        /// One JSON document: `{"decant": header, "objects": [...]}`.
        case document
        /// NDJSON: the header line `{"decant": header}`, then one object per line.
        case lines
    }

    /// The model version the objects follow.
    public let model: ObjectModel
    /// Where the finished output goes.
    public private(set) var destination: URL
    /// The output's shape.
    public let style: Style
    /// Whether Transformable values are written as the values their archives hold, where they can be.
    public let decodesTransformables: Bool

    private let displayPath: String
    /// Where the output is written.
    private let target: URL
    /// The lease of the destination, when the writer stages on its own (``init(creating:model:style:)``).
    private var lease: DestinationLease?
    private var handle: FileHandle?
    private var output = JSONOutput()
    private var objectCount = 0
    private var plans: ModelPlan
    /// Per entity name, the JSON bytes that do not change from object to object.
    private var spellings: [String: ObjectSpelling] = [:]
    private var referenceSpelling = ReferenceSpelling()
    private enum State { case open, finished, abandoned }
    private var state = State.open
    private static let flushThreshold = 1 << 16
    /// The object whose to-many lists come in parts, written up to the members of its first list still open.
    private var openObject: OpenObject?
    /// Transformable values kept as base64 under ``decodesTransformables``, per attribute.
    private var keptArchives = KeptArchives()

    /// Takes to-many lists in parts: an object's line stays open across them, and its bytes are those of the
    /// whole object.
    public var takesMemberParts: Bool { true }

    /// Starts a new output at `destination` for `model`, built beside it and renamed into place by ``finish()``.
    /// - Throws: `.cannotCreateOutput` when the folder is not writable.
    public convenience init(
        creating destination: URL, model: ObjectModel, style: Style = .document, options: JSONOptions = JSONOptions()
    ) throws {
        let lease = try DestinationLease(destination: destination)
        try self.init(writingAt: lease.staging, model: model, style: style, options: options)
        self.lease = lease
        self.destination = destination
    }

    /// Starts a new output for `model` at `url`, where nothing is yet (a job's staging location).
    /// - Throws: `.cannotCreateOutput` when something is at `url` or the folder is not writable.
    public init(
        writingAt destination: URL, model: ObjectModel, style: Style = .document, options: JSONOptions = JSONOptions()
    ) throws {
        self.model = model
        self.decodesTransformables = options.decodesTransformables
        self.destination = destination
        self.target = destination
        self.style = style
        self.displayPath = destination.displayPath
        self.plans = ModelPlan(model: model)
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw DecantError(
                .cannotCreateOutput, "something is already at the output's location", at: Location(path: displayPath))
        }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: destination.path)
        else {
            try? FileManager.default.removeItem(at: destination)
            let reason = String(cString: strerror(errno))
            throw DecantError(
                .cannotCreateOutput, "cannot create a file here: \(reason)", at: Location(path: destination.displayPath)
            )
        }
        self.handle = handle
        let header = JSONDocumentHeader(model: model).encoded()
        switch style {
        case .document:
            output.append("{\n  \"decant\": ")
            output.bytes += header
            output.append(",\n  \"objects\": [")
        case .lines:
            output.append("{\"decant\":")
            output.bytes += header
            output.append("}\n")
        }
    }

    deinit {
        abandon()
    }

    public func write(_ batch: RecordBatch) throws {
        guard state == .open else {
            throw DecantError(.usage, "the JSON writer is already closed", at: Location(path: displayPath))
        }
        if let continuation = batch.continuation { return try write(continuation, of: batch) }
        let name = batch.layout.entityName
        guard openObject == nil else { throw Self.missingContinuation(entity: name, at: displayPath) }
        guard let plan = plans.plan(for: name), plan.layout == batch.layout else {
            throw DecantError(
                .usage, "the model \(model.versionName ?? "(unnamed)") has no entity \(name) laid out as this batch is",
                at: Location(path: displayPath, entity: name))
        }
        let spelling = spelling(for: plan.layout)
        let references = referenceSpelling(for: batch)
        // The bytes are built in a local buffer: a stored property's every use would be checked for exclusive
        // access at run time, and that showed in profiles.
        var output = JSONOutput()
        swap(&output, &self.output)
        defer { swap(&output, &self.output) }
        var kept = KeptArchives()
        swap(&kept, &keptArchives)
        defer { swap(&kept, &keptArchives) }
        for row in 0..<batch.count {
            // An object that fails is taken back out, its separator too: the buffer holds whole objects only.
            let mark = output.bytes.count
            switch style {
            case .document: output.append(objectCount == 0 ? "\n    " : ",\n    ")
            case .lines: break
            }
            var cuts: [ListCut] = []
            do {
                try Self.appendObject(
                    row: row, of: batch, plan: plan, spelling: spelling, references: references, to: &output,
                    cuts: &cuts, decodesTransformables: decodesTransformables, kept: &kept)
            } catch {
                output.bytes.removeSubrange(mark...)
                throw error
            }
            if style == .lines { output.append("\n") }
            if !cuts.isEmpty { openObject = OpenObject(cutting: &output.bytes, at: cuts) }
            objectCount += 1
            if output.bytes.count >= Self.flushThreshold { try flush(&output) }
        }
    }

    public func finish() throws {
        guard state == .open else { return }
        do {
            if openObject != nil { throw Self.missingContinuation(entity: nil, at: displayPath) }
            if style == .document { output.append(objectCount == 0 ? "]\n}\n" : "\n  ]\n}\n") }
            try flush(&output)
            try handle?.synchronize()
            try handle?.close()
            handle = nil
            state = .finished
            try lease?.commit()
        } catch {
            if state == .open { abandon() } else { try? FileManager.default.removeItem(at: target) }
            if let error = error as? DecantError { throw error }
            throw DecantError(
                .ioError, "cannot complete the output", at: Location(path: displayPath), underlyingError: error)
        }
    }

    /// Gives up the output: closes the file and removes it. Does nothing after ``finish()`` or a second time.
    public func abandon() {
        guard state == .open else { return }
        state = .abandoned
        try? handle?.close()
        handle = nil
        output.bytes = []
        try? FileManager.default.removeItem(at: target)
    }

    /// Writes `output`'s bytes to the file and empties it.
    private func flush(_ output: inout JSONOutput) throws {
        guard !output.bytes.isEmpty, let handle else { return }
        do {
            try handle.write(contentsOf: output.bytes)
        } catch {
            throw DecantError(
                .ioError, "cannot write the output", at: Location(path: displayPath), underlyingError: error)
        }
        output.bytes.removeAll(keepingCapacity: true)
    }

    // MARK: Lists in parts

    /// Where a to-many list cut short ends in an object's bytes (before its `]`), and how many members it has there.
    private struct ListCut {
        var offset: Int
        var members: Int
    }

    /// An object written up to the members of a list cut short: per such list, in order, the bytes that follow its
    /// members in the whole object (up to the members of the next list cut short, or the end of the object).
    private struct OpenObject {
        var tails: [[UInt8]]
        var counts: [Int]
        /// Members of the open list written so far.
        var written: Int

        /// Takes the bytes after the first cut out of `bytes` (the object ends them).
        init(cutting bytes: inout [UInt8], at cuts: [ListCut]) {
            let ends = cuts.dropFirst().map(\.offset) + [bytes.count]
            tails = zip(cuts, ends).map { Array(bytes[$0.offset..<$1]) }
            counts = cuts.map(\.members)
            written = cuts[0].members
            bytes.removeSubrange(cuts[0].offset...)
        }
    }

    /// Writes further members of the open list; after its last part, the bytes that follow it.
    private func write(_ continuation: RecordBatch.Continuation, of batch: RecordBatch) throws {
        guard state == .open else {
            throw DecantError(.usage, "the JSON writer is already closed", at: Location(path: displayPath))
        }
        guard var open = openObject else {
            throw DecantError(
                .internalError, "members of \(batch.layout.entityName) came with no object open",
                at: Location(path: displayPath, entity: batch.layout.entityName))
        }
        var output = JSONOutput()
        swap(&output, &self.output)
        defer { swap(&output, &self.output) }
        let references = referenceSpelling(for: batch)
        for member in batch.references {
            if open.written > 0 { output.append(",") }
            references.append(member, of: batch, to: &output)
            open.written += 1
            if output.bytes.count >= Self.flushThreshold { try flush(&output) }
        }
        if continuation.isFinal {
            output.bytes += open.tails.removeFirst()
            open.counts.removeFirst()
            open.written = open.counts.first ?? 0
        }
        openObject = open.tails.isEmpty ? nil : open
        if output.bytes.count >= Self.flushThreshold { try flush(&output) }
    }

    private static func missingContinuation(entity: String?, at path: String) -> DecantError {
        DecantError(
            .internalError, "an object's to-many members stopped before its last part",
            at: Location(path: path, entity: entity))
    }

    // MARK: Transformable values

    /// What ``decodesTransformables`` left as base64: one warning per attribute, naming the first object and why.
    public var diagnostics: [Diagnostic] { keptArchives.diagnostics }

    /// Per attribute (in the order values were first kept): how many values were written decoded and kept as base64,
    /// and the first kept one with its reason.
    private struct KeptArchives {
        struct Tally {
            var decoded = 0
            var kept = 0
            var first: (object: String, reason: FoundationValue.Refusal)?
        }
        var order: [String] = []
        var tallies: [String: (entity: String, attribute: String, tally: Tally)] = [:]

        mutating func decoded(entity: String, attribute: String) {
            let key = entity + "." + attribute
            if tallies[key] == nil { tallies[key] = (entity, attribute, Tally()) }
            tallies[key]?.tally.decoded += 1
        }

        mutating func keep(entity: String, attribute: String, object: String, because reason: FoundationValue.Refusal) {
            let key = entity + "." + attribute
            if tallies[key] == nil { tallies[key] = (entity, attribute, Tally()) }
            if tallies[key]?.tally.kept == 0 {
                order.append(key)
                tallies[key]?.tally.first = (object, reason)
            }
            tallies[key]?.tally.kept += 1
        }

        var diagnostics: [Diagnostic] {
            order.compactMap { key -> Diagnostic? in
                guard let (entity, attribute, tally) = tallies[key], let first = tally.first else { return nil }
                let total = tally.decoded + tally.kept
                return Diagnostic(
                    .transformableKeptAsData,
                    "\(tally.kept) of \(total) transformable value\(total == 1 ? "" : "s") kept as base64, not "
                        + "Foundation's plain values; the first, \(first.object), holds \(first.reason.reason)",
                    at: Location(entity: entity, object: first.object, keyPath: attribute))
            }
        }
    }

    // MARK: Objects

    /// The JSON bytes of an entity's objects that are the same in every object: the start of `"@id"` up to the
    /// entity name and its slash, and per property `,"name":`.
    private struct ObjectSpelling {
        var idPrefix: [UInt8]
        var attributeKeys: [[UInt8]]
        var attributeTypes: [AttributeType]
        var relationshipKeys: [[UInt8]]
        var relationshipIsToMany: [Bool]

        init(layout: RecordLayout) {
            func key(_ name: String) -> [UInt8] {
                var output = JSONOutput()
                output.append(",")
                output.appendString(name)
                output.append(":")
                return output.bytes
            }
            var prefix = JSONOutput()
            prefix.append("{\"@id\":")
            prefix.appendString(layout.entityName + "/")
            prefix.bytes.removeLast()  // the closing quote: the id follows
            idPrefix = prefix.bytes
            attributeKeys = layout.attributes.map { key($0.name) }
            attributeTypes = layout.attributes.map(\.type)
            relationshipKeys = layout.relationships.map { key($0.name) }
            relationshipIsToMany = layout.relationships.map(\.isToMany)
        }
    }

    /// The JSON bytes that start a reference by primary key to each entity of a batch's ``RecordBatch/entityNames``:
    /// the opening quote, the escaped name and its slash (`"Folder/`); `p`, the key and the closing quote follow.
    private struct ReferenceSpelling {
        var entityNames: [String] = []
        var prefixes: [[UInt8]] = []

        init() {}

        init(entityNames: [String]) {
            self.entityNames = entityNames
            prefixes = entityNames.map { name in
                var prefix = JSONOutput()
                prefix.appendString(name + "/")
                prefix.bytes.removeLast()  // the closing quote: the id follows
                return prefix.bytes
            }
        }

        /// Appends `"Entity/p12"` for a reference cell by primary key, else the string of its
        /// ``ObjectReference/description``.
        @inline(__always)
        func append(_ cell: RecordBatch.Cell, of batch: RecordBatch, to output: inout JSONOutput) {
            let index = Int(cell.length)
            guard cell.kind == .reference, prefixes.indices.contains(index) else {
                return output.appendString(batch.reference(of: cell).description)
            }
            output.bytes.append(contentsOf: prefixes[index])
            output.bytes.append(UInt8(ascii: "p"))
            output.bytes.appendDecimal(cell.integer)
            output.bytes.append(UInt8(ascii: "\""))
        }
    }

    /// The reference spelling of `batch`'s entity names, kept while batches come with the same names.
    private func referenceSpelling(for batch: RecordBatch) -> ReferenceSpelling {
        if referenceSpelling.entityNames != batch.entityNames {
            referenceSpelling = ReferenceSpelling(entityNames: batch.entityNames)
        }
        return referenceSpelling
    }

    private func spelling(for layout: RecordLayout) -> ObjectSpelling {
        if let spelling = spellings[layout.entityName] { return spelling }
        let spelling = ObjectSpelling(layout: layout)
        spellings[layout.entityName] = spelling
        return spelling
    }

    private static func appendObject(
        row: Int, of batch: RecordBatch, plan: EntityPlan, spelling: ObjectSpelling, references: ReferenceSpelling,
        to output: inout JSONOutput, cuts: inout [ListCut], decodesTransformables: Bool, kept: inout KeptArchives
    ) throws {
        let layout = plan.layout
        // `"Entity/p12"` or `"Entity/<external id>"`, spelled as `Entity/\(RecordID)` is.
        output.bytes.append(contentsOf: spelling.idPrefix)
        let identity = batch.identities[row]
        if identity.kind == .integer {
            output.bytes.append(UInt8(ascii: "p"))
            output.appendInteger(identity.integer)
            output.bytes.append(UInt8(ascii: "\""))
        } else {
            // The external id's text, escaped, straight from the batch (no String, no buffer of its own); its
            // opening quote goes, the prefix has one.
            let start = output.bytes.count
            batch.withBytes(of: identity) { output.appendString(raw: $0) }
            output.bytes.remove(at: start)
        }
        let width = batch.width
        let attributeCount = layout.attributes.count
        let first = row * width
        for index in 0..<attributeCount {
            output.bytes.append(contentsOf: spelling.attributeKeys[index])
            let cell = batch.cells[first + index]
            if decodesTransformables, spelling.attributeTypes[index] == .transformable, cell.kind == .blob {
                let data = batch.withBytes(of: cell) { Data($0) }
                do throws(FoundationValue.Refusal) {
                    ArchivedJSON.append(try FoundationValue(archivedData: data), to: &output)
                    kept.decoded(entity: layout.entityName, attribute: layout.attributes[index].name)
                    continue
                } catch {
                    kept.keep(
                        entity: layout.entityName, attribute: layout.attributes[index].name,
                        object: "\(layout.entityName)/\(batch.id(at: row))", because: error)
                }
            }
            do {
                try appendAttribute(cell, of: batch, type: spelling.attributeTypes[index], to: &output)
            } catch {
                // The value came from the input, whose path the writer does not know: the place is the object.
                let attribute = layout.attributes[index]
                throw DecantError(
                    .malformedInput, "the \(attribute.type.modelName) attribute \(attribute.name) holds \(error.problem)",
                    at: Location(
                        entity: layout.entityName, object: "\(layout.entityName)/\(batch.id(at: row))",
                        keyPath: attribute.name))
            }
        }
        guard !layout.relationships.isEmpty else { return output.append("}") }
        for index in spelling.relationshipKeys.indices {
            let cell = batch.cells[first + attributeCount + index]
            if cell.kind == .viaInverse { continue }
            output.bytes.append(contentsOf: spelling.relationshipKeys[index])
            switch cell.kind {
            case .reference, .externalReference:
                if spelling.relationshipIsToMany[index] {
                    output.append("[")
                    references.append(cell, of: batch, to: &output)
                    output.append("]")
                } else {
                    references.append(cell, of: batch, to: &output)
                }
            case .referenceList:
                let start = Int(cell.integer)
                let members = batch.references[start..<start + Int(cell.length)]
                if spelling.relationshipIsToMany[index] {
                    appendMembers(
                        members, of: batch, references: references, continued: batch.isContinued(cell), to: &output,
                        cuts: &cuts)
                } else if let first = members.first, members.count == 1 {
                    references.append(first, of: batch, to: &output)
                } else if members.isEmpty {
                    output.append("null")
                } else {
                    let relationship = layout.relationships[index]
                    throw DecantError(
                        .malformedInput, "the to-one relationship \(relationship.name) holds \(members.count) objects",
                        at: Location(
                            entity: layout.entityName, object: "\(layout.entityName)/\(batch.id(at: row))",
                            keyPath: relationship.name))
                }
            default:
                output.append(spelling.relationshipIsToMany[index] ? "[]" : "null")
            }
        }
        output.append("}")
    }

    /// Appends a to-many list; for one `continued` in further parts, notes where its `]` is in `cuts`.
    private static func appendMembers(
        _ members: ArraySlice<RecordBatch.Cell>, of batch: RecordBatch, references: ReferenceSpelling, continued: Bool,
        to output: inout JSONOutput, cuts: inout [ListCut]
    ) {
        output.append("[")
        for (position, member) in members.enumerated() {
            if position > 0 { output.append(",") }
            references.append(member, of: batch, to: &output)
        }
        if continued { cuts.append(ListCut(offset: output.bytes.count, members: members.count)) }
        output.append("]")
    }

    /// A value an attribute's type cannot have: what it is.
    private struct Mismatch: Error {
        var problem: String
    }

    /// Appends one attribute value.
    private static func appendAttribute(
        _ cell: RecordBatch.Cell, of batch: RecordBatch, type: AttributeType, to output: inout JSONOutput
    ) throws(Mismatch) {
        if cell.kind == .null {
            output.append("null")
            return
        }
        let real = Double(bitPattern: UInt64(bitPattern: cell.integer))
        switch (type, cell.kind) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer):
            output.appendInteger(cell.integer)
        case (.integer16, .real), (.integer32, .real), (.integer64, .real):
            // A whole number stored as a real reads as that integer.
            guard real.rounded() == real, real.magnitude < 9.2e18 else { throw Mismatch(problem: "the fraction \(real)") }
            output.appendInteger(Int64(real))
        case (.boolean, .integer):
            output.append(cell.integer != 0 ? "true" : "false")
        case (.double, .integer), (.float, .integer):
            output.appendInteger(cell.integer)
        case (.double, .real), (.float, .real):
            output.appendDouble(real)
        case (.decimal, .integer):
            output.appendString(String(cell.integer))
        case (.decimal, .real):
            guard real.isFinite else { throw Mismatch(problem: "\(real), which a decimal cannot be") }
            output.appendString(real.description)
        case (.decimal, .text):
            let text = try string(of: cell, in: batch)
            guard JSONNumberSyntax.isValidDecimal(text) else {
                throw Mismatch(problem: "the text \"\(text)\", not a decimal number")
            }
            output.appendString(text)
        case (.date, .integer):
            appendDate(Double(cell.integer), to: &output)
        case (.date, .real):
            appendDate(real, to: &output)
        case (.string, .text), (.uri, .text):
            let valid = batch.withBytes(of: cell) { text in
                guard UTF8Validation.firstInvalidByte(in: text) == nil else { return false }
                output.appendString(raw: text)
                return true
            }
            guard valid else { throw Mismatch(problem: "text that is not valid UTF-8") }
        case (.binary, .blob), (.transformable, .blob):
            output.append("\"")
            output.appendRaw(batch.withBytes(of: cell) { Data($0) }.base64EncodedString())
            output.append("\"")
        case (.binary, .externalDataReference), (.transformable, .externalDataReference):
            output.append("{\"externalDataReference\":")
            output.appendString(try string(of: cell, in: batch))
            output.append("}")
        case (.composite, .blob):
            // A nested object of the elements that have a value, in element-name order.
            guard let elements = batch.withBytes(of: cell, { CompositeValueCoding.decode($0) }) else {
                throw Mismatch(problem: "bytes that are not a composite value")
            }
            try appendComposite(elements, to: &output)
        case (.uuid, .blob) where cell.length == 16:
            let uuid = batch.withBytes(of: cell) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            output.appendString(uuid.uuidString)
        default:
            throw Mismatch(problem: Self.describe(cell.kind))
        }
    }

    /// A composite's elements as a JSON object, each value in the form its attribute type has in a document.
    private static func appendComposite(_ elements: [String: Value], to output: inout JSONOutput) throws(Mismatch) {
        output.append("{")
        var first = true
        for name in elements.keys.sorted() {
            guard let value = elements[name], !value.isNull else { continue }
            if !first { output.append(",") }
            first = false
            output.appendString(name)
            output.append(":")
            switch value {
            case .null: output.append("null")
            case .integer(let integer): output.appendInteger(integer)
            case .double(let real): output.appendDouble(real)
            case .decimal(let decimal): output.appendString(decimal.description)
            case .string(let text), .uri(let text): output.appendString(text)
            case .bool(let flag): output.append(flag ? "true" : "false")
            case .date(let date): appendDate(date.timeIntervalSinceReferenceDate, to: &output)
            case .data(let data), .transformable(let data):
                output.append("\"")
                output.appendRaw(data.base64EncodedString())
                output.append("\"")
            case .uuid(let uuid): output.appendString(uuid.uuidString)
            case .externalDataReference(let name):
                output.append("{\"externalDataReference\":")
                output.appendString(name)
                output.append("}")
            case .composite(let inner): try appendComposite(inner, to: &output)
            }
        }
        output.append("}")
    }

    /// A date as Decant's JSON writes it: ISO 8601 text when it is exact, else seconds since 2001 as a number.
    static func appendDate(_ seconds: Double, to output: inout JSONOutput) {
        output.bytes.append(UInt8(ascii: "\""))
        if ExactDate.appendText(referenceSeconds: seconds, to: &output.bytes) {
            output.bytes.append(UInt8(ascii: "\""))
        } else {
            output.bytes.removeLast()
            output.appendDouble(seconds)
        }
    }

    private static func string(of cell: RecordBatch.Cell, in batch: RecordBatch) throws(Mismatch) -> String {
        guard let text = batch.withBytes(of: cell, { String(validating: $0, as: UTF8.self) }) else {
            throw Mismatch(problem: "text that is not valid UTF-8")
        }
        return text
    }

    private static func describe(_ kind: RecordBatch.Kind) -> String {
        switch kind {
        case .null: "nil"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "text"
        case .blob: "bytes"
        case .externalDataReference: "a reference to an external file"
        default: "a relationship value"
        }
    }
}

@available(*, unavailable)
extension JSONRecordWriter: Sendable {}

extension Diagnostic.Kind {
    /// Transformable values `convert --decode-transformables` wrote as base64, as without the option: their archives
    /// hold more than Foundation's plain values (an app class, `NSOrderedSet`, …), or are damaged or no archive.
    public static let transformableKeptAsData = Diagnostic.Kind(rawValue: "transformable-kept-as-base64")
}
