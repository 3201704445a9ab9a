public import DecantCore
import DecantCodecs
public import Foundation

/// Reads the dictionaries of a plain property list (binary or XML: what `writeToFile:`, user defaults and exported
/// bookmarks leave) as records of a model.
///
/// The objects are the dictionaries of one array: `PropertyListOptions.keyPath` names it, else the top-level
/// array, else the one array of dictionaries the top-level dictionary leads to (several: choose with `--key-path`).
/// They become objects of `PropertyListOptions.arrayEntities[keyPath]`, else `FormatOptions.entity` (`--entity`),
/// else the model's only entity, else the entity named after the array's key (`Bookmarks` → `Bookmark`).
///
/// A key fills the property `PropertyListOptions.arrayKeys` renames it to (the empty name leaves it out), else the
/// one it names as a JSON key would (``PropertyNameMatch``); keys that fill nothing are left out and reported once
/// per array. Values must fit their attribute's type as a keyed archive's do; a `Data` value that holds a keyed
/// archive decodes to its root object's value (an archived `NSDate` fills a Date attribute, an `NSURL` a URI), but
/// stays the archive's bytes for a Binary or Transformable attribute, as Core Data's transformer stores them; an
/// array or dictionary of values under a Transformable attribute is archived as Core Data's transformer would.
///
/// A dictionary, or an array of dictionaries, under a key that names a relationship becomes related objects of its
/// destination (or of the sub-entity `arrayEntities` names for that key path), the inverse pointing back. An
/// object's identity is its place in the file (`Bookmarks[2].Children[0]`).
///
/// The property list is decoded whole, with the codecs' limits on depth, size, reference cycles and UTF-8; every
/// problem is `.malformedInput` naming the file and the place of the value (`Bookmarks[2].URLString`).
///
/// ```swift
/// var options = FormatOptions(bundle: bookmarks)
/// options.propertyList.keyPath = "Bookmarks"
/// var reader = try PropertyListReader(contentsOf: url, options: options)
/// ```
public final class PropertyListReader: EntityNamingReader {
    /// The model the records follow.
    public let model: ObjectModel
    /// Records per batch.
    public var batchSize = 1000
    /// Keys and arrays left out.
    public private(set) var diagnostics: [Diagnostic] = []
    /// The entity `--entity` named, when it chose the objects' entity.
    public private(set) var entityFromOptions: String?

    private let path: String
    private let settings: PropertyListOptions
    private var plans: ModelPlan
    /// Per entity (in the order first met): its layout and records.
    private var entityOrder: [String] = []
    private var pending: [String: (layout: RecordLayout, records: [Row])] = [:]
    private var nextEntity = 0
    private var nextRow = 0
    /// Per key path and key, what it fills (nil: nothing, reported once).
    private var targets: [String: [String: Target?]] = [:]

    private struct Row {
        var id: RecordID
        var values: [Value]
        var relationships: [RelationshipValue]
    }

    private enum Target: Hashable {
        case attribute(Int)
        case relationship(Int)
        case leftOut
    }

    /// Opens the property list at `url`; the model is `options.version` of `options.bundle`.
    /// - Throws: `.usage` without a model, for a key path that leads to no array of dictionaries or a mapping that
    ///   names what the model lacks; `.fileNotFound`; `.malformedInput` for a damaged file or a value that does
    ///   not fit.
    public convenience init(contentsOf url: URL, options: FormatOptions) throws {
        let path = url.displayPath
        _ = try options.modelForModelLessInput(at: Location(path: path))
        try self.init(data: Data(wholeFile: url, what: "the property list"), path: path, options: options)
    }

    /// Reads a property list from its bytes; `path` is used in error locations.
    public init(data: Data, path: String, options: FormatOptions) throws {
        self.model = try options.modelForModelLessInput(at: Location(path: path))
        self.path = path
        self.settings = options.propertyList
        self.plans = ModelPlan(model: model)
        let value = try PropertyListValue.decode(from: data, path: path)
        let (keyPath, elements) = try selectArray(in: value)
        let entity = try rootEntity(keyPath: keyPath, options: options)
        for (index, element) in elements.enumerated() {
            let place = "\(keyPath)[\(index)]"
            guard let dictionary = element.dictionaryValue else {
                throw DecantError(
                    .malformedInput,
                    "expected a dictionary of \(entity), found \(PropertyListSurvey.kind(of: element))",
                    at: Location(path: path, entity: entity, object: place))
            }
            _ = try importDictionary(dictionary, entity: entity, keyPath: keyPath, place: place, parent: nil)
        }
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        while nextEntity < entityOrder.count, nextRow >= pending[entityOrder[nextEntity]]?.records.count ?? 0 {
            nextEntity += 1
            nextRow = 0
        }
        guard nextEntity < entityOrder.count, let entry = pending[entityOrder[nextEntity]] else { return false }
        batch.removeAll(newLayout: entry.layout)
        let types = entry.layout.attributes.map(\.type)
        let rows = nextRow..<min(nextRow + max(batchSize, 1), entry.records.count)
        for row in entry.records[rows] {
            batch.beginRecord(id: row.id)
            for (value, type) in zip(row.values, types) { batch.append(value, as: type) }
            for relationship in row.relationships {
                switch relationship {
                case .toOne(let reference): batch.appendReference(reference)
                case .toMany(let list): batch.appendReferenceList(list)
                case .viaInverse: batch.appendViaInverse()
                }
            }
            batch.endRecord()
        }
        nextRow = rows.upperBound
        return true
    }

    // MARK: The array and its entity

    /// The array whose dictionaries become the objects, and its key path.
    private func selectArray(in value: PropertyListValue) throws -> (String, [PropertyListValue]) {
        if let keyPath = settings.keyPath, !keyPath.isEmpty {
            var current = value
            var walked = ""
            for component in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
                guard let dictionary = current.dictionaryValue else {
                    throw DecantError(
                        .usage,
                        "--key-path \(keyPath): \(walked.isEmpty ? "the top level" : walked) is "
                            + "\(PropertyListSurvey.kind(of: current)), not a dictionary", at: Location(path: path))
                }
                guard let next = dictionary[component] else {
                    throw DecantError(
                        .usage,
                        "--key-path \(keyPath): \(walked.isEmpty ? "the top-level dictionary" : walked) has no key "
                            + "\(component) (it has \(dictionary.keys.prefix(20).joined(separator: ", ")))",
                        at: Location(path: path))
                }
                walked = PropertyListSurvey.join(walked, component)
                current = next
            }
            guard let elements = current.arrayValue else {
                throw DecantError(
                    .usage,
                    "--key-path \(keyPath) is \(PropertyListSurvey.kind(of: current)), not an array of dictionaries",
                    at: Location(path: path, keyPath: keyPath))
            }
            return (keyPath, elements)
        }
        if let elements = value.arrayValue { return ("", elements) }
        let found = PropertyListSurvey.topLevelArrays(in: value)
        guard let first = found.first else {
            throw DecantError(
                .malformedInput,
                "the property list (\(PropertyListSurvey.kind(of: value))) holds no array of dictionaries to convert",
                at: Location(path: path))
        }
        guard found.count == 1 else {
            throw DecantError(
                .usage,
                "the property list holds \(found.count) arrays of dictionaries "
                    + "(\(found.map(\.keyPath).joined(separator: ", "))): "
                    + "choose one with --key-path", at: Location(path: path))
        }
        return first
    }

    /// The entity of the chosen array's dictionaries.
    private func rootEntity(keyPath: String, options: FormatOptions) throws -> String {
        let concrete = model.entities.filter { !$0.isAbstract }.map(\.name)
        let name: String
        if let mapped = settings.arrayEntities[keyPath] {
            guard !mapped.isEmpty else {
                throw DecantError(
                    .usage, "the mapping leaves out the array \(keyPath.isEmpty ? "at the top" : keyPath) it converts",
                    at: Location(path: path))
            }
            name = mapped
        } else if let entity = options.entity {
            name = entity
            entityFromOptions = entity
        } else if concrete.count == 1 {
            name = concrete[0]
        } else {
            let last = keyPath.split(separator: ".").last.map(String.init)
                ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let guess = PropertyListSurvey.entityName(last)
            guard concrete.contains(guess) else {
                throw DecantError(
                    .usage,
                    "which entity the dictionaries of \(keyPath.isEmpty ? "the top-level array" : keyPath) become: "
                        + "name it with --entity (\(concrete.sorted().joined(separator: ", ")))",
                    at: Location(path: path))
            }
            name = guess
        }
        guard let entity = model.entity(named: name) else {
            throw DecantError(
                .usage,
                "\(model.versionName ?? "the model") has no entity \(name) (it has "
                    + "\(model.entities.map(\.name).sorted().joined(separator: ", ")))", at: Location(path: path))
        }
        guard !entity.isAbstract else {
            throw DecantError(.usage, "entity \(name) is abstract", at: Location(path: path))
        }
        return name
    }

    // MARK: Objects

    /// Imports one dictionary as an object of `entity` and the objects nested in it.
    private func importDictionary(
        _ dictionary: PropertyListDictionary, entity: String, keyPath: String, place: String,
        parent: (reference: ObjectReference, inverse: String?)?
    ) throws -> ObjectReference {
        guard let plan = plans.plan(for: entity) else {
            throw DecantError(.usage, "the model has no entity \(entity)", at: Location(path: path, object: place))
        }
        let layout = plan.layout
        let reference = ObjectReference(entity: entity, id: .external(place))
        var values = [Value](repeating: .null, count: layout.attributes.count)
        var relationships = layout.relationships.indices.map { index -> RelationshipValue in
            if plan.carriedByInverse[index] { return .viaInverse }
            return layout.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
        }
        var explicit = Set<Int>()
        for (key, value) in dictionary {
            let here = Location(path: path, entity: entity, object: place, keyPath: key)
            switch try target(of: key, keyPath: keyPath, layout: layout) {
            case .leftOut:
                continue
            case .attribute(let index):
                values[index] = try attributeValue(value, attribute: layout.attributes[index], at: here)
            case .relationship(let index):
                explicit.insert(index)
                let relationship = layout.relationships[index]
                let childPath = PropertyListSurvey.join(keyPath, key)
                let members: [(PropertyListValue, String)]
                switch value {
                case .dictionary: members = [(value, "\(place).\(key)")]
                case .array(let elements), .set(let elements):
                    members = elements.enumerated().map { ($1, "\(place).\(key)[\($0)]") }
                default:
                    throw DecantError(
                        .malformedInput,
                        "the relationship \(relationship.name) expects a dictionary or an array of dictionaries, "
                            + "found \(PropertyListSurvey.kind(of: value))", at: here)
                }
                if !relationship.isToMany, members.count > 1 {
                    throw DecantError(
                        .malformedInput,
                        "the to-one relationship \(relationship.name) expects one dictionary, found \(members.count)",
                        at: here)
                }
                guard let destination = plan.destinationNames[index] else { continue }
                let childEntity = settings.arrayEntities[childPath] ?? destination
                if childEntity.isEmpty { continue }
                guard plan.destinations[index].contains(childEntity) else {
                    throw DecantError(
                        .usage,
                        "the mapping makes \(childPath) \(childEntity), which is not a \(destination) "
                            + "(the destination of \(entity).\(relationship.name))", at: Location(path: path))
                }
                var list: [ObjectReference] = []
                for (member, memberPlace) in members {
                    guard let child = member.dictionaryValue else {
                        throw DecantError(
                            .malformedInput,
                            "the relationship \(relationship.name) expects dictionaries, found "
                                + PropertyListSurvey.kind(of: member),
                            at: Location(path: path, entity: entity, object: memberPlace))
                    }
                    list.append(
                        try importDictionary(
                            child, entity: childEntity, keyPath: childPath, place: memberPlace,
                            parent: (reference, plan.inverses[index]?.name)))
                }
                if plan.carriedByInverse[index] {
                    relationships[index] = .viaInverse
                } else {
                    relationships[index] = relationship.isToMany ? .toMany(list) : .toOne(list.first)
                }
            }
        }
        if let parent, let inverse = parent.inverse, let index = layout.relationshipIndex(inverse),
            !explicit.contains(index), !plan.carriedByInverse[index]
        {
            relationships[index] =
                layout.relationships[index].isToMany ? .toMany([parent.reference]) : .toOne(parent.reference)
        }
        if pending[entity] == nil {
            pending[entity] = (layout, [])
            entityOrder.append(entity)
        }
        pending[entity]?.records.append(Row(id: reference.id, values: values, relationships: relationships))
        return reference
    }

    /// What `key` of the dictionaries at `keyPath` fills.
    private func target(of key: String, keyPath: String, layout: RecordLayout) throws -> Target {
        if let known = targets[keyPath]?[key] { return known ?? .leftOut }
        var found: Target?
        if let renamed = settings.arrayKeys[keyPath]?[key] {
            if renamed.isEmpty {
                found = .leftOut
            } else if let index = layout.attributeIndex(renamed) {
                found = .attribute(index)
            } else if let index = layout.relationshipIndex(renamed) {
                found = .relationship(index)
            } else {
                throw DecantError(
                    .usage,
                    "the mapping renames key \(key) of \(keyPath.isEmpty ? "the top-level array" : keyPath) to "
                        + "\(renamed), which \(layout.entityName) does not have",
                    at: Location(path: path, entity: layout.entityName, keyPath: key))
            }
        } else {
            let candidates: [(name: String, target: Target)] =
                layout.attributes.enumerated().map { ($0.element.name, Target.attribute($0.offset)) }
                + layout.relationships.enumerated().map { ($0.element.name, Target.relationship($0.offset)) }
            let hits = PropertyNameMatch.match(key, among: candidates)
            if hits.count == 1 { found = hits[0].target }
        }
        targets[keyPath, default: [:]][key] = .some(found)
        if found == nil {
            diagnostics.append(
                Diagnostic(
                    .unmappedPropertyListContent,
                    "key \(key) of \(keyPath.isEmpty ? "the top-level array" : keyPath) fills no property of "
                        + "\(layout.entityName): left out (rename it in --plist-mapping)",
                    at: Location(path: path, entity: layout.entityName, keyPath: key)))
        }
        return found ?? .leftOut
    }

    // MARK: Values

    /// An attribute's value from a property-list value.
    private func attributeValue(_ value: PropertyListValue, attribute: Attribute, at here: Location) throws -> Value {
        let field: ArchiveField
        switch value {
        case .null: return .null
        case .string(let text): field = .string(text)
        case .integer(let integer): field = .integer(integer)
        case .real(let real): field = .real(real)
        case .bool(let flag): field = .bool(flag)
        case .date(let seconds): field = .date(seconds)
        case .uid:
            throw DecantError(
                .malformedInput, "a keyed archive's UID does not fit attribute \(attribute.name) (this property list "
                    + "is part of an archive)", at: here)
        case .data(let data):
            if attribute.type == .binary || attribute.type == .transformable {
                field = .data(data)
            } else if let archive = try PropertyListArchivedValue.archive(in: data, path: path, place: place(here)) {
                field = try PropertyListArchivedValue.root(of: archive, path: path, place: place(here))
            } else {
                field = .data(data)
            }
        case .array, .set, .dictionary:
            guard attribute.type == .transformable else {
                throw DecantError(
                    .malformedInput,
                    "\(PropertyListSurvey.kind(of: value)) does not fit attribute \(attribute.name) of type "
                        + attribute.type.modelName, at: here)
            }
            var writer = KeyedArchiveWriter()
            let root = Int(Self.archive(value, into: &writer).uidValue ?? 0)
            return .transformable(
                try writer.encodedData(root: root == 0 ? nil : KeyedArchiveWriter.Reference(index: root)))
        }
        if let converted = ArchiveReader.convert(field, to: attribute.type) { return converted }
        let found: String
        if case .data(let data) = value, PropertyListArchivedValue.looksLikeArchive(data) {
            found = "a keyed archive of \(field.kindName.replacingOccurrences(of: "→ ", with: ""))"
        } else {
            found = value.kindName == "Boolean" ? "boolean" : value.kindName
        }
        throw DecantError(
            .malformedInput, "\(found) does not fit attribute \(attribute.name) of type \(attribute.type.modelName)",
            at: here)
    }

    /// The place of a value, for errors from an archive inside it.
    private func place(_ location: Location) -> String {
        [location.object, location.keyPath].compactMap { $0 }.joined(separator: ".")
    }

    /// `value` as an entry of a keyed archive, as Foundation archives property-list values: strings, numbers and
    /// data as plain entries, dates as `NSDate`, arrays, sets and dictionaries as their classes.
    static func archive(_ value: PropertyListValue, into writer: inout KeyedArchiveWriter) -> PropertyListValue {
        switch value {
        case .null, .uid: return KeyedArchiveWriter.null
        case .string(let text): return writer.addString(text).uid
        case .integer, .real, .bool, .data: return writer.addValue(value).uid
        case .date(let seconds): return writer.addObject(className: "NSDate", fields: ["NS.time": .real(seconds)]).uid
        case .array(let elements): return writer.addArray(elements.map { archive($0, into: &writer) }).uid
        case .set(let elements):
            return writer.addArray(elements.map { archive($0, into: &writer) }, className: "NSSet").uid
        case .dictionary(let dictionary):
            let keys = dictionary.keys.map { writer.addString($0).uid }
            let values = dictionary.values.map { archive($0, into: &writer) }
            return writer.addDictionary(keys: keys, values: values).uid
        }
    }
}

extension Diagnostic.Kind {
    /// Keys of a plain property list's dictionaries that fill no property: left out.
    public static let unmappedPropertyListContent = Diagnostic.Kind(rawValue: "unmapped-property-list-content")
}

@available(*, unavailable)
extension PropertyListReader: Sendable {}
