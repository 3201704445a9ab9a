/// What one hop did to each entity's objects. Rows are named by destination entity (objects mapped there, from the
/// entity's first source mapping) or by source entity (objects of a removed entity).
///
/// ```swift
/// for (entity, row) in ledger.rows { print(entity, row.read, row.written) }
/// ```
public struct MigrationLedger: Sendable, Hashable, Codable {
    /// One entity's counts: read + created = written + rejected + removed.
    public struct Row: Sendable, Hashable, Codable {
        /// Source objects read for this entity.
        public var read = 0
        /// Objects written.
        public var written = 0
        /// Objects refused by a rule.
        public var rejected = 0
        /// Source objects dropped by the mapping (removed entity, `where` filter).
        public var removed = 0
        /// Objects created beyond one per source object (a second mapping of the same source).
        public var created = 0

        /// Creates a row.
        public init(read: Int = 0, written: Int = 0, rejected: Int = 0, removed: Int = 0, created: Int = 0) {
            self.read = read
            self.written = written
            self.rejected = rejected
            self.removed = removed
            self.created = created
        }

        /// Whether the numbers add up.
        public var isReconciled: Bool { read + created == written + rejected + removed }
    }

    /// The hop, `Notes → Notes 2`.
    public var hop: String
    /// Counts per entity.
    public var rows: [String: Row] = [:]

    /// An empty ledger for `hop`.
    public init(hop: String) { self.hop = hop }

    /// Whether every row adds up.
    public var isReconciled: Bool { rows.values.allSatisfy(\.isReconciled) }
}
