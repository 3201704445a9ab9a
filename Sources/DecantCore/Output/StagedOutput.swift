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

    /// Removes the temporary output and its companion files; the destination is untouched.
    public func discard() {
        Self.remove(temporary)
    }

    /// Moves the temporary output into place in one rename. Companion files of an older destination would
    /// belong to other content, so they are removed first; the temporary output must have none left.
    /// - Throws: `.cannotCreateOutput` when the rename fails (the temporary output is then removed).
    public func commit(displayPath: String? = nil) throws {
        for suffix in Self.companionSuffixes {
            try? FileManager.default.removeItem(atPath: destination.path + suffix)
        }
        guard rename(temporary.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot move the finished output into place: \(reason)",
                at: Location(path: displayPath ?? destination.path))
        }
    }

    /// Removes a file and its companion files, ignoring what is not there.
    public static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
        for suffix in companionSuffixes { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
}
