public import Foundation

/// What a store's persistent history holds (``PersistentHistoryFormat/persistentHistory(ofStoreAt:)``): its
/// transactions, their changes and strings (authors, bundle and context names), and the changes per entity.
public struct PersistentHistorySurvey: Sendable, Hashable {
    /// Where the store keeps it, as messages name it (a SQLite store's `ATRANSACTION`, `ACHANGE`,
    /// `ATRANSACTIONSTRING`).
    public var tables: [String]
    /// Transactions.
    public var transactions: Int
    /// Changes.
    public var changes: Int
    /// Strings the transactions refer to.
    public var strings: Int
    /// Changes per entity name (an entity the store does not name as the format writes it, e.g. `#<number>`).
    public var changesPerEntity: [String: Int]

    /// A survey of these counts.
    public init(tables: [String], transactions: Int, changes: Int, strings: Int, changesPerEntity: [String: Int]) {
        self.tables = tables
        self.transactions = transactions
        self.changes = changes
        self.strings = strings
        self.changesPerEntity = changesPerEntity
    }

    /// The warning for a run that writes the data of `store` into a `format` output without this history (a
    /// conversion, a seeding, a migration into another format): the history is not carried.
    public func notCarried(from store: URL, into format: String) -> Diagnostic {
        Diagnostic(
            .persistentHistory,
            "persistent history (\(tables.joined(separator: ", ")): \(transactions) transactions, \(changes) changes) "
                + "is not carried into the \(format) output: the data is, its history is not",
            at: Location(path: store.displayPath))
    }
}

extension Diagnostic.Kind {
    /// Persistent history (a SQLite store's `ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`) that a run does not carry
    /// into its output.
    public static let persistentHistory = Diagnostic.Kind(rawValue: "persistent-history")
}
