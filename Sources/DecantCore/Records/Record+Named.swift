import Foundation

/// Records written and read by property name, for people and tests: positional ``Record/values`` follow the
/// ``RecordLayout`` and stay the form the pipeline moves.
///
/// ```swift
/// let note = try Record(entity: "Note", id: .primaryKey(1), ["text": "milk", "pinned": true], in: model)
/// let layout = RecordLayout(entity: "Note", in: model)    // nil for an entity the model does not have
/// try layout?.value("text", of: note)                     // "milk"
/// ```
extension RecordLayout {
    /// A record of this layout from values by property name.
    ///
    /// An attribute left out takes the model's default value (``Attribute/defaultLiteral``), else nil, as a new
    /// object inserted in a Core Data context does; a to-one left out is nil, a to-many left out is empty (an
    /// unordered to-many whose inverse is a to-one is carried by that inverse, ``RelationshipValue/viaInverse``, as
    /// every reader gives it). An integer is taken for a Double, Float or Decimal attribute, a string for a URI,
    /// data for a Transformable. `model` is the model this layout is of.
    /// - Throws: `.usage` naming the entity and the property for a name the entity does not have, a relationship
    ///   given as a value (or the reverse), or a value that is not of the attribute's type.
    public func record(
        id: RecordID, _ values: [String: Value], relationships: [String: RelationshipValue] = [:],
        in model: ObjectModel
    ) throws -> Record {
        for name in values.keys.sorted() where attributeIndex(name) == nil { throw unknown(name, wanted: "attribute") }
        for name in relationships.keys.sorted() where relationshipIndex(name) == nil {
            throw unknown(name, wanted: "relationship")
        }
        let object = ObjectReference(entity: entityName, id: id).description
        let attributeValues = try attributes.map { attribute in
            guard let value = values[attribute.name] else { return attribute.defaultLiteral ?? .null }
            guard let typed = Self.typed(value, for: attribute.type) else {
                throw DecantError(
                    .usage,
                    "\(entityName).\(attribute.name) is a \(attribute.type.modelName) attribute: "
                        + "\(Self.describe(value)) is not one of its values",
                    at: Location(path: "<memory>", entity: entityName, object: object, keyPath: attribute.name))
            }
            return typed
        }
        let relationshipValues = self.relationships.map { relationship -> RelationshipValue in
            if let value = relationships[relationship.name] { return value }
            guard relationship.isToMany else { return .toOne(nil) }
            return !relationship.isOrdered && model.hasToOneInverse(relationship) ? .viaInverse : .toMany([])
        }
        return Record(entity: entityName, id: id, values: attributeValues, relationships: relationshipValues)
    }

    /// The value of the attribute `name` in `record` (a record of this layout).
    /// - Throws: `.usage` naming the entity when it has no such attribute.
    public func value(_ name: String, of record: Record) throws -> Value {
        guard let index = attributeIndex(name), index < record.values.count else {
            throw unknown(name, wanted: "attribute")
        }
        return record.values[index]
    }

    /// What `record` (a record of this layout) says about the relationship `name`.
    /// - Throws: `.usage` naming the entity when it has no such relationship.
    public func relationship(_ name: String, of record: Record) throws -> RelationshipValue {
        guard let index = relationshipIndex(name), index < record.relationships.count else {
            throw unknown(name, wanted: "relationship")
        }
        return record.relationships[index]
    }

    /// The values of `record` (a record of this layout) by attribute name, nil ones included.
    public func namedValues(of record: Record) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: zip(attributes.map(\.name), record.values))
    }

    private func unknown(_ name: String, wanted: String) -> DecantError {
        let isAttribute = wanted == "attribute"
        let isOther = isAttribute ? relationshipIndex(name) != nil : attributeIndex(name) != nil
        let known = (isAttribute ? attributes.map(\.name) : relationships.map(\.name)).joined(separator: ", ")
        let detail = isOther ? " (it is \(isAttribute ? "a relationship" : "an attribute"))" : ""
        return DecantError(
            .usage,
            "\(entityName) has no \(wanted) \(name)\(detail); its \(wanted)s: \(known.isEmpty ? "none" : known)",
            at: Location(path: "<memory>", entity: entityName, keyPath: name))
    }

    /// `value` as a value of an attribute of `type`, or nil when it is not one.
    static func typed(_ value: Value, for type: AttributeType) -> Value? {
        switch (type, value) {
        case (_, .null): return .null
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): return value
        case (.boolean, .bool): return value
        case (.double, .double), (.float, .double): return value
        case (.double, .integer(let integer)), (.float, .integer(let integer)): return .double(Double(integer))
        case (.decimal, .decimal): return value
        case (.decimal, .integer(let integer)): return .decimal(Decimal(integer))
        case (.decimal, .double): return value.converted(to: .decimal)
        case (.string, .string): return value
        case (.date, .date): return value
        case (.binary, .data), (.binary, .externalDataReference): return value
        case (.transformable, .transformable): return value
        case (.transformable, .data(let data)): return .transformable(data)
        case (.uuid, .uuid): return value
        case (.uri, .uri): return value
        case (.uri, .string(let text)): return .uri(text)
        case (.composite, .composite): return value
        default: return nil
        }
    }

    /// A value as a message names it: `the string "yes"`, `the integer 3`.
    static func describe(_ value: Value) -> String {
        switch value {
        case .null: "nil"
        case .integer(let integer): "the integer \(integer)"
        case .double(let real): "the double \(real)"
        case .decimal(let decimal): "the decimal \(decimal)"
        case .string(let text): "the string \"\(text)\""
        case .bool(let flag): "the Boolean \(flag)"
        case .date(let date): "the date \(date)"
        case .data(let data): "\(data.count) bytes of data"
        case .uuid(let uuid): "the UUID \(uuid.uuidString)"
        case .uri(let text): "the URI \(text)"
        case .transformable(let data): "\(data.count) bytes of a transformable value"
        case .externalDataReference(let name): "the external data reference \(name)"
        case .composite(let elements): "a composite value of \(elements.count) elements"
        }
    }
}

extension Record {
    /// A record of `entity` in `model` from values by property name (``RecordLayout/record(id:_:relationships:in:)``).
    ///
    /// ```swift
    /// let note = try Record(entity: "Note", id: .primaryKey(1), ["text": "milk", "pinned": true], in: model)
    /// ```
    /// - Throws: `.usage` naming the entity when the model has no such entity, and as the layout's builder does.
    public init(
        entity: String, id: RecordID, _ values: [String: Value], relationships: [String: RelationshipValue] = [:],
        in model: ObjectModel
    ) throws {
        guard let layout = RecordLayout(entity: entity, in: model) else {
            throw DecantError(
                .usage, "the model \(model.versionName ?? "(unnamed)") has no entity \(entity)",
                at: Location(path: "<memory>", entity: entity))
        }
        self = try layout.record(id: id, values, relationships: relationships, in: model)
    }
}

extension Value: ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral {
    /// Creates a Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates a double value.
    public init(floatLiteral value: Double) { self = .double(value) }
}
