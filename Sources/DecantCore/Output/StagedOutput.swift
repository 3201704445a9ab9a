public import Foundation

/// An output built under a temporary name beside its destination and renamed into place only when complete,
/// so a failed run leaves the destination exactly as it was.
///
/// ```swift
/// let staged = StagedOutput(destination: url)
/// try build(at: staged.temporary)          // on error: staged.discard()
/// try staged.commit()
/// ```
public struct StagedOutput: Sendable, Hashable {
    /// Where the finished output goes.
    public let destination: URL
    /// Where it is built: a hidden name in the destination's folder (same file system, so the rename is atomic).
    public let temporary: URL

    /// The suffixes of the files SQLite keeps beside a database; they belong to the database's content.
    public static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Stages an output for `destination`.
    public init(destination: URL) {
        self.destination = destination
        self.temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).decant-\(UUID().uuidString)")
    }

    /// Checks, before any work, that an output can be created at `destination`: its folder exists and is a folder
    /// this process may write in, and (unless `mayBeFolder`, for outputs that are folders, as CSV's) `destination`
    /// is not itself a folder. Reading a whole store only to fail at the rename is what this prevents.
    /// - Throws: `.cannotCreateOutput` naming the output as `displayPath` (default: as the user typed it).
    public static func checkCanCreate(_ destination: URL, mayBeFolder: Bool = false, displayPath: String? = nil) throws {
        let shown = Location(path: displayPath ?? destination.displayPath)
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if !mayBeFolder, manager.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw DecantError(.cannotCreateOutput, "the output is a folder; name a file in it", at: shown)
        }
        let folder = destination.deletingLastPathComponent()
        guard manager.fileExists(atPath: folder.path, isDirectory: &isDirectory) else {
            throw DecantError(.cannotCreateOutput, "the output's folder does not exist (\(folder.displayPath))", at: shown)
        }
        guard isDirectory.boolValue else {
            throw DecantError(.cannotCreateOutput, "the output's folder is not a folder (\(folder.displayPath))", at: shown)
        }
        guard access(folder.path, W_OK | X_OK) == 0 else {
            throw DecantError(
                .cannotCreateOutput, "no permission to create files in the output's folder (\(folder.displayPath))",
                at: shown)
        }
    }

    /// Removes the temporary output and its companion files; the destination is untouched.
    public func discard() {
        Self.remove(temporary)
    }

    /// Moves the temporary output into place in one rename. Companion files of an older destination belong to its
    /// content: they are set aside first and removed once the rename is done (``commitReplacingStore(backup:displayPath:)``
    /// without a backup), so a crash never leaves the old database without them or the new one with them.
    /// - Throws: `.cannotCreateOutput` when the rename fails (the temporary output is then removed).
    public func commit(displayPath: String? = nil) throws {
        try commitReplacingStore(backup: nil, displayPath: displayPath)
    }

    /// Writes a whole-file output (`data`) under the temporary name and moves it into place.
    /// - Throws: `.cannotCreateOutput` naming `what` when the file cannot be written (nothing is left behind).
    public func write(_ data: Data, what: String, displayPath: String? = nil) throws {
        do {
            try data.write(to: temporary)
        } catch {
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot write the \(what)", at: Location(path: displayPath ?? destination.displayPath),
                underlyingError: error)
        }
        try commit(displayPath: displayPath)
    }

    /// Removes a file and its companion files, ignoring what is not there.
    public static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
        for suffix in companionSuffixes { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
}

extension StagedOutput {
    /// Replaces an existing SQLite store (database and companion files) with the staged output, so that a crash at
    /// any moment leaves either the old store, restorable exactly, or the new one: the old set is first copied to
    /// `backup` (when given) and flushed; its companions are moved aside under names tied to this staging; the
    /// staged database is renamed over the old one; the companions set aside are removed.
    ///
    /// A run interrupted between setting companions aside and the rename is repaired by
    /// ``recoverInterruptedReplacement(of:)``, which every in-place operation calls first.
    /// - Throws: `.cannotCreateOutput` when the backup or a rename fails (the old store is then as it was).
    public func commitReplacingStore(backup: URL?, displayPath: String? = nil) throws {
        let shown = displayPath ?? destination.displayPath
        let companions = Self.companionSuffixes.filter { FileManager.default.fileExists(atPath: destination.path + $0) }
        do {
            if let backup {
                // Each backup file is copied under a temporary name and renamed when flushed: a crash leaves no
                // half-written backup under the real name.
                for suffix in [""] + companions {
                    let staging = StagedOutput(destination: URL(fileURLWithPath: backup.path + suffix))
                    do {
                        try FileManager.default.copyItem(atPath: destination.path + suffix, toPath: staging.temporary.path)
                        try FileLock.synchronize(staging.temporary)
                        guard rename(staging.temporary.path, backup.path + suffix) == 0 else {
                            throw DecantError(
                                .cannotCreateOutput, "cannot name the backup: \(String(cString: strerror(errno)))",
                                at: Location(path: backup.displayPath))
                        }
                    } catch {
                        staging.discard()
                        throw error
                    }
                }
                try FileLock.synchronize(backup.deletingLastPathComponent())
            }
            for suffix in companions {
                try FileManager.default.moveItem(atPath: destination.path + suffix, toPath: pendingPath(suffix))
            }
        } catch {
            for suffix in companions where FileManager.default.fileExists(atPath: pendingPath(suffix)) {
                try? FileManager.default.moveItem(atPath: pendingPath(suffix), toPath: destination.path + suffix)
            }
            if let backup { for suffix in [""] + companions { try? FileManager.default.removeItem(atPath: backup.path + suffix) } }
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot set the old output aside: \(error.localizedDescription)",
                at: Location(path: shown), underlyingError: error)
        }
        guard rename(temporary.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            for suffix in companions {
                try? FileManager.default.moveItem(atPath: pendingPath(suffix), toPath: destination.path + suffix)
            }
            discard()
            throw DecantError(.cannotCreateOutput, "cannot move the finished output into place: \(reason)", at: Location(path: shown))
        }
        for suffix in companions { try? FileManager.default.removeItem(atPath: pendingPath(suffix)) }
        try? FileLock.synchronize(destination.deletingLastPathComponent())
    }

    /// Where a companion of the destination waits while the staged output replaces it.
    private func pendingPath(_ suffix: String) -> String {
        temporary.path.replacingOccurrences(of: ".decant-", with: ".decant-pending-") + suffix
    }

    /// Repairs a replacement of `destination` that a crash interrupted: companions set aside go back when the new
    /// database never took the old one's place, and are removed when it did.
    public static func recoverInterruptedReplacement(of destination: URL) {
        let folder = destination.deletingLastPathComponent()
        let prefix = ".\(destination.lastPathComponent).decant-pending-"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for entry in entries where entry.hasPrefix(prefix) {
            guard let suffix = companionSuffixes.first(where: { entry.hasSuffix($0) }) else { continue }
            let token = String(entry.dropFirst(prefix.count).dropLast(suffix.count))
            let pending = folder.appendingPathComponent(entry).path
            let staging = folder.appendingPathComponent(".\(destination.lastPathComponent).decant-\(token)").path
            if FileManager.default.fileExists(atPath: staging),
                !FileManager.default.fileExists(atPath: destination.path + suffix)
            {
                try? FileManager.default.moveItem(atPath: pending, toPath: destination.path + suffix)
            } else {
                try? FileManager.default.removeItem(atPath: pending)
            }
        }
    }
}
