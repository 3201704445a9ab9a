extension MigrationPlan {
    /// A plan of one inferred hop from `model` to itself: every object copied as it is, with its key. A conversion
    /// between two stores of one format asks that format's in-store engine (``InStoreMigratingFormat``) to run it,
    /// as Core Data's `migratePersistentStore` copies a store; nil when inference finds a problem in it (it finds
    /// none in a model mapped to itself), so the caller copies through the record stream.
    ///
    /// ```swift
    /// if let plan = MigrationPlan.copying(reader.model) { … }
    /// ```
    package static func copying(_ model: ObjectModel) -> MigrationPlan? {
        let inferred = MappingInference.infer(from: model, to: model)
        guard inferred.problems.isEmpty else { return nil }
        let hop = Hop(source: model, destination: model, mapping: inferred.mapping, file: nil, problems: [])
        return MigrationPlan(copying: model, hop: hop)
    }

    private init(copying model: ObjectModel, hop: Hop) {
        self.source = model
        self.destination = model
        self.hops = [hop]
    }
}
