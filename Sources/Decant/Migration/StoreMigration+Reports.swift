import DecantCore
import DecantCodecs
import Foundation
import Logging

extension StoreMigration {
    /// What the mapping search (``Options/searchesForMappings``) did for a plan.
    public struct MappingSearchOutcome: Sendable, Hashable {
        /// The folder searched.
        public var root: String
        /// The mapping models found, sorted by path.
        public var found: [String]
        /// Those that serve a hop of the plan.
        public var used: [String]
        /// What the search noticed: mapping models of another bundle, ones a `--mapping` replaced, its bounds.
        public var notes: [String]
        /// Per mapping model of this bundle, the path its hops name (``MigrationPlan/Hop/file``) → the path found.
        var origins: [String: String]
    }

    /// What a migration did.
    public struct Report: Sendable, Hashable, Codable {
        /// What a migration did to the store.
        public enum Action: String, Sendable, Hashable, Codable, CustomStringConvertible {
            /// Migrated to the destination version.
            case migrated
            /// Already at the destination version, copied to the output.
            case copied
            /// Already at the destination version, in place: left alone.
            case unchanged

            public var description: String { rawValue }
        }

        /// `migrated`, `copied` (already at the destination version, copied to the output) or `unchanged` (already at
        /// the destination version, in place).
        public var action: Action
        /// The source version.
        public var sourceVersion: String
        /// The destination version.
        public var destinationVersion: String
        /// The hops run, `Notes → Notes 2`.
        public var hops: [String]
        /// Objects read per source entity.
        public var read: [String: Int]
        /// Objects written per destination entity.
        public var written: [String: Int]
        /// Per hop, per entity: read, written, rejected, removed, created.
        public var ledgers: [MigrationLedger]
        /// Objects rejected (listed in ``rejectsFile``).
        public var rejected: Int
        /// References to objects that do not exist, found in objects that were written (listed in ``rejectsFile``).
        public var dangling: Int
        /// The rejects file, when one was written.
        public var rejectsFile: String?
        /// The migrated store.
        public var output: String
        /// The backup of the original, for an in-place migration that kept one.
        public var backup: String?
        /// What the run noticed and let pass.
        public var warnings: [Diagnostic]
        /// How the objects moved: `sqlite` (as SQL inside SQLite, ``InStoreMigration``; another format's name for its
        /// own in-store engine), `stream` (through the record stream) or `none` (nothing to do).
        public var engine: MigrationEngineKind = .stream
        /// Why a migration into the store's own format (SQLite → SQLite) ran in the record stream rather than inside
        /// the store.
        public var streamReason: StreamReason?

        /// Objects rejected per destination entity, over every hop (from ``ledgers``).
        public var rejectedPerEntity: [String: Int] {
            var result: [String: Int] = [:]
            for ledger in ledgers {
                for (entity, row) in ledger.rows where row.rejected > 0 { result[entity, default: 0] += row.rejected }
            }
            return result
        }

        /// Whether the run found problems: objects rejected, or written holding references to objects that do not
        /// exist. Such a run still writes its output and its rejects file, and `decant migrate` exits 1.
        public var foundProblems: Bool { rejected > 0 || dangling > 0 }
        /// For Core Data's single step straight to the destination (``MigrationPlan/Path``): why hop by hop did not run.
        public var singleStepReason: String?
        /// When several versions have the store's entity hashes: which was taken, and why.
        public var sourceChoice: String?

        /// The report with what `plan` says about its path and source version.
        func noting(_ plan: MigrationPlan) -> Report {
            var report = self
            if case .singleStep(let reason) = plan.path { report.singleStepReason = reason }
            report.sourceChoice = plan.sourceChoice
            return report
        }
    }

    /// The plan for `store`, and what a dry run found: per entity and rule, the objects that would be rejected.
    public struct PlanReport: Sendable, Hashable {
        /// The plan.
        public var plan: MigrationPlan
        /// The input's format.
        public var inputFormat: String
        /// Rejects a dry run found, per `Entity.property rule`; nil when the plan cannot run (no dry run).
        public var preflight: [String: Int]?
        /// Objects per source entity, from the dry run.
        public var objects: [String: Int]
        /// How `migrate` would move the objects into an output in the store's format: `sqlite` (inside SQLite,
        /// ``InStoreMigration``; another format's name for its own in-store engine) or `stream`; nil when the plan
        /// cannot run or the store is up to date.
        public var engine: MigrationEngineKind?
        /// Why `migrate` would use the record stream, for a store whose format migrates inside itself (SQLite).
        public var streamReason: StreamReason?
        /// What the mapping search found and used; nil when it was off.
        public var mappingSearch: MappingSearchOutcome?
    }
}
