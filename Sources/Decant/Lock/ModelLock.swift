public import Foundation

/// A lock against model drift: per version of a model bundle, its identifiers, its entities' version hashes and its
/// checksum, as `decant lock MODEL` writes them to a file kept in git. A shipped version edited by mistake changes
/// its hashes, and every user's store of that version stops opening (Core Data error 134130); ``check(_:)`` finds it.
///
/// ```swift
/// let lock = ModelLock(bundle: try ModelBundle.load(from: url))
/// try lock.write(to: lockURL)
/// let findings = try ModelLock.read(from: lockURL).check(ModelLock(bundle: edited))
/// ```
public struct ModelLock: Codable, Sendable, Hashable {
    /// One locked version.
    public struct Version: Codable, Sendable, Hashable {
        public var name: String
        /// `userDefinedModelVersionIdentifier`s.
        public var identifiers: [String]
        /// Each entity's version hash (base64).
        public var entityHashes: [String: String]
        /// Each entity's properties' version hashes (base64), by entity then property name: which property an edit
        /// changed. Absent from older lock files, whose checks name the entity only.
        public var propertyHashes: [String: [String: String]]?
        /// The model checksum (base64 SHA-256, as `inspect` prints it).
        public var checksum: String
    }

    /// A locked version whose hashes are not what the lock says.
    public struct Change: Codable, Sendable, Hashable {
        public var version: String
        /// Entities whose version hash changed.
        public var changedEntities: [String]
        /// For each changed entity the lock has property hashes of: its properties whose hash changed, that it no
        /// longer has and that it has anew (all empty when the entity's own settings changed: its parent, abstract
        /// flag or version hash modifier).
        public var changedProperties: [String: PropertyChanges] = [:]
        /// Entities the lock has and the version no longer does.
        public var removedEntities: [String]
        /// Entities the version has and the lock does not.
        public var addedEntities: [String]
    }

    /// The properties of one entity whose hashes are not what the lock says.
    public struct PropertyChanges: Codable, Sendable, Hashable {
        public var changed: [String] = []
        public var removed: [String] = []
        public var added: [String] = []

        public init(changed: [String] = [], removed: [String] = [], added: [String] = []) {
            self.changed = changed
            self.removed = removed
            self.added = added
        }
    }

    /// What `decant lock --json` prints: the lock file, the model and its locked versions, and with `--check` what
    /// the check found.
    public struct Document: Codable, Sendable, Hashable {
        /// The lock file, as the command shows it.
        public var lockFile: String
        /// The bundle's name.
        public var model: String
        /// The versions the lock file holds (written, or read for the check).
        public var versions: [String]
        /// What the check found (absent when the lock was written).
        public var check: Findings?

        public init(lockFile: String, lock: ModelLock, check: Findings? = nil) {
            self.lockFile = lockFile
            model = lock.model
            versions = lock.versions.map(\.name)
            self.check = check
        }
    }

    /// What ``check(_:)`` found.
    public struct Findings: Codable, Sendable, Hashable {
        /// Locked versions whose entity hashes changed (a problem).
        public var changed: [Change] = []
        /// Locked versions the model no longer has (a problem).
        public var removed: [String] = []
        /// Versions the lock does not have yet (a warning: lock them once they ship).
        public var unlocked: [String] = []

        /// Whether anything besides new versions was found.
        public var hasProblems: Bool { !changed.isEmpty || !removed.isEmpty }
    }

    /// The Decant version that wrote the lock.
    public var decant: String
    /// The bundle's name.
    public var model: String
    /// The versions, in the bundle's order.
    public var versions: [Version]

    /// Locks every version of `bundle`.
    public init(bundle: ModelBundle) {
        decant = decantVersion
        model = bundle.name
        versions = bundle.versions.map { version in
            let hashes = version.entityVersionHashes
            return Version(
                name: version.versionName ?? bundle.name, identifiers: version.versionIdentifiers,
                entityHashes: hashes.mapValues { $0.base64EncodedString() },
                propertyHashes: Dictionary(
                    uniqueKeysWithValues: hashes.keys.map { entity in
                        (entity, version.propertyVersionHashes(of: entity).mapValues { $0.base64EncodedString() })
                    }),
                checksum: ObjectModel.versionChecksum(of: hashes))
        }
    }

    /// The default lock file of the model at `model`: `NAME.decant-lock.json` beside it (`Notes.decant-lock.json`
    /// for `Notes.xcdatamodeld`), outside the bundle so Xcode never copies it into the app.
    public static func defaultURL(for model: URL) -> URL {
        let name = model.deletingPathExtension().lastPathComponent
        return model.deletingLastPathComponent().appendingPathComponent("\(name).decant-lock.json")
    }

    /// Reads a lock file.
    /// - Throws: `.fileNotFound` when it is missing, `.ioError` when it cannot be read, `.malformedInput` when it is
    ///   not a lock file.
    public static func read(from url: URL) throws -> ModelLock {
        let location = Location(path: url.displayPath)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw DecantError(.fileNotFound, "no lock file here (write one with decant lock MODEL)", at: location)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw DecantError(.ioError, "cannot read the lock file", at: location, underlyingError: error)
        }
        do {
            return try JSONDecoder().decode(ModelLock.self, from: data)
        } catch {
            throw DecantError(.malformedInput, "not a Decant lock file", at: location, underlyingError: error)
        }
    }

    /// Writes the lock as pretty-printed JSON with sorted keys (stable diffs), beside `url` then renamed into place.
    /// - Throws: `.cannotCreateOutput` when it cannot be written (nothing is left behind).
    public func write(to url: URL) throws {
        var data = try jsonDocument()
        data.append(0x0A)
        try DestinationLease(destination: url).write(data, what: "lock file")
    }

    /// Compares `current` (the model as it is now) with this lock.
    public func check(_ current: ModelLock) -> Findings {
        var findings = Findings()
        let now = Dictionary(current.versions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let locked = Set(versions.map(\.name))
        for version in versions {
            guard let present = now[version.name] else {
                findings.removed.append(version.name)
                continue
            }
            guard present.entityHashes != version.entityHashes else { continue }
            let old = version.entityHashes
            let new = present.entityHashes
            var change = Change(
                version: version.name,
                changedEntities: old.keys.filter { new[$0] != nil && new[$0] != old[$0] }.sorted(),
                removedEntities: old.keys.filter { new[$0] == nil }.sorted(),
                addedEntities: new.keys.filter { old[$0] == nil }.sorted())
            for entity in change.changedEntities {
                guard let before = version.propertyHashes?[entity], let after = present.propertyHashes?[entity] else {
                    continue
                }
                change.changedProperties[entity] = PropertyChanges(
                    changed: before.keys.filter { after[$0] != nil && after[$0] != before[$0] }.sorted(),
                    removed: before.keys.filter { after[$0] == nil }.sorted(),
                    added: after.keys.filter { before[$0] == nil }.sorted())
            }
            findings.changed.append(change)
        }
        findings.unlocked = current.versions.map(\.name).filter { !locked.contains($0) }
        return findings
    }
}

extension ModelLock.Findings {
    /// One line per finding: `changed:`, `removed:` and `not locked:` (the last a warning).
    public var lines: [String] {
        var lines: [String] = []
        for change in changed {
            var parts: [String] = []
            if !change.changedEntities.isEmpty {
                let entities = change.changedEntities.map { entity in
                    change.changedProperties[entity].map { "\(entity) (\($0.description))" } ?? entity
                }
                parts.append("hash of \(entities.joined(separator: ", "))")
            }
            if !change.removedEntities.isEmpty { parts.append("removed \(change.removedEntities.joined(separator: ", "))") }
            if !change.addedEntities.isEmpty { parts.append("added \(change.addedEntities.joined(separator: ", "))") }
            lines.append(
                "changed: version \(change.version) (\(parts.joined(separator: "; "))): stores of it would no longer open")
        }
        for name in removed { lines.append("removed: version \(name) is locked but no longer in the model") }
        for name in unlocked { lines.append("warning: version \(name) is not locked yet (run decant lock once it ships)") }
        return lines
    }
}

extension ModelLock.PropertyChanges: CustomStringConvertible {
    /// `title changed, body added, old removed`, or what changed when no property did.
    public var description: String {
        let parts =
            changed.map { "\($0) changed" } + added.map { "\($0) added" } + removed.map { "\($0) removed" }
        return parts.isEmpty ? "no property: its parent, abstract flag or version hash modifier" : parts.joined(separator: ", ")
    }
}
