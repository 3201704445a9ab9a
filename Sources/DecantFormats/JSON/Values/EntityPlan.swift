import DecantCore
import DecantCodecs

/// What JSON readers and writers need to know about one entity: its layout, its properties by name, and per
/// relationship the objects it may point at and how its membership is carried.
struct EntityPlan {
    /// A property's position in the layout.
    enum Slot: Equatable {
        case attribute(Int)
        case relationship(Int)
    }

    let entity: Entity
    let layout: RecordLayout
    /// Every property by exact name.
    let slots: [String: Slot]
    /// Per relationship: a to-many whose membership a to-one inverse carries, and whose order does not matter.
    /// A Core Data SQLite store keeps such a relationship only on the other side (``RelationshipValue/viaInverse``).
    let carriedByInverse: [Bool]
    /// Per relationship: the destination entity and its sub-entities, the entities its objects may have.
    let destinations: [Set<String>]
    /// Per relationship: the destination entity's name.
    let destinationNames: [String?]
    /// Per relationship: the inverse relationship's name and whether it is to-many.
    let inverses: [(name: String, isToMany: Bool)?]
    /// Per attribute: what an object that does not mention it holds, as Core Data's insert gives it: the model's
    /// default value (``Attribute/defaultLiteral``), else nil.
    let unmentioned: [CellValue]

    init?(entity name: String, in model: ObjectModel) {
        guard let entity = model.entity(named: name), let layout = RecordLayout(entity: name, in: model) else {
            return nil
        }
        self.entity = entity
        self.layout = layout
        var slots: [String: Slot] = [:]
        for (index, attribute) in layout.attributes.enumerated() { slots[attribute.name] = .attribute(index) }
        for (index, relationship) in layout.relationships.enumerated() {
            slots[relationship.name] = .relationship(index)
        }
        self.slots = slots
        var carried: [Bool] = []
        var destinations: [Set<String>] = []
        var inverses: [(name: String, isToMany: Bool)?] = []
        for relationship in layout.relationships {
            let inverse = model.inverse(of: relationship)
            inverses.append(inverse.map { ($0.name, $0.isToMany) })
            carried.append(relationship.isToMany && !relationship.isOrdered && inverse.map { !$0.isToMany } == true)
            destinations.append(Self.kinds(of: relationship.destinationEntity, in: model))
        }
        self.carriedByInverse = carried
        self.destinations = destinations
        self.destinationNames = layout.relationships.map(\.destinationEntity)
        self.inverses = inverses
        self.unmentioned = layout.attributes.map { attribute in
            attribute.defaultLiteral.map { .modelDefault($0, attribute.type) } ?? .null
        }
    }

    /// `name` and every entity below it.
    static func kinds(of name: String?, in model: ObjectModel) -> Set<String> {
        guard let name else { return [] }
        var result: Set<String> = [name]
        var pending = [name]
        while let next = pending.popLast() {
            for child in model.entities where child.parentName == next && result.insert(child.name).inserted {
                pending.append(child.name)
            }
        }
        return result
    }
}

/// Entity plans made once per entity, on first use.
struct ModelPlan {
    let model: ObjectModel
    private var plans: [String: EntityPlan] = [:]

    init(model: ObjectModel) {
        self.model = model
    }

    /// The plan of `name`, or nil when the model has no such entity.
    mutating func plan(for name: String) -> EntityPlan? {
        if let known = plans[name] { return known }
        guard let plan = EntityPlan(entity: name, in: model) else { return nil }
        plans[name] = plan
        return plan
    }
}

extension ObjectReference {
    /// Reads `Entity/id` (`Note/p12` is primary key 12; anything else after the slash is the source's own id).
    init?(jsonText text: String) {
        guard let slash = text.firstIndex(of: "/"), slash != text.startIndex else { return nil }
        let entity = String(text[..<slash])
        let id = String(text[text.index(after: slash)...])
        guard !id.isEmpty else { return nil }
        self.init(entity: entity, id: RecordID(jsonText: id))
    }
}

extension RecordID {
    /// The key of the usual form of a primary-key identity, read from its bytes: `p` and 1 to 18 digits without a
    /// leading zero; nil for any other text (which ``init(jsonText:)`` reads the long way).
    static func plainPrimaryKey(utf8: some Collection<UInt8>) -> Int64? {
        guard utf8.count >= 2, utf8.count <= 19, utf8.first == UInt8(ascii: "p") else { return nil }
        let digits = utf8.dropFirst()
        guard utf8.count == 2 || digits.first != UInt8(ascii: "0") else { return nil }
        var key: Int64 = 0
        for byte in digits {
            guard JSONNumberSyntax.isDigit(byte) else { return nil }
            key = key * 10 + Int64(byte - 0x30)
        }
        return key
    }

    /// Reads an identity as ``description`` writes it: `p12` is primary key 12, anything else is external.
    init(jsonText text: String) {
        if let key = Self.plainPrimaryKey(utf8: text.utf8) {
            self = .primaryKey(key)
            return
        }
        if text.hasPrefix("p"), let key = Int64(text.dropFirst()), "p\(key)" == text {
            self = .primaryKey(key)
        } else {
            self = .external(text)
        }
    }
}
