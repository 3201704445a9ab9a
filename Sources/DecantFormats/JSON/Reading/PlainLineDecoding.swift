import DecantCore
import DecantCodecs
import Foundation

/// Plain NDJSON lines read straight from their bytes into batches, as ``PlainObjectImporter/importTopLevel(_:into:)``
/// would read their trees: keys in any order, strings with escapes, integers, booleans, ISO 8601 dates, nulls,
/// relationships by key and nested objects of a relationship's destination that hold only attributes.
///
/// A line is first read whole without changing anything (values into ``LineScratch``, key look-ups against what
/// is defined so far and what the line itself defines); only then are its objects identified, remembered and
/// appended, in the order the tree path appends them. For anything else — an unknown, ambiguous or repeated key,
/// a value that is not of its attribute's own plain form, a number that does not fit, a nested object holding a
/// relationship or mentioning the top-level hierarchy, a key defined twice, a reference to a key not seen yet,
/// malformed text — the line is left untouched and the reader parses it into a tree as before, so accepted input,
/// results and messages stay the tree path's.
extension PlainObjectImporter {
    /// One attribute value read from a line.
    struct ScannedCell {
        enum Kind {
            case absent
            case null
            case integer
            case real
            /// UTF-8 text at `start..<end` of the scratch bytes.
            case text
        }

        var kind = Kind.absent
        var integer: Int64 = 0
        var real: Double = 0
        var start = 0
        var end = 0
    }

    /// An object of a relationship read from a line: by key (with the entity of the object defined under that key,
    /// once ``resolveMentions(_:owner:ownerKey:)`` has found it), or nested (an index into ``LineScratch/nested``).
    enum ScannedMention {
        case key(String, entity: String?)
        case nested(Int)
    }

    /// A relationship's value read from a line.
    enum ScannedRelationship {
        case absent
        case null
        case one(ScannedMention)
        case many([ScannedMention])
    }

    /// A nested object read from a line: its entity, its attribute values and its key, and what it turned out to be.
    struct ScannedObject {
        var entity: LineEntity
        var cells: [ScannedCell]
        var key: String?
        /// The object seen before (in the input or earlier in the line) that it names.
        var known: String?
    }

    /// An entity as lines use it (a class: a line borrows it without copying the plan).
    final class LineEntity {
        let name: String
        let plan: EntityPlan
        let root: String
        /// The key attribute's index, if the entity has one.
        let keyIndex: Int?
        /// Keys met so far, their UTF-8 bytes one after the other (each ending at its `targetKeyEnds`), and where
        /// they go (nil: the tree path must read the key). Flat, so that looking a key up copies and retains nothing.
        var targetKeyBytes: [UInt8] = []
        var targetKeyEnds: [Int] = []
        var targets: [Target?] = []
        var sinkSlot: Int?
        /// Per relationship: its destination's place in ``LineEntities/list`` once looked up (-1: not yet, -2: none).
        var destinations: [Int]
        /// What each line asks of the plan, taken out once: reading a field of `plan` on a line copies the plan or
        /// its layout, retaining every array they hold.
        let isAbstract: Bool
        let attributeTypes: [AttributeType]
        let isToMany: [Bool]
        let carriedByInverse: [Bool]
        /// Per relationship, its value when a line gives none.
        let emptyValues: [RelationshipValue]

        init(name: String, plan: EntityPlan, root: String, keyIndex: Int?) {
            self.name = name
            self.plan = plan
            self.root = root
            self.keyIndex = keyIndex
            self.destinations = Array(repeating: -1, count: plan.layout.relationships.count)
            isAbstract = plan.entity.isAbstract
            attributeTypes = plan.layout.attributes.map(\.type)
            isToMany = plan.layout.relationships.map(\.isToMany)
            carriedByInverse = plan.carriedByInverse
            emptyValues = plan.layout.relationships.indices.map { PlainObjectImporter.emptyValue(plan, $0) }
        }
    }

    /// The bytes and values of the line being read, kept from line to line.
    struct LineScratch {
        var bytes: [UInt8] = []
        var cells: [ScannedCell] = []
        var relationships: [ScannedRelationship] = []
        /// The relationships in the order their keys came.
        var relationshipOrder: [Int] = []
        var nested: [ScannedObject] = []
        /// Keys the line's nested objects define, per hierarchy root.
        var definedHere: [(root: String, key: String, entity: String)] = []
    }

    /// The entities lines have used.
    struct LineEntities {
        var root: LineEntity?
        var byName: [String: LineEntity] = [:]
        /// Every line entity, in the order they were made (destinations refer to them by place, not by reference,
        /// which would make cycles).
        var list: [LineEntity] = []
    }

    /// Reads `line` (without its line feed) into the batches of `sink`; false, with nothing changed, when the line
    /// is not of the form read here.
    mutating func importLine(_ line: UnsafeBufferPointer<UInt8>, into sink: inout BatchSink) -> Bool {
        guard let entity = lineEntity(rootEntity), !entity.isAbstract else { return false }
        // Taken out while the line is read (the methods reading it are the importer's own), put back after.
        var scratch = lineScratch
        lineScratch = LineScratch()
        var cells = scratch.cells
        scratch.cells = []
        defer {
            scratch.cells = cells
            lineScratch = scratch
        }
        scratch.bytes.removeAll(keepingCapacity: true)
        scratch.nested.removeAll(keepingCapacity: true)
        scratch.definedHere.removeAll(keepingCapacity: true)
        scratch.relationshipOrder.removeAll(keepingCapacity: true)
        cells.removeAll(keepingCapacity: true)
        cells.append(contentsOf: repeatElement(ScannedCell(), count: entity.attributeTypes.count))
        scratch.relationships.removeAll(keepingCapacity: true)
        scratch.relationships.append(contentsOf: repeatElement(.absent, count: entity.isToMany.count))
        var cursor = LineCursor(line)
        guard scanObject(&cursor, entity: entity, cells: &cells, scratch: &scratch, topLevel: true) else {
            return false
        }
        cursor.skipBlanks()
        guard cursor.isAtEnd else { return false }

        // The identity, as the tree path finds it.
        var key: String?
        if let keyIndex = entity.keyIndex { key = Self.keyText(cells[keyIndex], scratch.bytes) }
        var remembers = false
        if let key, !topLevelKeysUnremembered {
            guard defined[entity.root]?[ExactKey(key)] == nil else { return false }
            remembers = true
        }
        // Every mention must resolve as the tree path resolves it, nested objects defining keys as they come.
        guard resolveMentions(&scratch, owner: entity, ownerKey: remembers ? key : nil) else { return false }

        // Nothing can fail from here on.
        let id: RecordID
        var anonymous = false
        if let key, !remembers {
            id = .external(key)
            anonymous = topLevelObjectsAnonymous
        } else if let key {
            defined[entity.root, default: [:]][ExactKey(key)] = entity.name
            unresolved.removeValue(forKey: ExactKey(entity.root, key))
            id = .external(key)
        } else {
            generated += 1
            id = .external("#\(generated)")
        }
        let owner = ObjectReference(entity: entity.name, id: id)
        var values = entity.emptyValues
        for index in scratch.relationshipOrder {
            switch scratch.relationships[index] {
            case .absent, .null: break
            case .one(let mention):
                values[index] = .toOne(
                    commit(mention, scratch: scratch, relationship: index, of: entity, owner: owner, into: &sink))
            case .many(let mentions):
                var list: [ObjectReference] = []
                list.reserveCapacity(mentions.count)
                for mention in mentions {
                    list.append(
                        commit(mention, scratch: scratch, relationship: index, of: entity, owner: owner, into: &sink))
                }
                values[index] = entity.carriedByInverse[index] ? .viaInverse : .toMany(list)
            }
        }
        let slot = sinkSlot(of: entity, in: &sink)
        let bytes = scratch.bytes
        sink.withBatch(slot: slot) { batch in
            if anonymous, case .external(let name) = id {
                batch.beginRecord(anonymous: name)
            } else {
                batch.beginRecord(id: id)
            }
            Self.append(cells, bytes, to: &batch)
            for value in values { Self.append(value, to: &batch) }
            batch.endRecord()
        }
        topLevelCount += 1
        linesImportedDirectly += 1
        return true
    }

    /// The line entity of `name` (made on first use).
    private mutating func lineEntity(_ name: String) -> LineEntity? {
        if let root = lineEntities.root, root.name == name { return root }
        if let known = lineEntities.byName[name] { return known }
        guard let plan = plans.plan(for: name) else { return nil }
        let entity = LineEntity(name: name, plan: plan, root: rootName(of: name), keyIndex: keyAttribute(of: name))
        lineEntities.byName[name] = entity
        lineEntities.list.append(entity)
        if name == rootEntity { lineEntities.root = entity }
        return entity
    }

    /// The line entity of the destination of `entity`'s relationship `index` (looked up by name once).
    private mutating func destination(of entity: LineEntity, relationship index: Int) -> LineEntity? {
        let place = entity.destinations[index]
        if place >= 0 { return lineEntities.list[place] }
        if place == -2 { return nil }
        guard let name = entity.plan.destinationNames[index], let destination = lineEntity(name) else {
            entity.destinations[index] = -2
            return nil
        }
        entity.destinations[index] = lineEntities.list.firstIndex { $0 === destination } ?? -2
        return destination
    }

    /// The destination ``destination(of:relationship:)`` found for the relationship read from the line.
    func scannedDestination(of entity: LineEntity, relationship index: Int) -> LineEntity? {
        let place = entity.destinations[index]
        return place >= 0 ? lineEntities.list[place] : nil
    }

    func sinkSlot(of entity: LineEntity, in sink: inout BatchSink) -> Int {
        if let known = entity.sinkSlot { return known }
        let slot = sink.slot(for: entity.name, layout: entity.plan.layout)
        entity.sinkSlot = slot
        return slot
    }

    /// Where JSON key `key` goes in `entity`, or nil when the tree path must read it.
    private mutating func lineTarget(_ key: UnsafeBufferPointer<UInt8>, of entity: LineEntity) -> Target? {
        let known = entity.targetKeyBytes.withUnsafeBufferPointer { bytes -> Int? in
            var start = 0
            for (index, end) in entity.targetKeyEnds.enumerated() {
                defer { start = end }
                guard end - start == key.count else { continue }
                guard let base = bytes.baseAddress, let other = key.baseAddress else { return index }  // both empty
                if memcmp(base + start, other, key.count) == 0 { return index }
            }
            return nil
        }
        if let known { return entity.targets[known] }
        let found = try? target(
            for: String(decoding: key, as: UTF8.self), plan: entity.plan, at: Location(path: path))
        entity.targetKeyBytes.append(contentsOf: key)
        entity.targetKeyEnds.append(entity.targetKeyBytes.count)
        entity.targets.append(found ?? nil)
        return found ?? nil
    }

    // MARK: Reading

    /// An object's members (at its `{`) into `cells` (attributes) and, at the top level, the relationships of
    /// `scratch`; a nested object may hold attributes only.
    private mutating func scanObject(
        _ cursor: inout LineCursor, entity: LineEntity, cells: inout [ScannedCell], scratch: inout LineScratch,
        topLevel: Bool
    ) -> Bool {
        guard cursor.take(UInt8(ascii: "{")) else { return false }
        cursor.skipBlanks()
        if cursor.take(UInt8(ascii: "}")) { return true }
        while true {
            cursor.skipBlanks()
            guard let key = cursor.key(), let target = lineTarget(key, of: entity) else { return false }
            cursor.skipBlanks()
            switch target {
            case .attribute(let index):
                guard cells[index].kind == .absent,
                    scanValue(&cursor, type: entity.attributeTypes[index], into: &cells[index], scratch: &scratch)
                else { return false }
            case .relationship(let index), .reference(let index):
                guard topLevel, case .absent = scratch.relationships[index],
                    let value = scanRelationship(
                        &cursor, index: index, of: entity, byKey: target == .reference(index), scratch: &scratch)
                else { return false }
                scratch.relationships[index] = value
                scratch.relationshipOrder.append(index)
            }
            cursor.skipBlanks()
            if cursor.take(UInt8(ascii: "}")) { return true }
            guard cursor.take(UInt8(ascii: ",")) else { return false }
        }
    }

    /// One attribute value of `type` in the form the tree path reads the same way.
    private func scanValue(
        _ cursor: inout LineCursor, type: AttributeType, into cell: inout ScannedCell, scratch: inout LineScratch
    ) -> Bool {
        guard let byte = cursor.peek() else { return false }
        switch byte {
        case UInt8(ascii: "n"):
            guard cursor.takeWord("null") else { return false }
            cell.kind = .null
            return true
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            guard type == .boolean else { return false }
            if cursor.takeWord("true") {
                cell.integer = 1
            } else if cursor.takeWord("false") {
                cell.integer = 0
            } else {
                return false
            }
            cell.kind = .integer
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let (number, isInteger) = cursor.number() else { return false }
            switch type {
            case .integer16, .integer32, .integer64:
                guard isInteger, let value = Self.integer(number, type: type) else { return false }
                cell.kind = .integer
                cell.integer = value
            case .double, .float:
                guard let value = Double(String(decoding: number, as: UTF8.self)) else { return false }
                cell.kind = .real
                cell.real = value
            default:
                return false
            }
            return true
        case UInt8(ascii: "\""):
            let start = scratch.bytes.count
            guard Self.string(&cursor, into: &scratch.bytes) else { return false }
            switch type {
            case .string, .uri:
                cell.kind = .text
                cell.start = start
                cell.end = scratch.bytes.count
            case .date:
                let seconds = scratch.bytes.withUnsafeBytes { bytes in
                    ExactDate.referenceSeconds(isoUTF8: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                }
                guard case .success(let value) = seconds else { return false }
                scratch.bytes.removeSubrange(start...)
                cell.kind = .real
                cell.real = value
            default:
                return false
            }
            return true
        default:
            return false
        }
    }

    /// A relationship's value: null, a key or a nested object (to-one), an array of them (to-many).
    private mutating func scanRelationship(
        _ cursor: inout LineCursor, index: Int, of entity: LineEntity, byKey: Bool, scratch: inout LineScratch
    ) -> ScannedRelationship? {
        guard let destination = destination(of: entity, relationship: index), destination.root != topLevelRoot,
            !destination.isAbstract
        else { return nil }
        let carried = entity.carriedByInverse[index]
        func mention(_ cursor: inout LineCursor) -> ScannedMention? {
            guard let byte = cursor.peek() else { return nil }
            if byte == UInt8(ascii: "{") {
                guard !byKey else { return nil }
                var cells = [ScannedCell](repeating: ScannedCell(), count: destination.attributeTypes.count)
                guard scanObject(&cursor, entity: destination, cells: &cells, scratch: &scratch, topLevel: false)
                else { return nil }
                let key = destination.keyIndex.flatMap { Self.keyText(cells[$0], scratch.bytes) }
                scratch.nested.append(ScannedObject(entity: destination, cells: cells, key: key))
                return .nested(scratch.nested.count - 1)
            }
            // A key: a string where the key is text, an integer where it is one.
            guard !carried, let keyIndex = destination.keyIndex else { return nil }
            var cell = ScannedCell()
            let start = scratch.bytes.count
            let type = destination.attributeTypes[keyIndex]
            guard type == .string || type == .integer16 || type == .integer32 || type == .integer64,
                byte != UInt8(ascii: "n"),
                scanValue(&cursor, type: type, into: &cell, scratch: &scratch),
                let key = Self.keyText(cell, scratch.bytes)
            else { return nil }
            scratch.bytes.removeSubrange(start...)
            return .key(key, entity: nil)
        }
        if cursor.takeWord("null") { return .null }
        guard entity.isToMany[index] else {
            return mention(&cursor).map(ScannedRelationship.one)
        }
        guard cursor.take(UInt8(ascii: "[")) else { return nil }
        var list: [ScannedMention] = []
        cursor.skipBlanks()
        if cursor.take(UInt8(ascii: "]")) { return .many(list) }
        while true {
            cursor.skipBlanks()
            guard let member = mention(&cursor) else { return nil }
            list.append(member)
            cursor.skipBlanks()
            if cursor.take(UInt8(ascii: "]")) { return .many(list) }
            guard cursor.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// Whether every mention resolves as in the tree path: a key names an object defined before (in the input or
    /// by a nested object earlier in the line), whose entity the mention then carries, or one already awaited; a
    /// nested object naming one seen before may stand for it unless its relationship is carried by the inverse.
    /// `ownerKey`: the top-level object's key, when it is remembered (the line defines it first).
    private func resolveMentions(_ scratch: inout LineScratch, owner: LineEntity, ownerKey: String?) -> Bool {
        if let ownerKey { scratch.definedHere.append((owner.root, ownerKey, owner.name)) }
        func known(_ root: String, _ key: String) -> String? {
            if let entity = defined[root]?[ExactKey(key)] { return entity }
            return scratch.definedHere.first { $0.root == root && ExactKey($0.key) == ExactKey(key) }?.entity
        }
        // The mention as resolved (a key with its object's entity), or nil when it does not resolve here.
        func resolved(_ mention: ScannedMention, in destination: LineEntity, carried: Bool) -> ScannedMention? {
            switch mention {
            case .key(let key, _):
                if let entity = known(destination.root, key) { return .key(key, entity: entity) }
                return unresolved[ExactKey(destination.root, key)] != nil ? mention : nil
            case .nested(let position):
                guard let key = scratch.nested[position].key else { return mention }
                if let entity = known(destination.root, key) {
                    guard !carried else { return nil }
                    scratch.nested[position].known = entity
                } else {
                    scratch.definedHere.append((destination.root, key, destination.name))
                }
                return mention
            }
        }
        for index in scratch.relationshipOrder {
            let carried = owner.carriedByInverse[index]
            switch scratch.relationships[index] {
            case .absent, .null:
                continue
            case .one(let mention):
                guard let destination = scannedDestination(of: owner, relationship: index),
                    let done = resolved(mention, in: destination, carried: carried)
                else { return false }
                scratch.relationships[index] = .one(done)
            case .many(var list):
                guard let destination = scannedDestination(of: owner, relationship: index) else { return false }
                scratch.relationships[index] = .absent  // the list's only holder while it is changed in place
                for place in list.indices {
                    guard let done = resolved(list[place], in: destination, carried: carried) else { return false }
                    list[place] = done
                }
                scratch.relationships[index] = .many(list)
            }
        }
        return true
    }
}
