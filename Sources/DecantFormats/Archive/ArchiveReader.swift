public import DecantCore
import DecantCodecs
public import Foundation

/// Reads the app objects of an NSKeyedArchiver archive (binary or XML property list) as records of a model.
///
/// Each `$objects` entry whose class maps to an entity becomes one record, whatever refers to it and however
/// often: its identity is its archive index (`RecordID.external("12")`), so a shared object stays one object and
/// cycles need no care. A class maps to the entity `ArchiveOptions.classEntities` names for it (by its whole name or
/// the part after its last `.`, as Swift writes `MyApp.Note`), else to the entity of that name or represented
/// class name. Foundation values and collections are values, never records; other classes that map to no entity
/// are left out and reported.
///
/// A coder key fills the property `ArchiveOptions.classKeys` renames it to, else the one it names as a JSON key
/// would: exactly, then ignoring case, then as snake_case for camelCase. Keys that fill nothing are reported once
/// per class. Attribute values must fit their type (a string for String, an NSDate for Date, …; a Foundation
/// collection or app object for a Transformable attribute is archived on its own); relationships take references
/// to mapped objects, a collection for a to-many. When only one side of a relationship with an inverse is
/// archived, the other side is filled in.
///
/// A binary archive is read where it lies (a file a few blocks at a time, see `FileBlocks`) and each object decoded when
/// it is needed: one walk maps objects to entities (beside the archive's structure check, on a thread of its own), then
/// records come entity by entity, a batch at a time, objects shaped like the one before read straight from the bytes
/// (`ArchiveRowDecoder`). Memory stays at a few blocks plus a few integers per object. XML archives are decoded whole
/// on opening.
/// Every problem is `.malformedInput` naming the file, the object (`$objects[12]`) and the coder key.
///
/// ```swift
/// var options = FormatOptions(bundle: notes, version: "Notes")
/// options.archive.classEntities = ["LegacyNote": "Note"]
/// var reader = try ArchiveReader(contentsOf: url, options: options)
/// var batch = RecordLayout(entity: "Note", in: reader.model)!.emptyBatch()
/// while try reader.nextBatch(into: &batch) { print(batch.count) }
/// ```
public final class ArchiveReader: RecordReader {
    /// The model the records follow.
    public let model: ObjectModel
    /// Records per batch.
    public var batchSize = 1000
    /// Classes and keys left out.
    public private(set) var diagnostics: [Diagnostic] = []

    private let archive: KeyedArchive
    private let path: String
    /// The class → entity map and renamed keys (``ArchiveOptions``), taken from the options once.
    private let classes: ArchiveOptions
    private var plans: [EntityRecords] = []
    /// Per plan, whether a relationship of some mapped object may refer to its objects. Objects nothing refers to
    /// are started anonymous (``RecordBatch/beginRecord(anonymous:)``): their archive indices are unique by
    /// construction, so a store writer need not remember them (at 200k notes, that memory grew with the rows).
    private var referenced: [Bool] = []
    private var nextPlan = 0
    private var nextRow = 0
    /// Per mapped object index, its entity.
    private var entityOfObject: [Int32] = []
    /// The entity names `entityOfObject` points into.
    private var mappedEntities: [String] = []
    /// Per class name and coder key, the property it fills (nil: none, reported once).
    private var keyTargets: [String: [String: Target?]] = [:]
    /// The class, coder keys and key objects of the last object read the full way, and the attribute each key fills:
    /// objects of a class mostly have the same keys in the same order, so their targets are looked up once, and
    /// their values read straight from the bytes (``ArchiveRowDecoder``).
    private var lastClass: String?
    private var lastKeys: [String] = []
    private var lastAttributes: [Int?] = []
    private var lastShape: KeyedArchive.FieldShape?
    private var rowDecoder = ArchiveRowDecoder()
    /// Whether objects shaped like the one before are read straight from the bytes; false reads every object the full
    /// way (for tests that compare the two).
    var readsRowsFromBytes = true
    /// How many records were read straight from the bytes (for tests).
    private(set) var rowsReadFromBytes = 0

    /// The records of one entity.
    private struct EntityRecords {
        var layout: RecordLayout
        var objects: [Int] = []
        /// Per object, per layout relationship: the value, once relationships are resolved.
        var relationships: [[RelationshipValue]] = []
    }

    /// What a coder key fills.
    private enum Target: Hashable {
        case attribute(Int)
        case relationship(Int)
    }

    /// Opens the archive at `url`; the model is `options.version` of `options.bundle`.
    /// - Throws: `.usage` without a model or for a mapping that names an unknown entity, `.fileNotFound`, and
    ///   `.malformedInput` for a damaged archive or a value that does not fit its property.
    ///
    /// A binary archive file stays on disk and is read a few blocks at a time as the reader needs them (see
    /// `FileBlocks`), so the process holds the objects it is working on, not the whole file; a file truncated while
    /// it is read makes a `.malformedInput` error.
    public convenience init(contentsOf url: URL, options: FormatOptions) throws {
        let path = url.displayPath
        try self.init(path: path, options: options) {
            // A binary archive's structure check walks every object on a thread of its own while this reader
            // walks them to plan its records.
            if let file = try FileBlocks(opening: url, path: path) { return try KeyedArchive.opening(file: file) }
            return (try KeyedArchive(data: Data(wholeFile: url, what: "the archive"), path: path), nil)
        }
    }

    /// Reads an archive from its bytes; `path` is used in error locations.
    public convenience init(data: Data, path: String, options: FormatOptions) throws {
        try self.init(path: path, options: options) { (try KeyedArchive(data: data, path: path), nil) }
    }

    /// Checks the model first, then opens the archive with `open`, which may leave the archive's structure check
    /// running: the mapping is checked and the objects planned meanwhile, and an error the check finds is reported
    /// before any of theirs, as when the archive is checked on opening.
    private init(
        path: String, options: FormatOptions,
        open: () throws -> (KeyedArchive, BinaryPropertyList.StructureCheck?)
    ) throws {
        let model = try options.modelForModelLessInput(at: Location(path: path))
        self.model = model
        self.path = path
        self.classes = options.archive
        let (archive, check) = try open()
        self.archive = archive
        do {
            try checkMapping()
            try planObjects()
        } catch {
            try check?.finish()
            throw error
        }
        try check?.finish()
        try resolveRelationships()
        referenced = Self.referencedPlans(plans, in: model)
    }

    /// Per plan, whether its entity is the destination of a relationship (or a sub-entity of one) of a plan with
    /// objects.
    private static func referencedPlans(_ plans: [EntityRecords], in model: ObjectModel) -> [Bool] {
        var destinations: Set<String> = []
        for plan in plans where !plan.objects.isEmpty {
            for relationship in plan.layout.relationships {
                if let destination = relationship.destinationEntity { destinations.insert(destination) }
            }
        }
        return plans.map { plan in
            guard let entity = model.entity(named: plan.layout.entityName) else { return true }
            return ([entity] + model.ancestors(of: entity)).contains { destinations.contains($0.name) }
        }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        while nextPlan < plans.count, nextRow >= plans[nextPlan].objects.count {
            nextPlan += 1
            nextRow = 0
        }
        guard nextPlan < plans.count else { return false }
        let plan = plans[nextPlan]
        batch.removeAll(newLayout: plan.layout)
        // The types once per batch: an `Attribute` is a large value, and copying it per field showed in profiles.
        let types = plan.layout.attributes.map(\.type)
        let rows = nextRow..<min(nextRow + max(batchSize, 1), plan.objects.count)
        // A binary archive is read through one cursor for the whole batch.
        let isBinary = try archive.withBinaryCursor { cursor, objects in
            try readRows(rows, of: plan, types: types, into: &batch, bytes: (cursor, objects))
        } != nil
        if !isBinary { try readRows(rows, of: plan, types: types, into: &batch, bytes: nil) }
        nextRow = rows.upperBound
        return true
    }

    /// Appends the records of `rows` of `plan`. Most objects have the keys and class of the one before: with the
    /// archive's `bytes`, their values are read straight from them (``ArchiveRowDecoder``). Anything else goes the
    /// full way, which names any problem.
    private func readRows(
        _ rows: Range<Int>, of plan: EntityRecords, types: [AttributeType], into batch: inout RecordBatch,
        bytes: (cursor: BinaryPropertyList.Cursor, objects: BinaryPropertyList.References)?
    ) throws {
        var cells = [ArchiveRowDecoder.Cell](repeating: .value(.null), count: types.count)
        var values = [Value](repeating: .null, count: types.count)
        let anonymous = nextPlan < referenced.count && !referenced[nextPlan]
        func begin(_ index: Int) {
            if anonymous {
                batch.beginRecord(anonymous: String(index))
            } else {
                batch.beginRecord(id: .external(String(index)))
            }
        }
        for row in rows {
            let index = plan.objects[row]
            if let bytes, readsRowsFromBytes, let shape = lastShape,
                rowDecoder.read(
                    index, shapedLike: shape, attributes: lastAttributes, types: types, in: archive,
                    cursor: bytes.cursor, objects: bytes.objects, into: &cells)
            {
                rowsReadFromBytes += 1
                begin(index)
                ArchiveRowDecoder.append(cells, types: types, cursor: bytes.cursor, to: &batch)
                appendRelationships(row: row, of: plan, to: &batch)
                batch.endRecord()
                continue
            }
            for position in values.indices { values[position] = .null }
            let object = try archive.object(at: index)
            if object.className != lastClass || object.fields.keys != lastKeys {
                lastClass = object.className
                lastKeys = object.fields.keys
                let targets = lastKeys.map { target(of: $0, in: object, layout: plan.layout) }
                lastAttributes = targets.map { target -> Int? in
                    guard case .attribute(let position)? = target else { return nil }
                    return position
                }
            }
            for (item, (key, field)) in object.fields.enumerated() {
                guard let position = lastAttributes[item] else { continue }
                values[position] = try archive.inField(key, of: object) {
                    try value(
                        of: field, for: position, type: types[position], layout: plan.layout, index: object.index,
                        key: key)
                }
            }
            lastShape = archive.fieldShape(at: index)
            begin(index)
            for (value, type) in zip(values, types) {
                batch.append(value, as: type)
            }
            appendRelationships(row: row, of: plan, to: &batch)
            batch.endRecord()
        }
    }

    /// Appends the relationships of `row` of `plan` to the record begun in `batch`.
    private func appendRelationships(row: Int, of plan: EntityRecords, to batch: inout RecordBatch) {
        for relationship in plan.relationships.isEmpty ? [] : plan.relationships[row] {
            switch relationship {
            case .toOne(let reference): batch.appendReference(reference)
            case .toMany(let list): batch.appendReferenceList(list)
            case .viaInverse: batch.appendViaInverse()
            }
        }
    }

    // MARK: Classes → entities

    /// The mapping's entities exist and are concrete; renamed keys name properties that exist.
    private func checkMapping() throws {
        for (className, renames) in classes.classKeys.sorted(by: { $0.key < $1.key }) {
            let entityName =
                classes.classEntities[className] ?? classes.classEntities[Self.shortName(className)]
                ?? Self.shortName(className)
            guard let layout = RecordLayout(entity: entityName, in: model) else { continue }
            for (key, property) in renames.sorted(by: { $0.key < $1.key })
            where layout.attributeIndex(property) == nil && layout.relationshipIndex(property) == nil {
                throw DecantError(
                    .usage,
                    "class \(className): key \(key) is renamed to \(property), which \(entityName) does not have",
                    at: Location(path: path, entity: entityName, keyPath: key))
            }
        }
        for (className, entityName) in classes.classEntities.sorted(by: { $0.key < $1.key })
        where !entityName.isEmpty {
            guard let entity = model.entity(named: entityName) else {
                throw DecantError(
                    .usage,
                    "class \(className) maps to entity \(entityName), which \(model.versionName ?? "the model") "
                        + "does not have (it has \(model.entities.map(\.name).sorted().joined(separator: ", ")))",
                    at: Location(path: path))
            }
            guard !entity.isAbstract else {
                throw DecantError(
                    .usage, "class \(className) maps to entity \(entityName), which is abstract",
                    at: Location(path: path))
            }
        }
    }

    /// The entity objects of this class become: `""` for none.
    private func entity(forClass object: ArchivedObject) -> String {
        guard let className = object.className, !ArchiveField.isValueClass(object) else { return "" }
        let shortName = Self.shortName(className)
        if let mapped = classes.classEntities[className] ?? classes.classEntities[shortName] {
            return mapped
        }
        let concrete = model.entities.filter { !$0.isAbstract }
        for name in [className, shortName] {
            if let entity = concrete.first(where: { $0.name == name }) { return entity.name }
        }
        for name in [className, shortName] {
            if let entity = concrete.first(where: {
                $0.className.map(Self.shortName) == Self.shortName(name)
            }) {
                return entity.name
            }
        }
        return ""
    }

    /// The part of a class name after its last `.` (`MyApp.Note` → `Note`).
    static func shortName(_ className: String) -> String {
        className.split(separator: ".").last.map(String.init) ?? className
    }

    /// Whether a class is one of Foundation's (`NSAttributedString`, `_NSKeyedCoderOldStyleArray`, …): not reported
    /// when left out.
    static func isFoundationClass(_ name: String) -> Bool {
        name.hasPrefix("NS") || name.hasPrefix("_NS") || name.hasPrefix("__NS")
    }

    /// Walks `$objects` once: checks every object's class and references, and lists the mapped ones per entity.
    private func planObjects() throws {
        // Per class dictionary, what its objects become: a plan, or left out (and counted under a name).
        var classPlans: [Int: (position: Int?, leftOutName: String?)] = [:]
        var planOfEntity: [String: Int] = [:]
        var leftOut: [String: Int] = [:]
        // The class of the entry before, which the next one mostly shares (no hashing then).
        var lastClassPlan: (classIndex: Int, plan: (position: Int?, leftOutName: String?))?
        // Only relationships look objects' entities up; without any, the table is not worth its memory.
        let needsEntityOfObject = model.entities.contains { !$0.relationships.isEmpty }
        entityOfObject = needsEntityOfObject ? [Int32](repeating: -1, count: archive.objectCount) : []
        func walk(_ look: (Int) -> KeyedArchive.QuickLook) throws {
            for index in 0..<archive.objectCount {
                // Most entries are told from their bytes alone; the rest are decoded, which throws when `$class` is
                // not a reference to a class dictionary or a field refers outside `$objects`.
                let classIndex: Int
                switch look(index) {
                case .plain:
                    continue
                case .object(let found):
                    classIndex = found
                case .unsure:
                    let object = try archive.object(at: index)
                    guard object.className != nil, let found = object.classIndex else { continue }
                    classIndex = found
                }
                let classPlan: (position: Int?, leftOutName: String?)
                if let last = lastClassPlan, last.classIndex == classIndex {
                    classPlan = last.plan
                } else if let known = classPlans[classIndex] {
                    classPlan = known
                } else {
                    // The first object of a class: its class dictionary is checked here (errors name this object).
                    let (className, classes) = try archive.classDescription(at: classIndex, owner: index)
                    let object = ArchivedObject(
                        index: index, className: className, classes: classes, fields: [:],
                        classEntry: ArchivedObject.ClassEntry(reference: .uid(UInt64(classIndex)), position: 0))
                    classPlan = plan(forClassOf: object, planOfEntity: &planOfEntity)
                    classPlans[classIndex] = classPlan
                }
                lastClassPlan = (classIndex, classPlan)
                guard let position = classPlan.position else {
                    if let name = classPlan.leftOutName { leftOut[name, default: 0] += 1 }
                    continue
                }
                plans[position].objects.append(index)
                if needsEntityOfObject { entityOfObject[index] = Int32(position) }
            }
        }
        // A binary archive is walked through one cursor; an archive decoded whole goes the full way.
        var keys = KeyedArchive.KeyKinds()
        let isBinary = try archive.withBinaryCursor { cursor, objects in
            try walk { archive.quickLook(at: $0, cursor: cursor, objects: objects, keys: &keys) }
        } != nil
        if !isBinary { try walk { _ in .unsure } }
        let order = Dictionary(uniqueKeysWithValues: model.entities.enumerated().map { ($1.name, $0) })
        plans.sort { (order[$0.layout.entityName] ?? 0) < (order[$1.layout.entityName] ?? 0) }
        for (name, count) in leftOut.sorted(by: { $0.key < $1.key }) {
            diagnostics.append(
                Diagnostic(
                    .unmappedArchiveContent,
                    "\(count) object\(count == 1 ? "" : "s") of class \(name) map to no entity of "
                        + "\(model.versionName ?? "the model") and are left out (map it with --class \(name)=Entity)",
                    at: Location(path: path)))
        }
    }

    /// Where the objects of `object`'s class go: the plan of its entity (made on first use), or left out, with the
    /// class name to report unless it is a Foundation class or mapped to nothing on purpose.
    private func plan(
        forClassOf object: ArchivedObject, planOfEntity: inout [String: Int]
    ) -> (position: Int?, leftOutName: String?) {
        let entityName = entity(forClass: object)
        guard !entityName.isEmpty else {
            if let name = object.className, !ArchiveField.isValueClass(object), !Self.isFoundationClass(name),
                classes.classEntities[name] != ""
            {
                return (nil, name)
            }
            return (nil, nil)
        }
        if let known = planOfEntity[entityName] { return (known, nil) }
        guard let layout = RecordLayout(entity: entityName, in: model) else { return (nil, nil) }
        planOfEntity[entityName] = plans.count
        plans.append(EntityRecords(layout: layout))
        mappedEntities.append(entityName)
        return (plans.count - 1, nil)
    }

    // MARK: Coder keys → properties

    private func target(of key: String, in object: ArchivedObject, layout: RecordLayout) -> Target? {
        let className = object.className ?? ""
        if let known = keyTargets[className]?[key] { return known }
        let found = findTarget(of: key, className: className, layout: layout)
        keyTargets[className, default: [:]][key] = .some(found)
        if found == nil {
            diagnostics.append(
                Diagnostic(
                    .unmappedArchiveContent,
                    "coder key \(key) of class \(className) fills no property of \(layout.entityName); its values "
                        + "are left out",
                    at: Location(
                        path: path, entity: layout.entityName, object: "$objects[\(object.index)]", keyPath: key
                    )
                ))
        }
        return found
    }

    private func findTarget(of key: String, className: String, layout: RecordLayout) -> Target? {
        let renames =
            classes.classKeys[className] ?? classes.classKeys[Self.shortName(className)] ?? [:]
        let name = renames[key] ?? (key.hasPrefix("$$") ? String(key.dropFirst()) : key)
        let candidates: [(name: String, target: Target)] =
            layout.attributes.enumerated().map { ($0.element.name, Target.attribute($0.offset)) }
            + layout.relationships.enumerated().map { ($0.element.name, Target.relationship($0.offset)) }
        let rules: [(String) -> String] = [
            { $0 }, { $0.lowercased() }, { $0.lowercased().filter { $0 != "_" } },
        ]
        for rule in rules {
            let wanted = rule(name)
            let found = candidates.filter { rule($0.name) == wanted }
            if found.count == 1 { return found[0].target }
            if found.count > 1 { return nil }
        }
        return nil
    }

    // MARK: Values

    /// The value of an attribute from a coder key's value.
    private func value(
        of field: PropertyListValue, for position: Int, type: AttributeType, layout: RecordLayout,
        index: Int, key: String
    ) throws -> Value {
        let resolved = try resolve(field, at: position)
        if case .null = resolved { return .null }
        if let value = Self.convert(resolved, to: type) { return value }
        let attribute = layout.attributes[position]
        let entity = layout.entityName
        if type == .transformable {
            switch resolved {
            case .collection, .dictionary, .object, .nsValue, .string, .integer, .real, .bool, .date,
                .uuid, .url:
                return .transformable(try ArchiveSubgraph.archivedData(of: field, in: archive))
            default: break
            }
        }
        throw DecantError(
            .malformedInput,
            "\(resolved.kindName) does not fit attribute \(attribute.name) of type \(attribute.type.modelName)",
            at: Location(path: path, entity: entity, object: "$objects[\(index)]", keyPath: key))
    }

    /// What the referenced objects of one attribute looked like last: the shape, keys and class of the last one
    /// resolved the full way, or plain (not an object with a class, as a string entry is).
    private enum ReferenceMemo {
        case shaped(KeyedArchive.FieldShape, keys: [String], className: String, classes: [String])
        case plain
    }

    /// Per attribute position, what its referenced objects looked like last.
    private var referenceMemos: [Int: ReferenceMemo] = [:]

    /// `field` resolved: a referenced object with the shape of the one before at this attribute (an `NSDate`,
    /// say) is built from its values read by position, without decoding its keys and class again; any other field,
    /// and anything that does not resolve that way, goes the full way, which names the problem.
    private func resolve(_ field: PropertyListValue, at position: Int) throws -> ArchiveField {
        guard case .uid(let uid) = field, uid > 0, uid < UInt64(archive.objectCount) else {
            return try ArchiveField.resolve(field, in: archive)
        }
        let index = Int(uid)
        let memo = referenceMemos[position]
        if case .shaped(let shape, let keys, let className, let classes)? = memo,
            let values = archive.fieldValues(at: index, shapedLike: shape),
            let resolved = try? ArchiveField.resolve(
                ArchivedObject(
                    index: index, className: className, classes: classes,
                    fields: PropertyListDictionary(zip(keys, values)),
                    classEntry: ArchivedObject.ClassEntry(reference: .uid(shape.classUID), position: shape.classPosition)),
                in: archive)
        {
            return resolved
        }
        let resolved = try ArchiveField.resolve(field, in: archive)
        if case .plain? = memo { return resolved }
        // Remembered for the next object at this attribute: its shape, keys and class, as the full way read them.
        if let shape = archive.fieldShape(at: index), let object = try? archive.object(at: index),
            let className = object.className
        {
            referenceMemos[position] = .shaped(shape, keys: object.fields.keys, className: className, classes: object.classes)
            if case .date = resolved { rowDecoder.learnDate(at: position, from: object, shape: shape) }
        } else {
            referenceMemos[position] = .plain
        }
        return resolved
    }

    /// `field` as a value of `type`, or `nil` when it does not fit.
    static func convert(_ field: ArchiveField, to type: AttributeType) -> Value? {
        switch (type, field) {
        case (_, .null): return .null
        case (.string, .string(let string)): return .string(string)
        case (.string, .nsValue(_, let text)): return .string(text)
        case (.integer16, _), (.integer32, _), (.integer64, _):
            let integer: Int64?
            switch field {
            case .integer(let value): integer = value
            case .bool(let flag): integer = flag ? 1 : 0
            case .real(let real): integer = Int64(exactly: real)
            default: integer = nil
            }
            guard let integer else { return nil }
            let bits = type == .integer16 ? 16 : type == .integer32 ? 32 : 64
            guard bits == 64 || (integer >= -(1 << (bits - 1)) && integer < 1 << (bits - 1)) else {
                return nil
            }
            return .integer(integer)
        case (.boolean, .bool(let flag)): return .bool(flag)
        case (.boolean, .integer(let integer)) where integer == 0 || integer == 1:
            return .bool(integer == 1)
        case (.double, .real(let real)), (.float, .real(let real)): return .double(real)
        case (.double, .integer(let integer)), (.float, .integer(let integer)):
            return .double(Double(integer))
        case (.decimal, .integer(let integer)): return .decimal(Decimal(integer))
        case (.decimal, .real(let real)) where real.isFinite: return .decimal(Decimal(real))
        case (.decimal, .string(let text)): return Decimal(string: text).map(Value.decimal)
        case (.date, .date(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.binary, .data(let data)): return .data(data)
        case (.transformable, .data(let data)): return .transformable(data)
        case (.uuid, .uuid(let uuid)): return .uuid(uuid)
        case (.uuid, .string(let text)): return UUID(uuidString: text).map(Value.uuid)
        case (.uri, .url(let url)), (.uri, .string(let url)): return .uri(url)
        default: return nil
        }
    }

    // MARK: Relationships

    /// Reads every mapped object's relationships, then fills in the inverse sides the archive left out.
    private func resolveRelationships() throws {
        var rowOfObject: [Int: (plan: Int, row: Int)] = [:]
        // Per plan, row, relationship: the explicit value (nil when the archive has no value for it).
        var explicit: [[[RelationshipValue?]]] = []
        for (planIndex, plan) in plans.enumerated() {
            guard !plan.layout.relationships.isEmpty else {
                explicit.append([])
                continue
            }
            var rows: [[RelationshipValue?]] = []
            rows.reserveCapacity(plan.objects.count)
            for (row, index) in plan.objects.enumerated() {
                rowOfObject[index] = (planIndex, row)
                    let object = try archive.object(at: index)
                var values = [RelationshipValue?](repeating: nil, count: plan.layout.relationships.count)
                for (key, field) in object.fields {
                    guard case .relationship(let position)? = target(of: key, in: object, layout: plan.layout)
                    else {
                        continue
                    }
                    let relationship = plan.layout.relationships[position]
                    values[position] = try archive.inField(key, of: object) {
                        try relationshipValue(
                            of: field, for: relationship, object: object, key: key, plan: plan)
                    }
                }
                rows.append(values)
            }
            explicit.append(rows)
        }
        // Inverse sides the archive did not give.
        var derived: [[[Int: [ObjectReference]]]] = plans.map {
            [[Int: [ObjectReference]]](repeating: [:], count: $0.objects.count)
        }
        for (planIndex, plan) in plans.enumerated() where !plan.layout.relationships.isEmpty {
            for (row, values) in explicit[planIndex].enumerated() {
                let owner = ObjectReference(
                    entity: plan.layout.entityName, id: .external(String(plan.objects[row])))
                for (position, value) in values.enumerated() {
                    guard let value, let inverseName = plan.layout.relationships[position].inverseName else {
                        continue
                    }
                    let members: [ObjectReference]
                    switch value {
                    case .toOne(let reference): members = reference.map { [$0] } ?? []
                    case .toMany(let list): members = list
                    case .viaInverse: members = []
                    }
                    for member in members {
                        guard case .external(let name) = member.id, let index = Int(name),
                            let (memberPlan, memberRow) = rowOfObject[index],
                            let inverse = plans[memberPlan].layout.relationshipIndex(inverseName),
                            explicit[memberPlan][memberRow][inverse] == nil
                        else { continue }
                        derived[memberPlan][memberRow][inverse, default: []].append(owner)
                    }
                }
            }
        }
        for planIndex in plans.indices where !plans[planIndex].layout.relationships.isEmpty {
            let layout = plans[planIndex].layout
            plans[planIndex].relationships = try explicit[planIndex].enumerated().map { row, values in
                try values.enumerated().map { position, value in
                    if let value { return value }
                    let owners = derived[planIndex][row][position] ?? []
                    let relationship = layout.relationships[position]
                    if relationship.isToMany { return .toMany(owners) }
                    guard Set(owners).count <= 1 else {
                        throw DecantError(
                            .malformedInput,
                            "the object is in the \(relationship.inverseName ?? "") of both "
                                + owners.prefix(2).map { "$objects[\($0.id)]" }.joined(separator: " and ")
                                + ", but \(relationship.name) is to-one",
                            at: Location(
                                path: path, entity: layout.entityName,
                                object: "$objects[\(plans[planIndex].objects[row])]", keyPath: relationship.name))
                    }
                    return .toOne(owners.first)
                }
            }
        }
    }

    /// A relationship's value from a coder key's value: a reference, or a collection of references for to-many.
    private func relationshipValue(
        of field: PropertyListValue, for relationship: Relationship, object: ArchivedObject,
        key: String,
        plan: EntityRecords
    ) throws -> RelationshipValue {
        let entity = plan.layout.entityName
        func failure(_ message: String) -> DecantError {
            DecantError(
                .malformedInput, message,
                at: Location(path: path, entity: entity, object: "$objects[\(object.index)]", keyPath: key))
        }
        func reference(to value: PropertyListValue) throws -> ObjectReference? {
            let resolved = try ArchiveField.resolve(value, in: archive)
            switch resolved {
            case .null:
                return nil
            case .object(let target):
                let code = entityOfObject.indices.contains(target.index) ? Int(entityOfObject[target.index]) : -1
                guard mappedEntities.indices.contains(code) else {
                    throw failure(
                        "relationship \(relationship.name) refers to $objects[\(target.index)], of class "
                            + "\(target.className ?? "?"), which maps to no entity (map it with --class)")
                }
                let targetEntity = mappedEntities[code]
                guard isEntity(targetEntity, a: relationship.destinationEntity) else {
                    throw failure(
                        "relationship \(relationship.name) refers to $objects[\(target.index)], a \(targetEntity), "
                            + "not a \(relationship.destinationEntity ?? "?")")
                }
                return ObjectReference(entity: targetEntity, id: .external(String(target.index)))
            default:
                throw failure(
                    "relationship \(relationship.name) needs a reference to an object, found \(resolved.kindName)"
                )
            }
        }
        if relationship.isToMany {
            let resolved = try ArchiveField.resolve(field, in: archive)
            switch resolved {
            case .null:
                return .toMany([])
            case .collection(_, _, let elements):
                var seen = Set<ObjectReference>()
                var list: [ObjectReference] = []
                for element in elements {
                    guard let member = try reference(to: element) else {
                        throw failure("to-many relationship \(relationship.name) holds nil (NSNull)")
                    }
                    if seen.insert(member).inserted { list.append(member) }
                }
                return .toMany(list)
            default:
                throw failure(
                    "to-many relationship \(relationship.name) needs an array or set, found \(resolved.kindName)"
                )
            }
        }
        return .toOne(try reference(to: field))
    }

    /// Whether `entity` is `destination` or one of its sub-entities.
    private func isEntity(_ entity: String, a destination: String?) -> Bool {
        guard let destination else { return true }
        if entity == destination { return true }
        guard let found = model.entity(named: entity) else { return false }
        return model.ancestors(of: found).contains { $0.name == destination }
    }
}

extension Diagnostic.Kind {
    /// Archived objects of classes mapped to no entity, or coder keys that fill no property: left out.
    public static let unmappedArchiveContent = Diagnostic.Kind(rawValue: "unmapped-archive-content")
}

@available(*, unavailable)
extension ArchiveReader: Sendable {}
