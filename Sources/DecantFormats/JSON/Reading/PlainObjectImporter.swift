import DecantCore
import DecantCodecs

/// Imports the JSON people have: objects of one entity whose keys name its properties loosely, with related
/// objects nested inside them and links to other objects by key.
///
/// - A key names an attribute or relationship by its exact name, else ignoring case, else ignoring `_` and `-`
///   (so `created_at` is `createdAt`). An attribute wins over a relationship. A key that names nothing is an error
///   (nothing is dropped silently).
/// - A key that ends in `id`/`ids` (`author_id`, `authorId`, `tag_ids`) and names no attribute names the
///   relationship before it (`author`, `tags`), and holds the *key* of the object(s) it leads to.
/// - An object's key is `FormatOptions.keys[Entity]`, else its single-attribute uniqueness constraint (looked up
///   on its parents too). An object with a key value is identified by it (`Author/42`), others by a generated id
///   (`Author/#3`). A key value seen a second time at the top level is an error; inside a nested object it means
///   the object seen before.
/// - A nested object (or array of them) under a relationship is an object of the relationship's destination; its
///   inverse relationship is set to the object it is nested in. A scalar under a relationship, or under an `…_id`
///   key, is a reference by key. A to-many relationship whose membership its to-one inverse carries is set only
///   through the inverse: references by key cannot be put there (write `author_id` on the books instead).
/// - Every reference by key must find its object somewhere in the input, before or after.
struct PlainObjectImporter {
    let path: String
    let rootEntity: String
    var plans: ModelPlan
    private let values: AttributeDecoder
    private let keyOption: [String: String]

    /// Where a JSON key goes in an entity's layout.
    enum Target: Hashable {
        case attribute(Int)
        case relationship(Int)
        /// A relationship given by the key(s) of its objects (`author_id`).
        case reference(Int)

        /// The property position, whatever the form.
        var slot: Target {
            switch self {
            case .attribute: self
            case .relationship(let index), .reference(let index): .relationship(index)
            }
        }

        var index: Int {
            switch self {
            case .attribute(let index), .relationship(let index), .reference(let index): index
            }
        }
    }

    private var targets: [String: [String: Target]] = [:]
    private var keyAttributes: [String: Int?] = [:]
    private var roots: [String: String] = [:]
    /// Per hierarchy root, every key value defined so far and the concrete entity of its object. The top-level
    /// objects' hierarchy is left out while ``topLevelKeysUnremembered``.
    var defined: [String: [ExactKey: String]] = [:]
    /// The hierarchy root of ``rootEntity``.
    let topLevelRoot: String
    /// Whether the keys of top-level objects are not remembered (yet): their key is a uniqueness constraint, so a
    /// store's own unique index refuses a key two objects share, and nothing has mentioned an object of their
    /// hierarchy from inside another object. The first such mention recalls the keys read so far
    /// (``recallTopLevelKeys(before:)``); from then on they are remembered as every other key is. At millions of
    /// objects, remembering every key was most of the import's memory, which grew with the input.
    private(set) var topLevelKeysUnremembered: Bool
    /// Whether top-level objects are started anonymous (``RecordBatch/beginRecord(anonymous:)``): their keys are
    /// not remembered and no relationship of the model leads to their hierarchy, so nothing can refer to them and
    /// a writer need not remember their ids either.
    let topLevelObjectsAnonymous: Bool
    /// The top-level objects imported before the current one.
    var topLevelCount = 0
    /// The key and entity of the top-level object being imported, once known (for a recall from inside it).
    private var currentTopLevelKey: (key: String, entity: String, place: Location)?
    /// Reads the first `count` top-level objects of the input again, in order, handing each to `body` (a recall).
    /// What ``importLine(_:into:)`` reuses from line to line, and the entities it has used.
    var lineScratch = LineScratch()
    var lineEntities = LineEntities()
    /// How many lines went straight into batches (for tests).
    var linesImportedDirectly = 0
    typealias Rereading = (_ count: Int, _ body: (JSONNode) throws -> Void) throws -> Void
    private let reread: Rereading?
    /// References by key not yet defined (by hierarchy root and key): where each was first made, and what it asked
    /// for.
    var unresolved: [ExactKey: (location: Location, message: String)] = [:]
    var generated = 0

    /// The object that a nested object belongs to, and the relationship it is nested under.
    private struct Parent {
        var reference: ObjectReference
        /// The inverse of the relationship (on the nested object's entity).
        var inverse: (name: String, isToMany: Bool)?
        /// The parent's relationship is a to-many carried by the nested objects' to-one inverse.
        var isCarriedByInverse: Bool
    }

    /// An importer of `entity`'s objects; `reread` reads the input's first top-level objects again (without it,
    /// every key is remembered).
    init(
        model: ObjectModel, entity: String, options: FormatOptions, path: String, reread: Rereading? = nil
    ) throws {
        self.path = path
        self.rootEntity = entity
        self.plans = ModelPlan(model: model)
        self.values = AttributeDecoder(mode: .plain(epoch: options.json.dateEpoch))
        self.keyOption = options.keys
        self.reread = reread
        let holder = model.entity(named: entity)
        let hierarchyRoot = holder.map { model.root(of: $0) }
        topLevelRoot = hierarchyRoot?.name ?? entity
        // Keyed by a uniqueness constraint (not `--key`): the store refuses a key two objects share.
        var storeEnforced = false
        if let holder, reread != nil {
            let lineage = [holder] + model.ancestors(of: holder)
            if !lineage.contains(where: { options.keys[$0.name] != nil }),
                let constraint = lineage.flatMap(\.uniquenessConstraints).first(where: { $0.count == 1 }),
                model.properties(of: holder).attributes.contains(where: { $0.name == constraint[0] })
            {
                storeEnforced = true
            }
        }
        topLevelKeysUnremembered = storeEnforced
        let hierarchy = Set(
            model.entities.filter { candidate in
                ([candidate] + model.ancestors(of: candidate)).contains { $0.name == hierarchyRoot?.name }
            }.map(\.name))
        let pointedTo = model.entities.contains { owner in
            model.properties(of: owner).relationships.contains { hierarchy.contains($0.destinationEntity ?? "") }
        }
        topLevelObjectsAnonymous = storeEnforced && !pointedTo
        for (entityName, attributeName) in options.keys {
            guard let layout = RecordLayout(entity: entityName, in: model) else {
                throw DecantError(
                    .usage, "--key \(entityName)=\(attributeName): the model has no entity \(entityName)",
                    at: Location(path: path))
            }
            guard layout.attributeIndex(attributeName) != nil else {
                throw DecantError(
                    .usage,
                    "--key \(entityName)=\(attributeName): \(entityName) has no attribute \(attributeName) (it has "
                        + layout.attributes.map(\.name).joined(separator: ", ") + ")", at: Location(path: path))
            }
        }
    }

    /// Imports one top-level object of ``rootEntity`` and the objects nested in it.
    mutating func importTopLevel(_ node: JSONNode, into sink: inout BatchSink) throws {
        currentTopLevelKey = nil
        _ = try importObject(node, entity: rootEntity, parent: nil, into: &sink)
        topLevelCount += 1
    }

    /// Remembers the keys of the top-level objects read so far (and of the one being read, when its key is known),
    /// reading them again: an object inside another mentions the top-level objects' hierarchy for the first time.
    /// - Throws: `.malformedInput` for a key two top-level objects share, as it would have been when first read.
    private mutating func recallTopLevelKeys() throws {
        guard topLevelKeysUnremembered else { return }
        topLevelKeysUnremembered = false
        guard let reread, let keyIndex = keyAttribute(of: rootEntity), let plan = plans.plan(for: rootEntity) else {
            return
        }
        let layout = plan.layout
        let attribute = layout.attributes[keyIndex]
        var keys: [ExactKey: String] = defined[topLevelRoot] ?? [:]
        try reread(topLevelCount) { node in
            for member in node.value.members ?? [] {
                let place = location(of: member, entity: rootEntity, atKey: true)
                guard case .attribute(keyIndex)? = try target(for: member.key, plan: plan, at: place),
                    let keyText = try? values.cell(for: member.node.value, attribute: attribute, in: layout).keyText
                else { continue }
                guard keys[ExactKey(keyText)] == nil else {
                    throw DecantError(
                        .malformedInput,
                        "a second \(rootEntity) with \(attribute.name) \(keyText): the key identifies one object",
                        at: Location(path: path, line: node.line, column: node.column, entity: rootEntity))
                }
                keys[ExactKey(keyText)] = rootEntity
            }
        }
        if let current = currentTopLevelKey {
            guard keys[ExactKey(current.key)] == nil else {
                throw DecantError(
                    .malformedInput,
                    "a second \(current.entity) with \(attribute.name) \(current.key): the key identifies one object",
                    at: current.place)
            }
            keys[ExactKey(current.key)] = current.entity
        }
        defined[topLevelRoot] = keys
    }

    /// Throws for the first reference by key whose object never came.
    func verifyComplete() throws {
        guard
            let first = unresolved.values.min(by: {
                ($0.location.line ?? 0, $0.location.column ?? 0) < ($1.location.line ?? 0, $1.location.column ?? 0)
            })
        else { return }
        let more = unresolved.count > 1 ? " (and \(unresolved.count - 1) more references without their object)" : ""
        throw DecantError(.malformedInput, first.message + more, at: first.location)
    }

    // MARK: Objects

    private mutating func importObject(
        _ node: JSONNode, entity: String, parent: Parent?, into sink: inout BatchSink
    ) throws -> ObjectReference {
        let here = Location(path: path, line: node.line, column: node.column, entity: entity)
        guard let members = node.value.members else {
            throw DecantError(
                .malformedInput, "expected an object of \(entity), found \(node.value.kindDescription)", at: here)
        }
        guard let plan = plans.plan(for: entity) else {
            throw DecantError(.usage, "the model has no entity \(entity)", at: here)
        }
        guard !plan.entity.isAbstract else {
            throw DecantError(
                .malformedInput, "\(entity) is abstract: its objects must be of one of its sub-entities", at: here)
        }
        let layout = plan.layout

        // Where each key goes, and the attribute values.
        var cells = plan.unmentioned
        var given: [Target: String] = [:]
        var relationshipMembers: [(JSONMember, Target)] = []
        for member in members {
            let keyPlace = location(of: member, entity: entity, atKey: true)
            let place = location(of: member, entity: entity)
            guard let target = try target(for: member.key, plan: plan, at: keyPlace) else {
                throw DecantError(
                    .malformedInput,
                    "unknown key \(member.key): \(entity) has no attribute or relationship it names (attributes: "
                        + layout.attributes.map(\.name).joined(separator: ", ") + "; relationships: "
                        + layout.relationships.map(\.name).joined(separator: ", ") + ")", at: keyPlace)
            }
            let slot = target.slot
            if let other = given[slot] {
                throw DecantError(
                    .malformedInput, "the keys \(other) and \(member.key) name the same property of \(entity)",
                    at: keyPlace)
            }
            given[slot] = member.key
            if case .attribute(let index) = target {
                let attribute = layout.attributes[index]
                do {
                    cells[index] = try values.cell(for: member.node.value, attribute: attribute, in: layout)
                } catch {
                    throw DecantError(
                        .malformedInput,
                        "the \(attribute.type.modelName) attribute \(attribute.name) expects \(error.expected)",
                        at: place)
                }
            } else {
                relationshipMembers.append((member, target))
            }
        }

        // The identity: the key value, else a generated id.
        let root = rootName(of: entity)
        if parent != nil, root == topLevelRoot { try recallTopLevelKeys() }
        let id: RecordID
        var anonymous = false
        if parent == nil, topLevelKeysUnremembered, let keyIndex = keyAttribute(of: entity),
            let keyText = cells[keyIndex].keyText
        {
            // Not remembered: the store's unique index refuses a second object with this key.
            currentTopLevelKey = (keyText, entity, here)
            id = .external(keyText)
            anonymous = topLevelObjectsAnonymous
        } else if let keyIndex = keyAttribute(of: entity), let keyText = cells[keyIndex].keyText {
            if let known = defined[root]?[ExactKey(keyText)] {
                guard let parent else {
                    throw DecantError(
                        .malformedInput,
                        "a second \(entity) with \(layout.attributes[keyIndex].name) \(keyText): the key identifies "
                            + "one object", at: here)
                }
                guard !parent.isCarriedByInverse else {
                    throw DecantError(
                        .malformedInput,
                        "the \(entity) with \(layout.attributes[keyIndex].name) \(keyText) came before, under another "
                            + "object: nest it once and link it from its other side", at: here)
                }
                return ObjectReference(entity: known, id: .external(keyText))
            }
            defined[root, default: [:]][ExactKey(keyText)] = entity
            unresolved.removeValue(forKey: ExactKey(root, keyText))
            id = .external(keyText)
        } else {
            generated += 1
            id = .external("#\(generated)")
        }
        let reference = ObjectReference(entity: entity, id: id)

        // Relationships: nested objects are imported (their inverse pointing here), scalars are keys.
        var relationships = layout.relationships.indices.map { index -> RelationshipValue in
            if plan.carriedByInverse[index] { return .viaInverse }
            return layout.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
        }
        var explicit = Set<Int>()
        for (member, target) in relationshipMembers {
            let place = location(of: member, entity: entity, object: reference)
            let index = target.slot.index
            explicit.insert(index)
            let child = Parent(
                reference: reference, inverse: plan.inverses[index], isCarriedByInverse: plan.carriedByInverse[index])
            let byKey = target == .reference(index)
            relationships[index] = try relationshipValue(
                member.node, index: index, plan: plan, byKey: byKey, parent: child, at: place, into: &sink)
        }
        if let parent, let inverse = parent.inverse, let index = layout.relationshipIndex(inverse.name),
            !explicit.contains(index)
        {
            if !inverse.isToMany {
                relationships[index] = .toOne(parent.reference)
            } else if !plan.carriedByInverse[index] {
                relationships[index] = .toMany([parent.reference])
            }
        }
        sink.append(
            DecodedRecord(
                entity: entity, id: id, cells: cells, relationships: relationships, isAnonymous: anonymous),
            layout: layout)
        return reference
    }

    private mutating func relationshipValue(
        _ node: JSONNode, index: Int, plan: EntityPlan, byKey: Bool, parent: Parent, at place: Location,
        into sink: inout BatchSink
    ) throws -> RelationshipValue {
        let relationship = plan.layout.relationships[index]
        guard let destination = plan.destinationNames[index] else {
            throw DecantError(.malformedInput, "the relationship \(relationship.name) has no destination", at: place)
        }
        func member(_ element: JSONNode) throws -> ObjectReference {
            var place = place
            place.line = element.line
            place.column = element.column
            switch element.value {
            case .object where !byKey:
                return try importObject(element, entity: destination, parent: parent, into: &sink)
            case .string, .number, .bool:
                guard !parent.isCarriedByInverse else {
                    throw DecantError(
                        .malformedInput,
                        "\(relationship.name) is set through \(destination).\(parent.inverse?.name ?? "?"): give the "
                            + "key of this \(plan.layout.entityName) there, or nest the \(destination) objects here",
                        at: place)
                }
                return try self.reference(byKey: element, destination: destination, from: relationship, at: place)
            default:
                let expected = byKey ? "the key of a \(destination)" : "a \(destination) object or its key"
                throw DecantError(
                    .malformedInput,
                    "the relationship \(relationship.name) expects \(expected), found \(element.value.kindDescription)",
                    at: place)
            }
        }
        if case .null = node.value {
            if plan.carriedByInverse[index] { return .viaInverse }
            return relationship.isToMany ? .toMany([]) : .toOne(nil)
        }
        guard relationship.isToMany else {
            if case .array = node.value {
                throw DecantError(
                    .malformedInput,
                    "the to-one relationship \(relationship.name) expects one \(destination), found an array", at: place
                )
            }
            return .toOne(try member(node))
        }
        guard case .array(let elements) = node.value else {
            throw DecantError(
                .malformedInput,
                "the to-many relationship \(relationship.name) expects an array, found \(node.value.kindDescription)",
                at: place)
        }
        let list = try elements.map(member)
        return plan.carriedByInverse[index] ? .viaInverse : .toMany(list)
    }

    /// The object of `destination` whose key is `node`'s value.
    private mutating func reference(
        byKey node: JSONNode, destination: String, from relationship: Relationship, at place: Location
    ) throws -> ObjectReference {
        guard let keyIndex = keyAttribute(of: destination), let layout = plans.plan(for: destination)?.layout else {
            throw DecantError(
                .malformedInput,
                "\(relationship.name) refers to a \(destination) by key, but \(destination) has none: give one with "
                    + "--key \(destination)=ATTRIBUTE or a uniqueness constraint in the model", at: place)
        }
        let attribute = layout.attributes[keyIndex]
        let keyText: String
        do throws(ValueMismatch) {
            guard let text = try values.cell(for: node.value, attribute: attribute).keyText else {
                throw ValueMismatch(expected: "a value")
            }
            keyText = text
        } catch {
            throw DecantError(
                .malformedInput,
                "\(relationship.name) refers to a \(destination) by its \(attribute.type.modelName) key "
                    + "\(attribute.name), which expects \(error.expected)", at: place)
        }
        let root = rootName(of: destination)
        if root == topLevelRoot { try recallTopLevelKeys() }
        if let known = defined[root]?[ExactKey(keyText)] {
            return ObjectReference(entity: known, id: .external(keyText))
        }
        let scoped = ExactKey(root, keyText)
        if unresolved[scoped] == nil {
            unresolved[scoped] = (
                place,
                "\(relationship.name) refers to the \(destination) with \(attribute.name) \(keyText), which is "
                    + "not in the input"
            )
        }
        return ObjectReference(entity: destination, id: .external(keyText))
    }

    // MARK: Names

    /// Where `member`'s value (or, `atKey`, its key) is.
    private func location(
        of member: JSONMember, entity: String, object: ObjectReference? = nil, atKey: Bool = false
    ) -> Location {
        Location(
            path: path, line: atKey ? member.line : member.node.line,
            column: atKey ? member.column : member.node.column,
            entity: entity, object: object?.description, keyPath: member.key)
    }

    mutating func rootName(of entity: String) -> String {
        if let known = roots[entity] { return known }
        let root = plans.model.entity(named: entity).map { plans.model.root(of: $0).name } ?? entity
        roots[entity] = root
        return root
    }

    /// The key attribute's index in `entity`'s layout: `--key` for it or a parent, else a one-attribute uniqueness
    /// constraint of it or a parent.
    mutating func keyAttribute(of entity: String) -> Int? {
        if let known = keyAttributes[entity] { return known }
        guard let plan = plans.plan(for: entity) else { return nil }
        let model = plans.model
        let lineage = [plan.entity] + model.ancestors(of: plan.entity)
        var index: Int?
        let keyOption = self.keyOption
        if let name = lineage.compactMap({ keyOption[$0.name] }).first {
            index = plan.layout.attributeIndex(name)
        } else if let constraint = lineage.flatMap(\.uniquenessConstraints).first(where: { $0.count == 1 }) {
            index = plan.layout.attributeIndex(constraint[0])
        }
        keyAttributes[entity] = index
        return index
    }

    /// Where JSON key `key` goes in `plan`'s entity, or nil when it names nothing.
    mutating func target(for key: String, plan: EntityPlan, at place: Location) throws -> Target? {
        let entity = plan.layout.entityName
        if let known = targets[entity]?[key] { return known }
        let attributes = plan.layout.attributes.map(\.name)
        let relationships = plan.layout.relationships.map(\.name)
        var found: Target?
        // Exact, then ignoring case, then ignoring case, `_` and `-` (PropertyNameMatch).
        let matchers: [(String, String) -> Bool] = (0..<PropertyNameMatch.ruleCount).map { rule in
            { PropertyNameMatch.normalized($0, rule: rule) == PropertyNameMatch.normalized($1, rule: rule) }
        }
        for matches in matchers {
            let attributeHits = attributes.indices.filter { matches(attributes[$0], key) }
            let relationshipHits = relationships.indices.filter { matches(relationships[$0], key) }
            if attributeHits.count > 1 || (attributeHits.isEmpty && relationshipHits.count > 1) {
                let names = attributeHits.map { attributes[$0] } + relationshipHits.map { relationships[$0] }
                throw DecantError(
                    .malformedInput, "the key \(key) could name \(names.joined(separator: " or "))", at: place)
            }
            if let hit = attributeHits.first {
                found = .attribute(hit)
                break
            }
            if let hit = relationshipHits.first {
                found = .relationship(hit)
                break
            }
        }
        // `author_id`, `authorId`, `tag_ids`: a relationship by the key(s) of its objects.
        if found == nil {
            let folded = Self.folded(key)
            var base: Substring?
            if folded.hasSuffix("ids") {
                base = folded.dropLast(3)
            } else if folded.hasSuffix("id") {
                base = folded.dropLast(2)
            }
            if let base, !base.isEmpty {
                let hits = relationships.indices.filter {
                    let name = Self.folded(relationships[$0])
                    return name == base || name == base + "s" || name == base + "es"
                }
                if hits.count > 1 {
                    throw DecantError(
                        .malformedInput,
                        "the key \(key) could name \(hits.map { relationships[$0] }.joined(separator: " or "))",
                        at: place)
                }
                found = hits.first.map(Target.reference)
            }
        }
        targets[entity, default: [:]][key] = found
        return found
    }

    private static func folded(_ name: String) -> String {
        PropertyNameMatch.normalized(name, rule: PropertyNameMatch.ruleCount - 1)
    }
}

/// A key's text compared as a store compares it: by its UTF-8 bytes. Swift's `String` compares by canonical
/// equivalence, so `Café` (one precomposed character) and `Cafe` with a combining accent were one key to the
/// importer and two to the store, whose unique index and staged ids compare bytes: a reference the importer matched
/// then pointed to no row, and a second object with the other spelling was taken for the first.
struct ExactKey: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    /// The key `key` in the hierarchy of `root` (for maps of every hierarchy's keys).
    init(_ root: String, _ key: String) {
        text = root + "\u{0}" + key
    }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
