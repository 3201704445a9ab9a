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
    var spellings: [String: ObjectSpelling] = [:]
    var currentReferenceSpelling = ReferenceSpelling()
    enum State { case open, finished, abandoned }
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
    struct ListCut {
        var offset: Int
        var members: Int
    }

    /// An object written up to the members of a list cut short: per such list, in order, the bytes that follow its
    /// members in the whole object (up to the members of the next list cut short, or the end of the object).
    struct OpenObject {
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
    struct KeptArchives {
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
}

@available(*, unavailable)
extension JSONRecordWriter: Sendable {}

extension Diagnostic.Kind {
    /// Transformable values `convert --decode-transformables` wrote as base64, as without the option: their archives
    /// hold more than Foundation's plain values (an app class, `NSOrderedSet`, …), or are damaged or no archive.
    public static let transformableKeptAsData = Diagnostic.Kind(rawValue: "transformable-kept-as-base64")
}
