extension InMemoryStore {
    /// Yields the objects of an ``InMemoryStore`` entity by entity, in model order, as they were inserted.
    ///
    /// The reader works on a copy of the store taken when it was made: later inserts are not seen.
    /// ```swift
    /// var reader = store.makeReader()
    /// var batch = RecordBatch(layout: try store.layout(of: "Note"))
    /// while try reader.nextBatch(into: &batch) { print(batch.layout.entityName, batch.count) }
    /// ```
    public struct Reader: RecordReader, Sendable {
        /// The store's model.
        public var model: ObjectModel { store.model }
        /// At most this many records per batch (an inserted batch larger than this is split).
        public let batchSize: Int

        private let store: InMemoryStore
        private var entityIndex = 0
        private var batchIndex = 0
        private var rowIndex = 0

        /// Creates a reader of `store`.
        public init(store: InMemoryStore, batchSize: Int = 1024) {
            self.store = store
            self.batchSize = max(1, batchSize)
        }

        public mutating func nextBatch(into batch: inout RecordBatch) throws -> Bool {
            let entities = store.model.entities
            while entityIndex < entities.count {
                let stored = store.storedBatches(of: entities[entityIndex].name)
                guard batchIndex < stored.count else {
                    entityIndex += 1
                    batchIndex = 0
                    rowIndex = 0
                    continue
                }
                let source = stored[batchIndex]
                if rowIndex == 0 && source.count <= batchSize {
                    batch = source
                    batchIndex += 1
                    return true
                }
                // A large batch goes out in slices of batchSize records.
                batch.removeAll(newLayout: source.layout)
                let end = min(source.count, rowIndex + batchSize)
                for row in rowIndex..<end { batch.appendRow(row, of: source) }
                rowIndex = end
                if rowIndex >= source.count {
                    batchIndex += 1
                    rowIndex = 0
                }
                return true
            }
            return false
        }
    }
}
