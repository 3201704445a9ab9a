import Foundation

/// Checks objects against the rules their model states: required values, minimum and maximum (numbers, string
/// lengths, dates), string patterns, uniqueness constraints, relationship counts and, once every object has been
/// seen, references to objects that do not exist.
///
/// Memory grows only with what the checks must remember: the identities seen (for dangling references), the keys
/// of uniqueness constraints and the references to objects not seen yet. They live in key sets and a reference map
/// from `keySets`, which may spill to disk (``KeySetFactory``), as identity maps do; copies of a validator share
/// them, so a run uses one validator.
/// ```swift
/// var validator = ModelValidator(model: v3, collectsRejects: true, keySets: .spilling())
/// let kept = try validator.check(batch, rejects: &rejects)     // the objects that pass
/// rejects += try validator.finish()                             // dangling references
/// ```
public struct ModelValidator {
    /// The rule names a reject carries.
    public enum Rule: String, Sendable, CaseIterable {
        case optional, min, max, regex, unique, minCount, maxCount, dangling, type
    }

    /// One attribute's rules, with its position in the layout.
    package struct AttributeRules {
        package var position: Int
        package var name: String
        package var isOptional: Bool
        /// The smallest and largest allowed measure: the value for numbers, the length for strings (in UTF-16 code
        /// units, as Core Data's validation counts an `NSString`'s `length`),
        /// seconds since 2001-01-01 for dates.
        package var minimum: Double?
        package var maximum: Double?
        /// The string pattern, as the model states it (it must match the whole string).
        package var pattern: String?
    }

    /// One relationship's rules, with its position in the layout.
    package struct RelationshipRules {
        package var position: Int
        package var name: String
        package var isOptional: Bool
        package var isToMany: Bool
        package var minCount: Int
        package var maxCount: Int
    }

    /// One uniqueness constraint: its scope (the hierarchy root, the entity stating it and its index), its property
    /// names, and their attribute and relationship positions.
    package struct ConstraintRules {
        package var scope: String
        package var owner: String
        package var names: [String]
        package var attributes: [Int]
        package var relationships: [Int]
    }

    /// Every rule an object of one layout must meet.
    package struct EntityRules {
        /// Attributes with at least one rule (required, a bound or a pattern).
        package var attributes: [AttributeRules] = []
        /// Every relationship: its members must exist, whatever its counts.
        package var relationships: [RelationshipRules] = []
        package var constraints: [ConstraintRules] = []
    }

    /// The rules objects of `layout` meet in `model`: what the validator checks, and what a migration run inside
    /// the store checks with SQL.
    package static func rules(for layout: RecordLayout, in model: ObjectModel) -> EntityRules {
        var result = EntityRules()
        for (position, attribute) in layout.attributes.enumerated() where attribute.derivation == nil {
            var rules = AttributeRules(
                position: position, name: attribute.name, isOptional: attribute.isOptional)
            switch attribute.type {
            case .integer16, .integer32, .integer64, .double, .float, .decimal, .string:
                rules.minimum = attribute.minValue.flatMap(Double.init)
                rules.maximum = attribute.maxValue.flatMap(Double.init)
            case .date:
                rules.minimum = attribute.minDate
                rules.maximum = attribute.maxDate
            default:
                break
            }
            if attribute.type == .string, let pattern = attribute.regularExpression, !pattern.isEmpty {
                rules.pattern = pattern
            }
            if !attribute.isOptional || rules.minimum != nil || rules.maximum != nil || rules.pattern != nil {
                result.attributes.append(rules)
            }
        }
        for (position, relationship) in layout.relationships.enumerated() {
            result.relationships.append(
                RelationshipRules(
                    position: position, name: relationship.name, isOptional: relationship.isOptional,
                    isToMany: relationship.isToMany, minCount: relationship.minCount, maxCount: relationship.maxCount))
        }
        if let entity = model.entity(named: layout.entityName) {
            for owner in [entity] + model.ancestors(of: entity) {
                for (index, names) in owner.uniquenessConstraints.enumerated() {
                    let attributes = names.compactMap { layout.attributeIndex($0) }
                    let relationships = names.compactMap { layout.relationshipIndex($0) }
                    guard attributes.count + relationships.count == names.count else { continue }
                    result.constraints.append(
                        ConstraintRules(
                            scope: "\(model.root(of: entity).name)#\(owner.name)#\(index)", owner: owner.name,
                            names: names, attributes: attributes, relationships: relationships))
                }
            }
        }
        return result
    }

    private struct EntityChecks {
        var rules: EntityRules
        /// The compiled pattern of each attribute in `rules.attributes` (nil: none, or one that does not compile).
        var patterns: [NSRegularExpression?]
    }

    /// The model the objects follow.
    public let model: ObjectModel
    /// Whether failing objects are listed (and dropped from the output) rather than stopping the run.
    public let collectsRejects: Bool
    private var checks: [String: EntityChecks] = [:]
    /// The identities of the objects seen, scoped by entity.
    private let seen: any KeySet
    /// References to objects not seen yet: target → the first object that pointed at it, its entity and the property
    /// folded into the value's entity name (``pendingHolder(_:property:)``). A map from `keySets`, so that a run
    /// whose objects point forward at millions of objects not written yet (members before their owner) spills them
    /// as its sets do; a spilled entry whose target is seen later stays in the file, and ``finish()`` checks it again.
    private var pending: any ReferenceMap
    /// The values of uniqueness constraints seen, scoped by constraint.
    private let uniqueKeys: any KeySet

    /// Whether a rejected object is dropped (so references to it dangle), as when a migration does not write it;
    /// false when checking a store in place, where it stays.
    public let dropsRejected: Bool

    /// Whether every failure of an object is listed, rather than its first only (to compare an object's failures
    /// with those it had at another version).
    public var listsEveryFailure = false
    /// Which failures are excused: violations an object already had before a migration, which Core Data's
    /// lightweight migration carries over without checking. Excused failures are listed apart
    /// (``check(_:rejects:excused:)``) and fail no object; nil excuses none.
    public var excuses: ((Reject) -> Bool)?
    /// Whether references are checked (dangling ones found at ``finish()``); false remembers no identities.
    public var checksReferences = true
    /// Whether uniqueness constraints are checked; false remembers no values.
    public var checksUniqueness = true
    /// The object whose to-many lists come in parts (``RecordBatch/Continuation``), checked but not yet settled.
    private var openRecord: OpenRecord?

    /// An object checked up to its lists cut short: its failures so far (all of them, to place the count failures
    /// where a whole object has them), and per list cut short its rule, where its count failures go and its count.
    private struct OpenRecord {
        var entity: String
        var id: RecordID
        var failures: [Reject]
        var lists: [Int: (check: RelationshipRules, place: Int, count: Int)]
        var listsAll: Bool
        var keptInOutput: Bool
    }

    /// A validator for objects of `model`, remembering what it has seen in sets `keySets` makes.
    public init(
        model: ObjectModel, collectsRejects: Bool, dropsRejected: Bool = true, keySets: KeySetFactory = .inMemory
    ) {
        self.model = model
        self.collectsRejects = collectsRejects
        self.dropsRejected = dropsRejected
        self.seen = keySets.makeKeySet()
        self.uniqueKeys = keySets.makeKeySet()
        self.pending = keySets.makeReferenceMap()
        self.keySets = keySets
    }

    private let keySets: KeySetFactory

    /// The value ``pending`` holds for a reference from `holder` through `property`: the holder, its entity name and
    /// the property joined by U+001F (no entity or property name holds it).
    private static func pendingHolder(_ holder: ObjectReference, property: String) -> ObjectReference {
        ObjectReference(entity: "\(holder.entity)\u{1F}\(property)", id: holder.id)
    }

    private mutating func checks(for layout: RecordLayout) -> EntityChecks {
        if let known = checks[layout.entityName] { return known }
        let rules = Self.rules(for: layout, in: model)
        let patterns = rules.attributes.map { rule in
            rule.pattern.flatMap { try? NSRegularExpression(pattern: "^(?:" + $0 + ")$") }
        }
        let result = EntityChecks(rules: rules, patterns: patterns)
        checks[layout.entityName] = result
        return result
    }

    /// Checks every object of `batch`; returns the batch of the objects that pass (the batch itself when all do).
    /// - Throws: `.validationFailed` for the first failing object when rejects are not collected; the key sets'
    ///   errors (`.ioError`).
    public mutating func check(_ batch: RecordBatch, rejects: inout [Reject]) throws -> RecordBatch {
        var excused: [Reject] = []
        return try check(batch, rejects: &rejects, excused: &excused)
    }

    /// Checks every object of `batch` as ``check(_:rejects:)`` does; the failures ``excuses`` excuses go to
    /// `excused`, and an object whose every failure is excused passes.
    public mutating func check(
        _ batch: RecordBatch, rejects: inout [Reject], excused: inout [Reject]
    ) throws -> RecordBatch {
        if let continuation = batch.continuation {
            return try check(continuation, of: batch, rejects: &rejects, excused: &excused)
        }
        let listsAll = listsEveryFailure || excuses != nil
        let entity = batch.layout.entityName
        let entityChecks = checks(for: batch.layout)
        let attributeCount = batch.layout.attributes.count
        var failed: Set<Int> = []
        for row in 0..<batch.count {
            let id = batch.id(at: row)
            var failures: [Reject] = []
            // An object whose lists are cut short lists every failure until its count failures take their place.
            let cut = (0..<batch.layout.relationships.count).contains {
                batch.isContinued(batch.cell(row: row, column: attributeCount + $0))
            }
            var lists: [Int: (check: RelationshipRules, place: Int, count: Int)] = [:]
            func fail(_ property: String, _ rule: Rule, _ value: Value?) {
                if failures.isEmpty || listsAll || cut {
                    failures.append(
                        Reject(
                            entity: entity, object: "\(entity)/\(id)", property: property, rule: rule.rawValue,
                            value: value?.text))
                }
            }
            func note(_ target: ObjectReference, _ property: String) throws {
                try self.note(target, from: ObjectReference(entity: entity, id: id), property: property)
            }
            for (check, pattern) in zip(entityChecks.rules.attributes, entityChecks.patterns) {
                let value = batch.value(row: row, attribute: check.position)
                if value.isNull {
                    if !check.isOptional { fail(check.name, .optional, nil) }
                    continue
                }
                guard check.minimum != nil || check.maximum != nil || pattern != nil else { continue }
                let measure: Double?
                switch value {
                // Core Data measures a string by NSString's length: UTF-16 code units, not Swift's characters (an
                // emoji counts 2, an é written as e and a combining accent 2).
                case .string(let text): measure = Double(text.utf16.count)
                case .date(let date): measure = date.timeIntervalSinceReferenceDate
                default: measure = value.number
                }
                if let measure, let minimum = check.minimum, measure < minimum { fail(check.name, .min, value) }
                if let measure, let maximum = check.maximum, measure > maximum { fail(check.name, .max, value) }
                if let pattern, case .string(let text) = value {
                    let range = NSRange(text.startIndex..., in: text)
                    if pattern.firstMatch(in: text, range: range) == nil { fail(check.name, .regex, value) }
                }
            }
            for check in entityChecks.rules.relationships {
                let cell = batch.cell(row: row, column: attributeCount + check.position)
                switch cell.kind {
                case .reference, .externalReference:
                    try note(batch.reference(of: cell), check.name)
                case .referenceList:
                    let start = Int(cell.integer)
                    let count = Int(cell.length)
                    if batch.isContinued(cell) {
                        // Counted once the last part has come.
                        lists[check.position] = (check, failures.count, count)
                    } else {
                        for (rule, value) in Self.countFailures(check, count: count) { fail(check.name, rule, value) }
                    }
                    for offset in 0..<count {
                        try note(batch.reference(of: batch.references[start + offset]), check.name)
                    }
                case .viaInverse:
                    break
                default:
                    if !check.isOptional && !check.isToMany { fail(check.name, .optional, nil) }
                }
            }
            for constraint in entityChecks.rules.constraints where checksUniqueness {
                let key = Self.uniquenessKey(constraint, row: row, of: batch)
                if try !uniqueKeys.insert(key, in: constraint.scope) {
                    fail(constraint.names.joined(separator: ","), .unique, nil)
                }
            }
            if !lists.isEmpty {
                openRecord = OpenRecord(
                    entity: entity, id: id, failures: failures, lists: lists, listsAll: listsAll,
                    keptInOutput: failures.isEmpty)
                if !failures.isEmpty { failed.insert(row) }
                continue
            }
            if try settle(entity: entity, id: id, failures: failures, rejects: &rejects, excused: &excused) {
                failed.insert(row)
            }
        }
        guard !failed.isEmpty else { return batch }
        var kept = RecordBatch(layout: batch.layout)
        for row in 0..<batch.count where !failed.contains(row) { kept.append(batch.record(at: row)) }
        return kept
    }

    /// Notes a reference from `holder` (through `property`): one to an object not seen yet is pending until it is
    /// (the first holder stays).
    private mutating func note(_ target: ObjectReference, from holder: ObjectReference, property: String) throws {
        guard checksReferences, try !seen.contains(target) else { return }
        try pending.setIfAbsent(Self.pendingHolder(holder, property: property), for: target, in: "")
    }

    /// Core Data checks a to-many's count against its minimum and maximum only: an empty set is not nil, so a
    /// non-optional to-many with no minimum holds none validly. An optional one may be empty whatever its minimum;
    /// a non-optional one must hold at least its minimum.
    private static func countFailures(_ check: RelationshipRules, count: Int) -> [(Rule, Value)] {
        var result: [(Rule, Value)] = []
        if check.minCount > 0 && count < check.minCount && (count > 0 || !check.isOptional) {
            result.append((.minCount, .integer(Int64(count))))
        }
        if check.maxCount > 0 && count > check.maxCount { result.append((.maxCount, .integer(Int64(count)))) }
        return result
    }

    /// Decides an object checked whole: its failure (the first not excused) is listed or thrown, and it is
    /// remembered as seen unless it fails and is dropped; returns whether it failed.
    private mutating func settle(
        entity: String, id: RecordID, failures: [Reject], rejects: inout [Reject], excused: inout [Reject]
    ) throws -> Bool {
        var failure: Reject?
        if let excuses {
            for found in failures {
                if excuses(found) {
                    excused.append(found)
                } else if failure == nil {
                    failure = found
                }
            }
        } else {
            failure = failures.first
        }
        var remembers = failure == nil || !dropsRejected
        if let failure {
            guard collectsRejects else { throw Self.error(failure) }
            if listsEveryFailure && excuses == nil { rejects += failures } else { rejects.append(failure) }
            remembers = !dropsRejected
        }
        if remembers && checksReferences {
            let reference = ObjectReference(entity: entity, id: id)
            _ = try seen.insert(reference)
            if pending.count > 0 { try pending.removeValue(for: reference, in: "") }
        }
        return failure != nil
    }

    /// Checks further members of the object whose lists came cut short; after the last part of its last list, counts
    /// them and settles the object as a whole one is. Returns the continuation to pass on, or an empty batch when
    /// the object was left out.
    private mutating func check(
        _ continuation: RecordBatch.Continuation, of batch: RecordBatch, rejects: inout [Reject],
        excused: inout [Reject]
    ) throws -> RecordBatch {
        guard var open = openRecord, let list = open.lists[continuation.relationship] else {
            throw DecantError(
                .internalError, "members of \(batch.layout.entityName) came with no object cut short before them",
                at: Location(entity: batch.layout.entityName))
        }
        let object = ObjectReference(entity: open.entity, id: open.id)
        for member in batch.references {
            try note(batch.reference(of: member), from: object, property: list.check.name)
        }
        open.lists[continuation.relationship]?.count += batch.references.count
        let passOn = open.keptInOutput ? batch : RecordBatch(layout: batch.layout)
        guard continuation.isFinal, let lastCut = open.lists.keys.max(), lastCut == continuation.relationship else {
            openRecord = open
            return passOn
        }
        openRecord = nil
        // The count failures where a whole object has them, then its first failure only unless all are listed.
        var failures: [Reject] = []
        let lists = open.lists.values.sorted { $0.check.position < $1.check.position }
        for place in 0...open.failures.count {
            for list in lists where list.place == place {
                for (rule, value) in Self.countFailures(list.check, count: list.count) {
                    failures.append(
                        Reject(
                            entity: open.entity, object: object.description, property: list.check.name,
                            rule: rule.rawValue, value: value.text))
                }
            }
            if place < open.failures.count { failures.append(open.failures[place]) }
        }
        if !open.listsAll { failures = Array(failures.prefix(1)) }
        _ = try settle(entity: open.entity, id: open.id, failures: failures, rejects: &rejects, excused: &excused)
        return passOn
    }

    /// After the last object: every reference to an object that never appeared, one reject each (the object that
    /// holds the reference stays).
    /// - Throws: `.validationFailed` for the first one when rejects are not collected.
    public mutating func finish() throws -> [Reject] {
        var excused: [Reject] = []
        return try finish(excused: &excused)
    }

    /// After the last object, as ``finish()``; the dangling references ``excuses`` excuses go to `excused`.
    public mutating func finish(excused: inout [Reject]) throws -> [Reject] {
        var result: [Reject] = []
        // The targets never seen (a spilled entry may have been seen after it spilled).
        var dangling: [(target: ObjectReference, object: String, entity: String, property: String)] = []
        try pending.forEach { _, target, value in
            guard try !seen.contains(target) else { return }
            let parts = value.entity.split(separator: "\u{1F}", maxSplits: 1).map(String.init)
            let entity = parts.first ?? value.entity
            let holder = ObjectReference(entity: entity, id: value.id)
            dangling.append((target, holder.description, entity, parts.count > 1 ? parts[1] : ""))
        }
        // By holder, then property and target: one holder's dangling references come in the same order every run.
        let ordered = dangling.sorted {
            ($0.object, $0.property, $0.target.description) < ($1.object, $1.property, $1.target.description)
        }
        for (target, object, entity, property) in ordered {
            let reject = Reject(
                entity: entity,
                object: object,
                property: property,
                rule: Rule.dangling.rawValue,
                value: target.description
            )
            if let excuses, excuses(reject) {
                excused.append(reject)
                continue
            }
            guard collectsRejects else { throw Self.error(reject) }
            result.append(reject)
        }
        pending = keySets.makeReferenceMap()
        return result
    }

    /// The key of `constraint`'s values in `row` of `batch`: the ``uniquenessKey(_:)`` of each attribute's value and
    /// the key of each to-one, joined by U+001F. A constraint of one integer attribute or one to-one gives an integer
    /// key instead of its text (`integer(5)`, `5`): such a scope's keys are all one part, and no other value's part
    /// reads `integer(…)`, so keys are equal exactly when their texts would be, and key sets keep integers as bits.
    package static func uniquenessKey(_ constraint: ConstraintRules, row: Int, of batch: RecordBatch) -> SetKey {
        let attributeCount = batch.layout.attributes.count
        switch (constraint.attributes.count, constraint.relationships.count) {
        case (1, 0):
            let value = batch.value(row: row, attribute: constraint.attributes[0])
            if case .integer(let number) = value { return .integer(number) }
            return .text(uniquenessKey(value))
        case (0, 1):
            return .integer(batch.cell(row: row, column: attributeCount + constraint.relationships[0]).integer)
        default:
            var parts = constraint.attributes.map { uniquenessKey(batch.value(row: row, attribute: $0)) }
            parts += constraint.relationships.map { "\(batch.cell(row: row, column: attributeCount + $0).integer)" }
            return .text(parts.joined(separator: "\u{1F}"))
        }
    }

    /// A value's part of a uniqueness key: texts equal exactly when the values are, byte for byte, as a SQLite store's
    /// unique index compares them. (A `String` takes canonically equivalent texts, `é` and `e` + U+0301, as one, and
    /// a `Data`'s description is only its length.) Texts that are plain ASCII without the key's separator stay as they
    /// are; other texts and bytes are written in hexadecimal.
    package static func uniquenessKey(_ value: Value) -> String {
        func hex(_ bytes: some Sequence<UInt8>) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var text: [UInt8] = []
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        }
        switch value {
        case .string(let text), .uri(let text):
            return text.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x1F }) ? "t" + text : "x" + hex(text.utf8)
        case .data(let bytes), .transformable(let bytes):
            return "d" + hex(bytes)
        default:
            return "\(value)"
        }
    }

    /// The error for a failing object when rejects are not collected.
    static func error(_ reject: Reject) -> DecantError {
        let what: String
        switch reject.rule {
        case "optional": what = "\(reject.property ?? "a value") is nil, but the model requires a value"
        case "dangling":
            what = "\(reject.property ?? "a relationship") points at \(reject.value ?? "?"), which does not exist"
        case "unique": what = "another \(reject.entity) has the same \(reject.property ?? "") (uniqueness constraint)"
        default:
            what =
                "\(reject.property ?? "a value") \(reject.value.map { "(\($0)) " } ?? "")breaks the rule \(reject.rule)"
        }
        return DecantError(
            .validationFailed,
            "\(reject.object): \(what); give --rejects FILE to list such objects and go on",
            at: Location(entity: reject.entity, object: reject.object, keyPath: reject.property)
        )
    }
}

@available(*, unavailable)
extension ModelValidator: Sendable {}

/// ``ModelValidator`` as a transform stage: objects that pass go on, the others become rejects.
///
/// ```swift
/// let stage = ValidationTransform(model: model, collectsRejects: true)
/// let report = try RecordTransfer.copy(from: &reader, through: stage, to: &writer)
/// ```
public struct ValidationTransform: RecordTransform, MemberPartsConsumer {
    private var validator: ModelValidator

    /// Takes to-many lists in parts when rejected objects stay (checking a store in place): their members are
    /// checked as they come and counted across the parts.
    public var takesMemberParts: Bool { !validator.dropsRejected }

    /// A stage checking objects of `model` (see ``ModelValidator/dropsRejected``), remembering what it has seen in
    /// sets `keySets` makes.
    /// `checksUniqueness` false leaves uniqueness constraints to the output, when its own index refuses a second
    /// object with the same key (a SQLite store's): the keys are then not remembered twice.
    public init(
        model: ObjectModel, collectsRejects: Bool, dropsRejected: Bool = true, keySets: KeySetFactory = .inMemory,
        checksUniqueness: Bool = true
    ) {
        self.validator = ModelValidator(
            model: model, collectsRejects: collectsRejects, dropsRejected: dropsRejected, keySets: keySets)
        self.validator.checksUniqueness = checksUniqueness
    }

    public mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
        var rejects: [Reject] = []
        let kept = try validator.check(batch, rejects: &rejects)
        for reject in rejects { output.reject(reject) }
        output.emit(kept)
    }

    public mutating func finish(into output: inout TransformOutput) throws {
        // A dangling reference is listed, but its object was written: it is reported, not counted as rejected.
        for reject in try validator.finish() { output.findings.append(reject) }
    }
}

@available(*, unavailable)
extension ValidationTransform: Sendable {}
