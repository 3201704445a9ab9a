import Foundation

/// Records of one entity in flat, reusable storage: the unit readers produce and writers consume.
///
/// A batch holds no per-record objects: values are fixed-size cells, text and bytes live in one shared byte
/// buffer, to-many members in one shared reference list. ``removeAll(newLayout:)`` keeps the capacity, so a reader
/// that refills the same batch allocates nothing per record once the buffers have grown.
///
/// ```swift
/// var batch = RecordBatch(layout: layout)
/// batch.beginRecord(id: .primaryKey(1))
/// batch.appendNull(); batch.appendText("milk"); batch.appendNull()   // date, text, title
/// batch.appendReference(nil)                                          // folder
/// batch.endRecord()
/// let note = batch.record(at: 0)
/// ```
public struct RecordBatch: Sendable {
    /// The storage class of one cell.
    public enum Kind: UInt8, Sendable {
        /// nil.
        case null
        /// `integer` holds the value.
        case integer
        /// `integer` holds the bit pattern of a Double.
        case real
        /// UTF-8 text at `integer` (offset into ``bytes``), `length` bytes.
        case text
        /// Bytes at `integer` (offset into ``bytes``), `length` bytes.
        case blob
        /// A to-one reference: `integer` = primary key, `length` = destination entity index in ``entityNames``.
        case reference
        /// A reference to an external id: text at `integer` in ``bytes``, `length` bytes; `entity` in ``entityNames``.
        case externalReference
        /// A to-many list: `integer` = first index in ``references``, `length` = count; `entity` is
        /// ``RecordBatch/continuedList`` when further members follow in continuation batches (``Continuation``).
        case referenceList
        /// A to-many relationship carried by its inverse.
        case viaInverse
        /// An externally stored binary value whose file is missing, kept as a reference: the file name (in the
        /// store's `_EXTERNAL_DATA` folder) as text at `integer`, `length` bytes.
        case externalDataReference
    }

    /// One value slot.
    public struct Cell: Sendable {
        /// The storage class.
        public var kind: Kind
        /// For references to external ids, the destination entity index.
        public var entity: Int32
        /// The length of text, bytes or a list; the entity index of a reference.
        public var length: Int32
        /// The integer, the real's bit pattern, or an offset.
        public var integer: Int64

        /// Creates a cell.
        @inlinable
        public init(kind: Kind, integer: Int64 = 0, length: Int32 = 0, entity: Int32 = 0) {
            self.kind = kind
            self.integer = integer
            self.length = length
            self.entity = entity
        }
    }

    /// The entity layout every record of the batch follows.
    public private(set) var layout: RecordLayout
    /// Entity names that references point into (by index).
    public var entityNames: [String]
    /// Number of complete records.
    public private(set) var count: Int = 0
    /// Cells, `count × width`, row-major.
    public private(set) var cells: [Cell] = []
    /// Each record's identity, as a cell (`.integer` primary key or `.text` external id).
    public private(set) var identities: [Cell] = []
    /// Shared storage for text and bytes.
    public private(set) var bytes: [UInt8] = []
    /// Shared storage for to-many members (each a `.reference` or `.externalReference` cell).
    public private(set) var references: [Cell] = []

    /// What a continuation batch carries: further members of one to-many relationship of the record that ended the
    /// batch before it.
    ///
    /// A reader asked for parts (``PartedRecordReader``) ends a batch after a record with a list longer than its
    /// part size. That record carries every attribute and to-one whole, and at most the part size members of each
    /// to-many; each list cut short has the mark ``RecordBatch/continuedList`` (``isContinued(_:)``). Continuation
    /// batches follow, holding no record (``count`` is 0): each carries further members of one relationship, in
    /// ``references``, in layout order of the relationships cut short; the last part of each relationship is final.
    /// Only consumers that asked for parts see them (``MemberPartsConsumer``).
    public struct Continuation: Sendable, Hashable {
        /// The relationship's position in the layout's relationships.
        public var relationship: Int
        /// Whether these are the last members of the relationship.
        public var isFinal: Bool

        /// Creates a continuation.
        public init(relationship: Int, isFinal: Bool) {
            self.relationship = relationship
            self.isFinal = isFinal
        }
    }

    /// The continuation this batch carries (its members are all of ``references``); nil for a batch of records.
    public private(set) var continuation: Continuation?

    /// The `entity` of a list cell whose further members follow in continuation batches.
    public static let continuedList: Int32 = 1

    /// Cells per record: attributes, then relationships.
    public var width: Int { layout.attributes.count + layout.relationships.count }

    /// Creates an empty batch for `layout`.
    public init(layout: RecordLayout, entityNames: [String] = []) {
        self.layout = layout
        self.entityNames = entityNames
    }

    /// Empties the batch, keeping its capacity; optionally switches to another layout.
    public mutating func removeAll(newLayout: RecordLayout? = nil) {
        if let newLayout { layout = newLayout }
        count = 0
        continuation = nil
        cells.removeAll(keepingCapacity: true)
        identities.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        references.removeAll(keepingCapacity: true)
    }

    /// How far a batch's storage reaches: taken before appending a record, to drop that record again with
    /// ``rollBack(to:)`` (a reader that gives up on a record halfway).
    public struct Mark: Sendable {
        fileprivate var cells: Int
        fileprivate var identities: Int
        fileprivate var bytes: Int
        fileprivate var references: Int
        fileprivate var entityNames: Int
    }

    /// Where the storage ends now.
    public var mark: Mark {
        Mark(
            cells: cells.count, identities: identities.count, bytes: bytes.count, references: references.count,
            entityNames: entityNames.count)
    }

    /// Drops everything appended since `mark` was taken (which must be after the last ``endRecord()``).
    public mutating func rollBack(to mark: Mark) {
        cells.removeSubrange(mark.cells...)
        identities.removeSubrange(mark.identities...)
        bytes.removeSubrange(mark.bytes...)
        references.removeSubrange(mark.references...)
        entityNames.removeSubrange(mark.entityNames...)
    }

    // MARK: Appending

    /// Starts a record with a primary-key identity.
    public mutating func beginRecord(primaryKey: Int64) {
        identities.append(Cell(kind: .integer, integer: primaryKey))
    }

    /// Starts a record.
    public mutating func beginRecord(id: RecordID) {
        switch id {
        case .primaryKey(let key): identities.append(Cell(kind: .integer, integer: key))
        case .external(let name): identities.append(storeText(name))
        }
    }

    /// Starts a record that nothing can refer to (a CSV row with neither an `_id` nor a key): its identity is the
    /// external id `name` (``id(at:)``), kept for messages, and ``isAnonymous(at:)`` tells writers they may give it
    /// any unused key without remembering the name.
    public mutating func beginRecord(anonymous name: String) {
        var cell = storeText(name)
        cell.entity = Self.anonymousIdentity
        identities.append(cell)
    }

    /// Whether record `row` was started with ``beginRecord(anonymous:)``.
    public func isAnonymous(at row: Int) -> Bool {
        let cell = identities[row]
        return cell.kind == .text && cell.entity == Self.anonymousIdentity
    }

    /// The mark an anonymous identity's cell carries in its otherwise unused `entity`.
    private static let anonymousIdentity: Int32 = -1

    /// Completes the record started last; its cells must number ``width``.
    public mutating func endRecord() {
        count += 1
    }

    /// Appends a prepared cell.
    public mutating func append(_ cell: Cell) { cells.append(cell) }

    /// Appends nil.
    public mutating func appendNull() { cells.append(Cell(kind: .null)) }

    /// Appends an integer.
    public mutating func appendInteger(_ value: Int64) { cells.append(Cell(kind: .integer, integer: value)) }

    /// Appends a real.
    public mutating func appendReal(_ value: Double) {
        cells.append(Cell(kind: .real, integer: Int64(bitPattern: value.bitPattern)))
    }

    /// Appends text.
    public mutating func appendText(_ text: String) { cells.append(storeText(text)) }

    /// Appends text from raw UTF-8 bytes, without creating a String.
    public mutating func appendText(utf8 pointer: UnsafeRawBufferPointer) {
        cells.append(Cell(kind: .text, integer: Int64(bytes.count), length: Int32(pointer.count)))
        bytes.append(contentsOf: pointer)
    }

    /// Appends bytes.
    public mutating func appendBlob(_ data: some Collection<UInt8>) {
        cells.append(Cell(kind: .blob, integer: Int64(bytes.count), length: Int32(data.count)))
        bytes.append(contentsOf: data)
    }

    /// Appends bytes from raw memory.
    public mutating func appendBlob(raw pointer: UnsafeRawBufferPointer) {
        cells.append(Cell(kind: .blob, integer: Int64(bytes.count), length: Int32(pointer.count)))
        bytes.append(contentsOf: pointer)
    }

    /// Appends a reference to an externally stored value's file that is missing (kept, not read).
    public mutating func appendExternalDataReference(_ fileName: String) {
        var cell = storeText(fileName)
        cell.kind = .externalDataReference
        cells.append(cell)
    }

    /// Appends a to-one reference (nil for none).
    public mutating func appendReference(_ reference: ObjectReference?) {
        guard let reference else { return cells.append(Cell(kind: .null)) }
        cells.append(referenceCell(reference))
    }

    /// Appends a to-one reference by primary key and entity index.
    public mutating func appendReference(primaryKey: Int64, entityIndex: Int32) {
        cells.append(Cell(kind: .reference, integer: primaryKey, length: entityIndex))
    }

    /// Appends a to-many list.
    public mutating func appendReferenceList(_ list: [ObjectReference]) {
        let start = references.count
        for reference in list { references.append(referenceCell(reference)) }
        cells.append(Cell(kind: .referenceList, integer: Int64(start), length: Int32(list.count)))
    }

    /// Appends a to-many list by primary keys of one destination entity.
    public mutating func appendReferenceList(primaryKeys: [Int64], entityIndices: [Int32]) {
        let start = references.count
        for (key, entity) in zip(primaryKeys, entityIndices) {
            references.append(Cell(kind: .reference, integer: key, length: entity))
        }
        cells.append(Cell(kind: .referenceList, integer: Int64(start), length: Int32(primaryKeys.count)))
    }

    /// Appends the first part of a to-many list by primary keys whose further members follow in continuation
    /// batches (``Continuation``); the record must be the batch's last.
    public mutating func appendContinuedReferenceList(primaryKeys: [Int64], entityIndices: [Int32]) {
        appendReferenceList(primaryKeys: primaryKeys, entityIndices: entityIndices)
        cells[cells.count - 1].entity = Self.continuedList
    }

    /// Makes this emptied batch (``removeAll(newLayout:)``) a continuation: members (by primary key and entity index)
    /// of one relationship of the record that ended the batch before.
    public mutating func setContinuation(
        _ continuation: Continuation, primaryKeys: [Int64], entityIndices: [Int32]
    ) {
        self.continuation = continuation
        for (key, entity) in zip(primaryKeys, entityIndices) {
            references.append(Cell(kind: .reference, integer: key, length: entity))
        }
    }

    /// Whether `cell` is a to-many list whose further members follow in continuation batches.
    @inlinable
    public func isContinued(_ cell: Cell) -> Bool {
        cell.kind == .referenceList && cell.entity == Self.continuedList
    }

    /// Marks a to-many relationship as carried by its inverse.
    public mutating func appendViaInverse() { cells.append(Cell(kind: .viaInverse)) }

    /// Appends a whole record in the layout's order.
    public mutating func append(_ record: Record) {
        beginRecord(id: record.id)
        for (value, attribute) in zip(record.values, layout.attributes) { append(value, as: attribute.type) }
        for value in record.relationships {
            switch value {
            case .toOne(let reference): appendReference(reference)
            case .toMany(let list): appendReferenceList(list)
            case .viaInverse: appendViaInverse()
            }
        }
        endRecord()
    }

    /// Appends a value, stored as Core Data stores that attribute type.
    public mutating func append(_ value: Value, as type: AttributeType) {
        switch value {
        case .null: appendNull()
        case .integer(let integer): appendInteger(integer)
        case .bool(let flag): appendInteger(flag ? 1 : 0)
        case .double(let real): appendReal(real)
        case .decimal(let decimal) where decimal.isNaN: appendText(NumberText.decimalNotANumber)
        case .decimal(let decimal): appendReal(NSDecimalNumber(decimal: decimal).doubleValue)
        case .date(let date): appendReal(date.timeIntervalSinceReferenceDate)
        case .string(let text), .uri(let text): appendText(text)
        case .data(let data), .transformable(let data): appendBlob(data)
        case .uuid(let uuid): appendBlob(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        case .externalDataReference(let name): appendExternalDataReference(name)
        case .composite(let elements): appendBlob(CompositeValueCoding.encode(elements))
        }
    }

    private mutating func storeText(_ text: String) -> Cell {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        return Cell(kind: .text, integer: Int64(start), length: Int32(bytes.count - start))
    }

    private mutating func entityIndex(_ name: String) -> Int32 {
        if let index = entityNames.firstIndex(of: name) { return Int32(index) }
        entityNames.append(name)
        return Int32(entityNames.count - 1)
    }

    private mutating func referenceCell(_ reference: ObjectReference) -> Cell {
        let entity = entityIndex(reference.entity)
        switch reference.id {
        case .primaryKey(let key):
            return Cell(kind: .reference, integer: key, length: entity)
        case .external(let name):
            var cell = storeText(name)
            cell.kind = .externalReference
            cell.entity = entity
            return cell
        }
    }

    // MARK: Reading

    /// The cell of record `row` at position `column` (attributes first, then relationships).
    public func cell(row: Int, column: Int) -> Cell { cells[row * width + column] }

    /// The bytes a text or blob cell points at.
    public func withBytes<R>(of cell: Cell, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { all in
            let start = Int(cell.integer)
            return try body(UnsafeRawBufferPointer(rebasing: all[start..<start + Int(cell.length)]))
        }
    }

    /// The identity of record `row`.
    public func id(at row: Int) -> RecordID {
        let cell = identities[row]
        return cell.kind == .integer ? .primaryKey(cell.integer) : .external(string(of: cell))
    }

    /// The attribute value of record `row` at attribute position `index`, typed by the layout.
    public func value(row: Int, attribute index: Int) -> Value {
        decodeValue(cell(row: row, column: index), as: layout.attributes[index].type)
    }

    /// Record `row` as a ``Record``.
    public func record(at row: Int) -> Record {
        let attributeCount = layout.attributes.count
        let values = (0..<attributeCount).map { value(row: row, attribute: $0) }
        let relationships = layout.relationships.indices.map { index -> RelationshipValue in
            let cell = cell(row: row, column: attributeCount + index)
            switch cell.kind {
            case .referenceList:
                let start = Int(cell.integer)
                return .toMany(references[start..<start + Int(cell.length)].map { reference(of: $0) })
            case .viaInverse:
                return .viaInverse
            case .reference, .externalReference:
                return .toOne(reference(of: cell))
            default:
                return layout.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
            }
        }
        return Record(entity: layout.entityName, id: id(at: row), values: values, relationships: relationships)
    }

    /// The reference a `.reference` or `.externalReference` cell holds.
    public func reference(of cell: Cell) -> ObjectReference {
        let index = Int(cell.kind == .externalReference ? cell.entity : cell.length)
        let entity = entityNames.indices.contains(index) ? entityNames[index] : "?"
        if cell.kind == .externalReference { return ObjectReference(entity: entity, id: .external(string(of: cell))) }
        return ObjectReference(entity: entity, id: .primaryKey(cell.integer))
    }

    private func string(of cell: Cell) -> String {
        withBytes(of: cell) { String(decoding: $0, as: UTF8.self) }
    }

    private func decodeValue(_ cell: Cell, as type: AttributeType) -> Value {
        switch cell.kind {
        case .null, .viaInverse, .referenceList, .reference, .externalReference:
            return .null
        case .integer:
            switch type {
            case .boolean: return .bool(cell.integer != 0)
            case .double, .float: return .double(Double(cell.integer))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(cell.integer)))
            case .decimal: return .decimal(Decimal(cell.integer))
            default: return .integer(cell.integer)
            }
        case .real:
            let real = Double(bitPattern: UInt64(bitPattern: cell.integer))
            switch type {
            case .date: return .date(Date(timeIntervalSinceReferenceDate: real))
            case .decimal:
                // A stored real outside Decimal's range (or not finite) stays a double rather than trapping.
                guard real.isFinite, case let decimal = Decimal(real), !decimal.isNaN else { return .double(real) }
                return .decimal(decimal)
            case .integer16, .integer32, .integer64, .boolean:
                return real.rounded() == real && abs(real) < 9.2e18 ? .integer(Int64(real)) : .double(real)
            default: return .double(real)
            }
        case .externalDataReference:
            return .externalDataReference(string(of: cell))
        case .text:
            let text = string(of: cell)
            switch type {
            case .uri: return .uri(text)
            case .decimal where text == NumberText.decimalNotANumber: return .decimal(.nan)
            case .decimal: return Decimal(string: text).map(Value.decimal) ?? .string(text)
            default: return .string(text)
            }
        case .blob:
            let data = withBytes(of: cell) { Data($0) }
            switch type {
            case .uuid where data.count == 16:
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            case .transformable: return .transformable(data)
            case .composite: return CompositeValueCoding.decode(data).map(Value.composite) ?? .data(data)
            default: return .data(data)
            }
        }
    }
}
