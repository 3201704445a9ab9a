extension InMemoryStore {
    /// Adds one object from values by property name (``RecordLayout/record(id:_:relationships:in:)``) and returns
    /// its reference, for other objects' relationships. Without an `id`, the object gets the next primary key of
    /// its entity's inheritance tree (one past the largest there, as Core Data numbers `Z_PK`).
    ///
    /// ```swift
    /// var store = InMemoryStore(model: notes)
    /// let home = try store.insert("Folder", ["name": "Home"])
    /// try store.insert("Note", ["text": "milk", "pinned": true], relationships: ["folder": .toOne(home)])
    /// ```
    ///
    /// For a handful of objects (tests, samples): finding the next key reads the tree's identities, and bulk
    /// paths insert ``RecordBatch``es.
    /// - Throws: `.usage` naming the entity and the property for an unknown entity or property name, or a value
    ///   that is not of its attribute's type.
    @discardableResult
    public mutating func insert(
        _ entity: String, id: RecordID? = nil, _ values: [String: Value],
        relationships: [String: RelationshipValue] = [:]
    ) throws -> ObjectReference {
        let layout = try layout(of: entity)
        let record = try layout.record(
            id: id ?? .primaryKey(nextPrimaryKey(of: entity)), values, relationships: relationships, in: model)
        try insert(record)
        return record.reference
    }

    /// One past the largest primary key among the objects of `entity`'s inheritance tree (1 when there is none).
    public func nextPrimaryKey(of entity: String) -> Int64 {
        guard let described = model.entity(named: entity) else { return 1 }
        let root = model.root(of: described).name
        var largest: Int64 = 0
        for member in model.entities where model.root(of: member).name == root {
            for batch in storedBatches(of: member.name) {
                for row in 0..<batch.count {
                    if case .primaryKey(let key) = batch.id(at: row) { largest = max(largest, key) }
                }
            }
        }
        return largest == .max ? largest : largest + 1
    }
}
