public import DecantCore
public import Foundation

/// A SQLite store's persistent history (``PersistentHistory``) is surveyed for `decant plan` and carried into a
/// migrated SQLite store, whichever engine wrote it, as Core Data's lightweight migration keeps it.
extension SQLiteFormat: PersistentHistoryFormat {
    public func persistentHistory(ofStoreAt url: URL) throws -> PersistentHistorySurvey? {
        try PersistentHistory.survey(storeAt: url)
    }

    public func persistentHistoryNotes(_ survey: PersistentHistorySurvey, plan: MigrationPlan) -> [String] {
        PersistentHistory.notes(survey, plan: plan)
    }

    public func carryPersistentHistory(from store: URL, into output: URL, plan: MigrationPlan) throws -> [Diagnostic] {
        try PersistentHistory.carry(from: store, into: output, plan: plan)?.diagnostics ?? []
    }
}
