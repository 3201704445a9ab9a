public import Foundation

/// A format whose stores keep a persistent history (Core Data's `NSPersistentHistoryTransaction`s and their changes,
/// which a SQLite store keeps in `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`), and that carries it through a
/// migration into a new store of its own, as Core Data's lightweight migration keeps it.
///
/// A migration or conversion of one of its stores asks it what the history holds (``persistentHistory(ofStoreAt:)``)
/// and, for `decant plan`, what a plan keeps of it (``persistentHistoryNotes(_:plan:)``); a migration into a new store
/// of the same format has it carry the history (``carryPersistentHistory(from:into:plan:)``), and a run into another
/// format says the history is not carried. Adding a format that keeps a history takes no change to the migration
/// (as ``InStoreMigratingFormat`` adds an in-store engine).
///
/// ```swift
/// if let format = source as? any PersistentHistoryFormat {
///     plan.notes += try format.persistentHistoryNotes(ofStoreAt: store, plan: plan)
///     warnings += try format.carryPersistentHistory(from: store, into: staging, writtenBy: sink, plan: plan)
/// }
/// ```
public protocol PersistentHistoryFormat: RecordFormat {
    /// What the history of the store at `url` holds; nil when it keeps none.
    /// - Throws: `.malformedInput` when the history is there but not readable as this format keeps one.
    func persistentHistory(ofStoreAt url: URL) throws -> PersistentHistorySurvey?

    /// What `plan` keeps of a history `survey` describes, in words for `decant plan`: what a new store of this format
    /// keeps, the changes of entities whose objects lose their identity (``MigrationPlan/lineages``), and that a run
    /// into another format carries none of it.
    func persistentHistoryNotes(_ survey: PersistentHistorySurvey, plan: MigrationPlan) -> [String]

    /// Carries the history of the store at `store` into `output`, a finished, not yet published store of this format
    /// that `plan` migrated it into, each change naming the entity its object became. Nothing is done when the store
    /// keeps no history.
    /// - Returns: a warning for each part not kept (never dropped silently).
    /// - Throws: `.malformedInput` for a history that is not readable; `.ioError` when the disk fails.
    func carryPersistentHistory(from store: URL, into output: URL, plan: MigrationPlan) throws -> [Diagnostic]
}

extension PersistentHistoryFormat {
    /// What `plan` keeps of the history of the store at `url` (``persistentHistoryNotes(_:plan:)``); none when it keeps
    /// no history.
    public func persistentHistoryNotes(ofStoreAt url: URL, plan: MigrationPlan) throws -> [String] {
        guard let survey = try persistentHistory(ofStoreAt: url) else { return [] }
        return persistentHistoryNotes(survey, plan: plan)
    }

    /// What becomes of the history of the store at `store` when a migration by `plan` writes its data into `output`
    /// with `sink`: carried when `sink` is this format (``carryPersistentHistory(from:into:plan:)``), else not, and
    /// said so. Returns the warnings for what is not kept.
    public func carryPersistentHistory(
        from store: URL, into output: URL, writtenBy sink: any RecordFormat, plan: MigrationPlan
    ) throws -> [Diagnostic] {
        if sink.name == name { return try carryPersistentHistory(from: store, into: output, plan: plan) }
        return try persistentHistoryNotCarried(from: store, into: sink).map { [$0] } ?? []
    }

    /// The warning for a run that writes the data of the store at `store` into a `sink` output without its history
    /// (a conversion, a migration into another format): nil when the store keeps none.
    public func persistentHistoryNotCarried(from store: URL, into sink: any RecordFormat) throws -> Diagnostic? {
        try persistentHistory(ofStoreAt: store)?.notCarried(from: store, into: sink.name)
    }
}
