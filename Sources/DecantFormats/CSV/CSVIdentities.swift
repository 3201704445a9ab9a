import DecantCore
import DecantCodecs

/// How the objects of each entity are identified in CSV input, and how reference text becomes an
/// ``ObjectReference``.
///
/// An entity file with an `_id` column names its objects: `p12` is primary key 12, anything else the source's own
/// id. Without one, an entity with a key attribute (`FormatOptions.keys`, else a uniqueness constraint on a single
/// attribute, inherited ones included) is identified by that attribute's value, spelled canonically (`007` and `7`
/// are one integer key); other objects get an id from their line that nothing can refer to.
///
/// A reference (a to-one column, a join file's member) is `Entity/id`, naming the object's concrete entity, or the
/// id alone when the destination entity has no sub-entities. The id is a key value where the destination is
/// identified by its key.
struct CSVIdentities {
    /// How one entity's objects are identified.
    enum Mode {
        /// By the `_id` column (or, for an entity without a file, by ids written `p12` or the source's own).
        case explicit
        /// By the value of this attribute.
        case key(Key)
        /// By line number: nothing refers to them.
        case implicit
    }

    /// A key attribute: its name and type (not the whole ``Attribute``, a large value copied on every look-up).
    struct Key {
        let name: String
        let type: AttributeType
    }

    let model: ObjectModel
    /// Per entity name, its mode.
    private(set) var modes: [String: Mode] = [:]
    /// Per entity name, whether it has concrete sub-entities (a bare id cannot say which entity it is).
    private let hasSubentities: Set<String>
    /// Per entity name, the entity and the names of its descendants.
    private let hierarchies: [String: Set<String>]
    /// The names of the abstract entities.
    private let abstractEntities: Set<String>

    /// Identities for `model`: entities are explicit, or keyed where `keys` or a uniqueness constraint names an
    /// attribute, until ``setMode(_:for:)`` says what their file holds.
    /// - Throws: `.usage` for a key naming no attribute of its entity.
    init(model: ObjectModel, keys: [String: String]) throws {
        self.model = model
        var hierarchies: [String: Set<String>] = [:]
        for entity in model.entities {
            for holder in [entity] + model.ancestors(of: entity) {
                hierarchies[holder.name, default: []].insert(entity.name)
            }
        }
        self.hierarchies = hierarchies
        self.abstractEntities = Set(model.entities.filter(\.isAbstract).map(\.name))
        self.hasSubentities = Set(
            model.entities.filter { entity in
                hierarchies[entity.name, default: []].contains { name in
                    name != entity.name && model.entity(named: name)?.isAbstract == false
                }
            }.map(\.name))
        for name in keys.keys where model.entity(named: name) == nil {
            throw DecantError(.usage, "--key \(name)=…: the model has no entity \(name)")
        }
        for entity in model.entities {
            modes[entity.name] =
                try Self.keyAttribute(of: entity, in: model, keys: keys).map { .key(Key(name: $0.name, type: $0.type)) }
                ?? .explicit
        }
    }

    /// The attribute that identifies objects of `entity`: from `keys` (the entity's or its nearest ancestor's),
    /// else the first uniqueness constraint of one attribute.
    private static func keyAttribute(
        of entity: Entity, in model: ObjectModel, keys: [String: String]
    ) throws
        -> Attribute?
    {
        let attributes = model.properties(of: entity).attributes.filter { !$0.isTransient }
        let lineage = [entity] + model.ancestors(of: entity)
        if let holder = lineage.first(where: { keys[$0.name] != nil }), let name = keys[holder.name] {
            guard let attribute = attributes.first(where: { $0.name == name }) else {
                throw DecantError(.usage, "--key \(holder.name)=\(name): \(entity.name) has no attribute \(name)")
            }
            return attribute
        }
        for holder in lineage {
            for constraint in holder.uniquenessConstraints where constraint.count == 1 {
                if let attribute = attributes.first(where: { $0.name == constraint[0] }) { return attribute }
            }
        }
        return nil
    }

    /// The key attribute of `entity`, if it has one.
    func keyAttribute(of entity: String) -> Key? {
        if case .key(let attribute)? = modes[entity] { return attribute }
        return nil
    }

    /// Says how the file of `entity` identifies its objects: by its `_id` column, by its key column, or not at all.
    mutating func setMode(_ mode: Mode, for entity: String) {
        modes[entity] = mode
    }

    /// The mode of `entity`.
    func mode(of entity: String) -> Mode {
        modes[entity] ?? .explicit
    }

    /// The id of an object of `entity` written as `text` (an `_id` field, a join file's owner): `p12`, the source's
    /// own id, or a key value; `Entity/` before it is allowed when it names `entity`.
    /// - Throws: `.malformedInput` for an empty id, another entity, or a key value that does not fit the key's type.
    func id(of entity: String, text: String, at location: @autoclosure () -> Location) throws -> RecordID {
        var text = text
        if Self.hasEntityPrefix(text, entity) { text = String(text.utf8.dropFirst(entity.utf8.count + 1))! }
        guard !text.isEmpty else {
            throw DecantError(.malformedInput, "an empty object id", at: location())
        }
        switch mode(of: entity) {
        case .key(let attribute):
            // An integer in its one canonical spelling is its own canonical text: no parse, no new string.
            let type = attribute.type
            if type == .integer64 || type == .integer32 || type == .integer16, Self.isCanonicalInteger(text) {
                return .external(text)
            }
            guard let parsed = CSVValueText.parse(text, as: attribute.type),
                let canonical = CSVValueText.canonical(parsed, as: attribute.type)
            else {
                throw DecantError(
                    .malformedInput,
                    "\(text.debugDescription) is not a \(entity) key: expected "
                        + "\(CSVValueText.expectation(for: attribute.type)) (\(attribute.type.modelName) attribute "
                        + "\(attribute.name))", at: location())
            }
            return .external(canonical)
        case .explicit, .implicit:
            return Self.recordID(text)
        }
    }

    /// Whether `text` starts with `entity` and a slash.
    private static func hasEntityPrefix(_ text: String, _ entity: String) -> Bool {
        let utf8 = text.utf8
        let count = entity.utf8.count
        guard utf8.count > count, utf8.starts(with: entity.utf8) else { return false }
        return utf8[utf8.index(utf8.startIndex, offsetBy: count)] == UInt8(ascii: "/")
    }

    /// Whether `text` is an integer as ``CSVValueText`` formats one: an optional minus sign and up to 18 digits,
    /// no leading zero (`0` alone), not `-0`.
    static func isCanonicalInteger(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isCanonicalInteger(UnsafeRawBufferPointer($0)) }
    }

    /// ``isCanonicalInteger(_:)`` of the UTF-8 `bytes`.
    static func isCanonicalInteger(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let negative = bytes.first == UInt8(ascii: "-")
        let digits = negative ? bytes.count - 1 : bytes.count
        guard digits >= 1, digits <= 18 else { return false }
        let first = bytes[negative ? 1 : 0]
        for byte in bytes[(negative ? 1 : 0)...] where byte < 0x30 || byte > 0x39 { return false }
        return first != 0x30 || bytes.count == 1
    }

    /// The key of an id written `p12` exactly (no spaces, no leading zero, a non-negative Int64: `p0` is the key 0
    /// a dangling to-one of a real store holds, as the CSV writer spells it), read from its bytes as
    /// ``recordID(_:)`` reads it from text; nil for anything else.
    static func primaryKey(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count > 1, bytes.count <= 19, bytes[0] == UInt8(ascii: "p"),
            bytes[1] != UInt8(ascii: "0") || bytes.count == 2
        else { return nil }
        var key: Int64 = 0
        for byte in bytes[1...] {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            key = key * 10 + Int64(byte - 0x30)
        }
        return key
    }

    /// The id that ``id(of:text:at:)`` reads from `bytes` for an entity identified as `mode` says, when the bytes
    /// have the one spelling that needs no parse (a key integer in its canonical form where the key is an integer,
    /// `p12` where ids are explicit; nothing to trim, no `Entity/`); nil for anything else, which takes the general
    /// path. Per row, the general path's String work cost more than the row's other fields.
    static func plainID(_ bytes: UnsafeRawBufferPointer, mode: Mode) -> RecordID? {
        switch mode {
        case .key(let key):
            guard key.type == .integer64 || key.type == .integer32 || key.type == .integer16,
                isCanonicalInteger(bytes)
            else { return nil }
            return .external(String(decoding: bytes, as: UTF8.self))
        case .explicit, .implicit:
            return primaryKey(bytes).map(RecordID.primaryKey)
        }
    }

    /// `p12` as primary key 12; anything else as the source's own id.
    static func recordID(_ text: String) -> RecordID {
        let utf8 = text.utf8
        if utf8.count > 1, utf8.first == 0x70, utf8.dropFirst().allSatisfy({ (0x30...0x39).contains($0) }),
            let key = Int64(text.dropFirst()), key > 0 || utf8.count == 2, key == 0 || utf8.dropFirst().first != 0x30
        {
            return .primaryKey(key)
        }
        return .external(text)
    }

    /// The object `text` refers to through `relationship` of `owner`.
    /// - Throws: `.malformedInput` for an object of an entity outside the destination's hierarchy, an abstract
    ///   entity, or a bare id where the destination has sub-entities.
    func reference(
        _ text: String, through relationship: Relationship, of owner: String,
        at location: @autoclosure () -> Location
    ) throws
        -> ObjectReference
    {
        guard let destination = relationship.destinationEntity else {
            throw DecantError(
                .malformedInput, "\(owner).\(relationship.name) has no destination entity in the model", at: location())
        }
        let allowed = hierarchies[destination, default: [destination]]
        if let slash = text.utf8.firstIndex(of: UInt8(ascii: "/")),
            let named = model.entity(named: String(text[..<slash]))
        {
            guard allowed.contains(named.name) else {
                throw DecantError(
                    .malformedInput,
                    "\(owner).\(relationship.name) refers to \(text.debugDescription), a \(named.name): expected a "
                        + "\(destination)", at: location())
            }
            guard !named.isAbstract else {
                throw DecantError(
                    .malformedInput,
                    "\(text.debugDescription) names the abstract entity \(named.name): name the object's own entity",
                    at: location())
            }
            let rest = String(text[text.index(after: slash)...])
            return ObjectReference(entity: named.name, id: try id(of: named.name, text: rest, at: location()))
        }
        guard !hasSubentities.contains(destination) else {
            let names = allowed.sorted().filter { model.entity(named: $0)?.isAbstract == false }
            throw DecantError(
                .malformedInput,
                "\(owner).\(relationship.name) refers to \(text.debugDescription) without its entity, but "
                    + "\(destination) has sub-entities: write \(names.map { "\($0)/…" }.joined(separator: " or "))",
                at: location())
        }
        if abstractEntities.contains(destination) {
            throw DecantError(
                .malformedInput, "\(owner).\(relationship.name) refers to the abstract entity \(destination)",
                at: location())
        }
        return ObjectReference(entity: destination, id: try id(of: destination, text: text, at: location()))
    }
}
