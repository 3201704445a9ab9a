extension InMemoryStore {
    /// Collects the batches a pipeline writes into an ``InMemoryStore``.
    ///
    /// ```swift
    /// var writer = InMemoryStore.Writer(model: reader.model)
    /// _ = try RecordTransfer.copy(from: &reader, to: &writer)
    /// print(writer.store.counts)
    /// ```
    /// ``abandon()`` empties the store, so a failed copy leaves nothing half-filled.
    public struct Writer: RecordWriter, Sendable {
        /// What was written so far; complete after ``finish()``.
        public private(set) var store: InMemoryStore
        private var isOpen = true

        /// Starts an empty store for `model`.
        public init(model: ObjectModel) {
            self.store = InMemoryStore(model: model)
        }

        /// Adds the batch's records to the store, kept as they are.
        /// - Throws: `.usage` after ``finish()`` or ``abandon()``, or for a batch whose layout the model does not
        ///   give.
        public mutating func write(_ batch: RecordBatch) throws {
            guard isOpen else {
                throw DecantError(.usage, "the in-memory writer is already closed", at: Location(path: "<memory>"))
            }
            try store.insert(batch)
        }

        public mutating func finish() throws {
            isOpen = false
        }

        /// Empties the store. Does nothing after ``finish()``.
        public mutating func abandon() {
            guard isOpen else { return }
            isOpen = false
            store.removeAll()
        }
    }
}
