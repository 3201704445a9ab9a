public import Decant
public import Foundation

/// A Core Data store held in memory for a test target on Linux: loaded from a fixture file, or built from objects
/// written by property name; migrated to a model version with Decant's migration; asked for counts, fetches with an
/// NSPredicate and values by property name.
///
/// ```swift
/// import DecantTesting
/// import Testing
///
/// @Test func contentBecomesText() throws {
///     var store = try TestStore(model: URL(fileURLWithPath: "Notes.xcdatamodeld"), version: "Notes")
///     try store.insert("Note", ["content": "Buy milk"])
///     let migrated = try store.migrated(to: "Notes 3")
///     #expect(try migrated.count("Note", where: "text BEGINSWITH 'Buy'") == 1)
/// }
/// ```
///
/// Every operation that reads or writes files (``load(_:model:version:format:)``, ``migrated(to:mappings:functions:)``,
/// ``write(to:format:)``) throws Decant's ``DecantError`` with the file, entity and property concerned.
public struct TestStore: Sendable {
    /// The model versions the store may be migrated between.
    public let bundle: ModelBundle
    /// The objects, per concrete entity.
    public private(set) var contents: InMemoryStore
    /// What the migration that made this store did, when it was made by ``migrated(to:mappings:functions:)``.
    public private(set) var migrationReport: StoreMigration.Report?
    /// The model file the bundle was loaded from, when it was: ``migrated(to:mappings:functions:)`` then finds the
    /// Xcode mapping models of its project, as `decant migrate --model` does (and Core Data in an app's bundle).
    public private(set) var modelURL: URL?
    /// Whether ``migrated(to:mappings:functions:)`` searches ``modelURL``'s project for Xcode mapping models
    /// (`decant migrate`'s default; `--no-mapping-search` is false).
    public var searchesForMappings = true

    /// The model version the objects follow.
    public var model: ObjectModel { contents.model }

    /// An empty store of `version` of `bundle` (its current version by default).
    /// - Throws: `.usage` when the bundle has no such version.
    public init(bundle: ModelBundle, version: String? = nil) throws {
        self.bundle = bundle
        self.contents = InMemoryStore(model: try Self.version(version, of: bundle))
    }

    /// An empty store of `version` of the model at `model` (an `.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`, or
    /// a Core Data SQLite store whose model cache is taken), its current version by default.
    public init(model: URL, version: String? = nil) throws {
        try self.init(bundle: ModelBundle.load(modelOrStore: model), version: version)
        modelURL = model
    }

    /// A store holding every object of the fixture at `store`: any input Decant reads (a Core Data SQLite, XML or
    /// binary store, JSON, NDJSON, a CSV folder, a keyed archive), the format told by its content or `format`. A
    /// store's version is the one of `bundle` its hashes match; a model-less input (CSV, JSON) takes `version`.
    public static func load(_ store: URL, bundle: ModelBundle, version: String? = nil, format: String? = nil) throws
        -> TestStore
    {
        let registry = FormatRegistry.builtIn
        let input = try registry.inputFormat(of: store, named: format)
        var reader = try input.makeReader(at: store, options: FormatOptions(bundle: bundle, version: version))
        var writer = InMemoryStore.Writer(model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        return TestStore(bundle: bundle, contents: writer.store)
    }

    private init(bundle: ModelBundle, contents: InMemoryStore) {
        self.bundle = bundle
        self.contents = contents
    }

    /// The version `name` of `bundle`, its current version when nil.
    private static func version(_ name: String?, of bundle: ModelBundle) throws -> ObjectModel {
        let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
        guard let name else {
            guard let current = bundle.currentVersion else {
                throw DecantError(.usage, "the model \(bundle.name) has no current version; name one of: \(names)")
            }
            return current
        }
        guard let version = bundle.version(named: name) else {
            throw DecantError(.usage, "the model \(bundle.name) has no version \(name); its versions: \(names)")
        }
        return version
    }

    /// ``load(_:bundle:version:format:)`` with the model at `model`.
    public static func load(_ store: URL, model: URL, version: String? = nil, format: String? = nil) throws
        -> TestStore
    {
        var loaded = try load(store, bundle: ModelBundle.load(modelOrStore: model), version: version, format: format)
        loaded.modelURL = model
        return loaded
    }

    // MARK: Building

    /// Adds an object from values by property name and returns its reference, for other objects' relationships
    /// (``InMemoryStore/insert(_:id:_:relationships:)``): attributes left out take the model's defaults, the
    /// primary key is the next of the entity's inheritance tree.
    ///
    /// ```swift
    /// let home = try store.insert("Folder", ["name": "Home"])
    /// try store.insert("Note", ["text": "milk"], relationships: ["folder": .toOne(home)])
    /// ```
    /// - Throws: `.usage` naming the entity and the property for an unknown name or a value of the wrong type.
    @discardableResult
    public mutating func insert(
        _ entity: String, _ values: [String: Value], relationships: [String: RelationshipValue] = [:]
    ) throws -> ObjectReference {
        try contents.insert(entity, values, relationships: relationships)
    }

    // MARK: Migrating and writing

    /// The store migrated to `version` of the bundle (its current version by default), as `decant migrate` does:
    /// inferred where Core Data infers, with the mapping files or Xcode mapping models `mappings` names and those
    /// the search of ``modelURL``'s project finds (``searchesForMappings``), and `functions` for the hooks a mapping
    /// calls. ``migrationReport`` says what the migration did.
    ///
    /// The objects move in memory, through the record stream `decant migrate` runs (``RecordStreamEngine``), into a
    /// new in-memory store: no store file is written, and none is read but the mapping files and models. The report
    /// names `<memory>` as its output, and ``StoreMigration/Report/engine`` is the record stream.
    /// - Throws: `.planNotExecutable` with every problem of the plan; `.validationFailed` for an object that breaks
    ///   a rule of the destination version; the errors of the mapping files.
    public func migrated(
        to version: String? = nil, mappings: [URL] = [], functions: ValueExpressionFunctions = ValueExpressionFunctions()
    ) throws -> TestStore {
        var options = StoreMigration.Options(bundle: bundle, destinationVersion: version)
        options.modelURL = modelURL
        options.searchesForMappings = searchesForMappings && modelURL != nil
        options.functions = functions
        try options.loadMappings(from: mappings)
        let (objects, report) = try StoreMigration.migrate(contents, options: options)
        var migrated = TestStore(bundle: bundle, contents: objects)
        migrated.migrationReport = report
        migrated.modelURL = modelURL
        migrated.searchesForMappings = searchesForMappings
        return migrated
    }

    /// Writes every object to a new file at `url`, in `format` or the one its extension names (a Core Data SQLite
    /// store by default), as `decant convert` would.
    public func write(to url: URL, format: String? = nil) throws {
        let output = try FormatRegistry.builtIn.outputFormat(for: url, named: format, storeByDefault: true)
        var options = FormatOptions(bundle: bundle, version: model.versionName)
        options.missingExternalData = .keep
        var writer = try output.makeWriter(at: url, model: model, options: options)
        var reader = contents.makeReader()
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
    }

    // MARK: Asking

    /// The number of objects of `entity`, its sub-entities included (as a Core Data fetch counts them), that
    /// satisfy the NSPredicate `predicate` when one is given.
    public func count(_ entity: String, where predicate: String? = nil) throws -> Int {
        try fetch(entity, where: predicate).count
    }

    /// The objects of `entity`, its sub-entities included, that satisfy the NSPredicate `predicate` (every object
    /// when nil), entity by entity in model order and in insertion (or reading) order within one.
    ///
    /// Key paths name attributes and follow to-one relationships (`folder.name`); a to-one at the end compares
    /// with nil (`folder == nil`).
    /// - Throws: `.usage` naming the entity for an unknown entity, a key path it does not have, or a predicate that
    ///   does not parse.
    public func fetch(_ entity: String, where predicate: String? = nil) throws -> [TestObject] {
        guard let described = model.entity(named: entity) else { throw unknownEntity(entity) }
        let kinds = [described] + allSubentities(of: described)
        let candidates = kinds.flatMap { kind in objects(of: kind.name) }
        guard let predicate else { return candidates }
        let parsed = try ObjectPredicate(parsing: predicate, source: "predicate")
        for path in parsed.keyPaths { try checkKeyPath(path, from: described) }
        let matcher = ObjectPredicateMatcher(parsed)
        let index = Dictionary(allObjects().map { ($0.reference, $0) }) { first, _ in first }
        return candidates.filter { object in
            matcher.evaluate { path in Self.resolve(path, from: object, index: index) }
        }
    }

    /// The object `reference` names, or nil when the store has none.
    public func object(_ reference: ObjectReference) -> TestObject? {
        objects(of: reference.entity).first { $0.reference == reference }
    }

    /// The objects `object`'s relationship `name` holds: the destination of a to-one (none when nil), the members of
    /// a to-many, whichever side stores them.
    /// - Throws: `.usage` naming the entity when it has no such relationship.
    public func related(_ object: TestObject, _ name: String) throws -> [TestObject] {
        let layout = try contents.layout(of: object.entity)
        guard let index = layout.relationshipIndex(name) else {
            throw DecantError(
                .usage,
                "\(object.entity) has no relationship \(name); its relationships: "
                    + (layout.relationships.isEmpty ? "none" : layout.relationships.map(\.name).joined(separator: ", ")),
                at: Location(path: "<memory>", entity: object.entity, keyPath: name))
        }
        let relationship = layout.relationships[index]
        switch object.relationships[name] ?? .toOne(nil) {
        case .toOne(let reference): return reference.flatMap(self.object).map { [$0] } ?? []
        case .toMany(let references): return references.compactMap(self.object)
        case .viaInverse:
            guard let inverse = relationship.inverseName, let destination = relationship.destinationEntity,
                let destinationEntity = model.entity(named: destination)
            else { return [] }
            let kinds = [destinationEntity] + allSubentities(of: destinationEntity)
            return kinds.flatMap { objects(of: $0.name) }.filter { candidate in
                switch candidate.relationships[inverse] {
                case .toOne(let reference): reference == object.reference
                case .toMany(let references): references.contains(object.reference)
                default: false
                }
            }
        }
    }

    // MARK: Helpers

    private func objects(of entity: String) -> [TestObject] {
        guard let layout = try? contents.layout(of: entity) else { return [] }
        return contents.records(of: entity).map { TestObject(record: $0, layout: layout) }
    }

    private func allObjects() -> [TestObject] {
        model.entities.flatMap { objects(of: $0.name) }
    }

    private func allSubentities(of entity: Entity) -> [Entity] {
        model.subentities(of: entity).flatMap { [$0] + allSubentities(of: $0) }
    }

    private func unknownEntity(_ entity: String) -> DecantError {
        DecantError(
            .usage, "the model \(model.versionName ?? "(unnamed)") has no entity \(entity)",
            at: Location(path: "<memory>", entity: entity))
    }

    /// Refuses a key path that does not name an attribute (or a to-one at its end) through to-one relationships.
    private func checkKeyPath(_ path: [String], from entity: Entity) throws {
        var current = entity
        for (position, name) in path.enumerated() {
            let (attributes, relationships) = model.properties(of: current)
            let isLast = position == path.count - 1
            if isLast, attributes.contains(where: { $0.name == name }) { return }
            guard let relationship = relationships.first(where: { $0.name == name }) else {
                throw DecantError(
                    .usage,
                    "\(current.name) has no property \(name) (in the predicate's key path \(path.joined(separator: ".")))",
                    at: Location(path: "<memory>", entity: current.name, keyPath: path.joined(separator: ".")))
            }
            guard !relationship.isToMany else {
                throw DecantError(
                    .usage,
                    "\(current.name).\(name) is a to-many relationship; a predicate here follows to-one relationships only",
                    at: Location(path: "<memory>", entity: current.name, keyPath: path.joined(separator: ".")))
            }
            if isLast { return }
            guard let destination = relationship.destinationEntity.flatMap(model.entity(named:)) else { return }
            current = destination
        }
    }

    /// The value at `path` from `object`: attributes, through to-one relationships; nil where the path ends.
    private static func resolve(_ path: [String], from object: TestObject, index: [ObjectReference: TestObject]) -> Value {
        var current = object
        for (position, name) in path.enumerated() {
            if position == path.count - 1, let value = current.values[name] { return value }
            guard case .toOne(let reference) = current.relationships[name], let reference else { return .null }
            if position == path.count - 1 { return .string(reference.description) }
            guard let next = index[reference] else { return .null }
            current = next
        }
        return .null
    }
}

/// One object of a ``TestStore``, by property name.
///
/// ```swift
/// let note = try #require(try store.fetch("Note", where: "text == 'milk'").first)
/// #expect(note["text"] == "milk")
/// ```
public struct TestObject: Sendable, Hashable {
    /// The object's entity and identity.
    public let reference: ObjectReference
    /// Attribute values by name, nil ones included.
    public let values: [String: Value]
    /// Relationship values by name.
    public let relationships: [String: RelationshipValue]

    /// The object's concrete entity.
    public var entity: String { reference.entity }
    /// The object's identity in its store.
    public var id: RecordID { reference.id }

    /// The value of the attribute `name`; nil when the entity has no such attribute (a nil value is ``Value/null``).
    public subscript(name: String) -> Value? { values[name] }

    init(record: Record, layout: RecordLayout) {
        reference = record.reference
        values = layout.namedValues(of: record)
        relationships = Dictionary(uniqueKeysWithValues: zip(layout.relationships.map(\.name), record.relationships))
    }
}
