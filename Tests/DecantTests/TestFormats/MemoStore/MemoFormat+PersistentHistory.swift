import Decant
import Foundation

/// A memo store keeps its history beside it, in `NAME.memo-history`: one change a line,
/// `<transaction> <entity> <key> <insert|update|delete>`. Adopting ``PersistentHistoryFormat`` (and declaring the
/// companion file) is all it takes for `plan` to say what a migration keeps of it, `migrate` to carry it into a new
/// memo store through whichever engine runs, and a run into another format to say it is not carried: nothing in
/// ``StoreMigration`` or ``StoreConversion`` names the memo format.
extension MemoFormat: PersistentHistoryFormat {
    /// The history file's suffix.
    static let historySuffix = "-history"

    /// One change of the history.
    struct Change: Hashable {
        var transaction: String
        var entity: String
        var key: String
        var kind: String

        var line: String { [transaction, entity, key, kind].joined(separator: " ") }
    }

    /// The store file and its history beside it.
    func files(at url: URL) -> StoreFileSet { StoreFileSet(main: url, companionSuffixes: [Self.historySuffix]) }

    /// The changes of the history beside the store at `url`; nil when it has none.
    /// - Throws: `.malformedInput` located at the line that is not a change.
    static func changes(ofStoreAt url: URL) throws -> [Change]? {
        let file = URL(fileURLWithPath: url.path + historySuffix)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let text = try String(contentsOf: file, encoding: .utf8)
        return try text.split(separator: "\n", omittingEmptySubsequences: true).enumerated().map { index, line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, ["insert", "update", "delete"].contains(fields[3]) else {
                throw DecantError(
                    .malformedInput, "expected `<transaction> <entity> <key> <insert|update|delete>`, found `\(line)`",
                    at: Location(path: file.displayPath, line: index + 1))
            }
            return Change(transaction: fields[0], entity: fields[1], key: fields[2], kind: fields[3])
        }
    }

    func persistentHistory(ofStoreAt url: URL) throws -> PersistentHistorySurvey? {
        guard let changes = try Self.changes(ofStoreAt: url) else { return nil }
        return PersistentHistorySurvey(
            tables: [url.lastPathComponent + Self.historySuffix], transactions: Set(changes.map(\.transaction)).count,
            changes: changes.count, strings: 0,
            changesPerEntity: Dictionary(grouping: changes, by: \.entity).mapValues(\.count))
    }

    func persistentHistoryNotes(_ survey: PersistentHistorySurvey, plan: MigrationPlan) -> [String] {
        let lineages = plan.lineages
        return ["memo history: \(survey.changes) changes, kept in a memo output"]
            + survey.changesPerEntity.keys.sorted().compactMap { entity in
                guard case .lost(let reason)? = lineages[entity] else { return nil }
                return "memo history: the changes of \(entity) are not kept: \(reason)"
            }
    }

    func carryPersistentHistory(from store: URL, into output: URL, plan: MigrationPlan) throws -> [Diagnostic] {
        guard let changes = try Self.changes(ofStoreAt: store) else { return [] }
        let lineages = plan.lineages
        var kept: [String] = []
        var dropped: [String: (count: Int, reason: String)] = [:]
        for var change in changes {
            switch lineages[change.entity] {
            case .kept(let target)?:
                change.entity = target
                kept.append(change.line)
            case .lost(let reason)?:
                dropped[change.entity, default: (0, reason)].count += 1
            case nil:
                dropped[change.entity, default: (0, "not an entity of \(plan.sourceVersion)")].count += 1
            }
        }
        try Data(kept.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: output.path + Self.historySuffix))
        return dropped.keys.sorted().map { entity in
            Diagnostic(
                .persistentHistory,
                "memo history: the \(dropped[entity]?.count ?? 0) changes of \(entity) are not kept: "
                    + (dropped[entity]?.reason ?? ""),
                at: Location(path: store.displayPath, entity: entity))
        }
    }
}
