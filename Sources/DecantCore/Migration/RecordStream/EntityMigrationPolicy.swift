import Foundation

/// Decant's counterpart of `NSEntityMigrationPolicy`: app code that makes the destination objects of one entity
/// mapping, registered under the class name the mapping model names (``ValueExpressionFunctions/registerPolicy(_:as:)``).
///
/// The policy is called once per source object, in the stream: it reads the source object through the manager,
/// lets the mapping make its usual object (Core Data's `super`), changes it, and may create more objects of any
/// destination entity, linked to each other and to other mapped objects.
///
/// ```swift
/// struct MakerPolicy: EntityMigrationPolicy {
///     func createDestinationInstances(forSource source: ObjectReference, in mapping: EntityMapping,
///                                     manager: MigrationManager) throws {
///         let car = try manager.createDefaultDestinationInstance()
///         guard let name = try manager.sourceValue("maker").text else { return }
///         let maker = manager.findOrInsertObject(entity: "Maker", key: name)
///         if maker.isNew { maker["name"] = .string(name) }
///         car.setRelationship("createdBy", to: [maker.reference])
///     }
/// }
/// var functions = ValueExpressionFunctions()
/// functions.registerPolicy(MakerPolicy(), as: "MyApp.V2to3MakerPolicy")
/// ```
public protocol EntityMigrationPolicy: Sendable {
    /// Makes the destination objects for one source object. The default makes the one the mapping describes.
    func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws

    /// Answers `FUNCTION($entityPolicy, "selector", …)` in the mapping's expressions.
    func perform(_ selector: String, arguments: [Value]) throws -> Value
}

extension EntityMigrationPolicy {
    public func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        _ = try manager.createDefaultDestinationInstance()
    }

    public func perform(_ selector: String, arguments: [Value]) throws -> Value {
        throw DecantError(.planNotExecutable, "the policy \(Self.self) does not answer \(selector)")
    }
}

/// A destination object a policy creates or changes: its values by property name.
///
/// ```swift
/// let paragraph = manager.insertObject(entity: "Paragraph")
/// paragraph["body"] = try manager.sourceValue("text")
/// paragraph.setRelationship("note", to: [note.reference])
/// ```
public final class DestinationObject {
    /// The destination entity.
    public let entity: String
    /// Its identity in the destination; other objects link to it by this.
    public let reference: ObjectReference
    /// False when ``MigrationManager/findOrInsertObject(entity:key:)`` found an object made earlier: that one is
    /// written already, so changes to it are ignored (link to it from the other side).
    public let isNew: Bool
    var values: [String: Value] = [:]
    var links: [String: [ObjectReference]] = [:]

    init(entity: String, reference: ObjectReference, isNew: Bool) {
        self.entity = entity
        self.reference = reference
        self.isNew = isNew
    }

    /// An attribute's value (nil until set).
    public subscript(attribute: String) -> Value {
        get { values[attribute] ?? .null }
        set { values[attribute] = newValue }
    }

    /// Sets a relationship's members (one at most for a to-one).
    public func setRelationship(_ name: String, to objects: [ObjectReference]) { links[name] = objects }

    /// A relationship's members as set so far.
    public func relationship(_ name: String) -> [ObjectReference] { links[name] ?? [] }
}

/// What a policy works with for one source object: its values, the mapping's own object, new objects, and the
/// objects other mappings make (Core Data's `NSMigrationManager`).
public final class MigrationManager {
    /// The source object.
    public let source: ObjectReference
    /// The entity mapping being run.
    public let mappingName: String
    private let read: ([String]) throws -> KeyPathResult
    private let makeDefault: () throws -> DestinationObject
    private let lookUp: (String, ObjectReference) -> ObjectReference?
    private let keys: KeyRegistry
    private let defaults: (String) -> [String: Value]
    private var counter = 0
    /// The objects made for this source object, in order.
    private(set) var created: [DestinationObject] = []
    private var defaultObject: DestinationObject?

    init(
        source: ObjectReference,
        mappingName: String,
        read: @escaping ([String]) throws -> KeyPathResult,
        makeDefault: @escaping () throws -> DestinationObject,
        lookUp: @escaping (String, ObjectReference) -> ObjectReference?,
        keys: KeyRegistry,
        defaults: @escaping (String) -> [String: Value]
    ) {
        self.source = source
        self.mappingName = mappingName
        self.read = read
        self.makeDefault = makeDefault
        self.lookUp = lookUp
        self.keys = keys
        self.defaults = defaults
    }

    /// The source object's value at `keyPath` (`text`, `folder.name`, `notes.@count`).
    /// - Throws: `.malformedInput` when the key path is not a value of the source entity.
    public func sourceValue(_ keyPath: String) throws -> Value {
        switch try read(keyPath.split(separator: ".").map(String.init)) {
        case .value(let value): return value
        case .values(let values) where values.count <= 1: return values.first ?? .null
        default: throw DecantError(.malformedInput, "\(keyPath) of \(source) is not one value")
        }
    }

    /// The source objects `keyPath` reaches (`folder`, `notes`, `countries.@distinctUnionOfSets.moods`).
    public func sourceObjects(_ keyPath: String) throws -> [ObjectReference] {
        switch try read(keyPath.split(separator: ".").map(String.init)) {
        case .objects(let objects, _): return objects
        case .value(.null): return []
        default: throw DecantError(.malformedInput, "\(keyPath) of \(source) does not reach objects")
        }
    }

    /// The object the entity mapping makes from this source object with its own expressions (`super` in Core Data);
    /// made once, the same object on later calls.
    public func createDefaultDestinationInstance() throws -> DestinationObject {
        if let defaultObject { return defaultObject }
        let object = try makeDefault()
        defaultObject = object
        created.append(object)
        return object
    }

    /// A new object of `entity`, its attributes at the model's default values (as `NSEntityDescription.insertNewObject`).
    public func insertObject(entity: String) -> DestinationObject {
        counter += 1
        let object = DestinationObject(
            entity: entity,
            reference: ObjectReference(entity: entity, id: .external("\(mappingName):\(source.id):\(entity)#\(counter)")),
            isNew: true
        )
        object.values = defaults(entity)
        created.append(object)
        return object
    }

    /// The one object of `entity` for `key` in this hop: new the first time (``DestinationObject/isNew``), the same
    /// reference afterwards, for every source object that asks; a new one starts at the model's default values. Keys are kept for the hop (one string each).
    public func findOrInsertObject(entity: String, key: String) -> DestinationObject {
        let identity = "\(entity)#\(key)"
        let isNew = keys.insert(identity)
        let object = DestinationObject(
            entity: entity, reference: ObjectReference(entity: entity, id: .external(identity)), isNew: isNew)
        if isNew {
            object.values = defaults(entity)
            created.append(object)
        }
        return object
    }

    /// The object `sourceInstance` became under the entity mapping `name` (Core Data's
    /// `destinationInstances(forEntityMappingName:sourceInstances:)`); nil when the mapping does not exist or the
    /// object was removed.
    public func destinationInstance(forEntityMappingNamed name: String, sourceInstance: ObjectReference)
        -> ObjectReference?
    {
        lookUp(name, sourceInstance)
    }
}

@available(*, unavailable)
extension DestinationObject: Sendable {}

@available(*, unavailable)
extension MigrationManager: Sendable {}

/// The keys ``MigrationManager/findOrInsertObject(entity:key:)`` has seen in a hop.
final class KeyRegistry {
    private var seen: Set<String> = []
    func insert(_ key: String) -> Bool { seen.insert(key).inserted }
}
