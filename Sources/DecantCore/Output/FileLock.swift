public import Foundation

/// An exclusive advisory lock (`flock`) on an open file: held until ``unlock()`` or until the process ends, however
/// it ends, so a crashed holder never leaves a stale lock behind. The lock file itself carries no meaning: it may
/// stay in place between runs.
///
/// ```swift
/// let lock = try FileLock(at: folder.appendingPathComponent(".Notes.sqlite.decant-lock"))
/// defer { lock.unlock() }
/// ```
public final class FileLock {
    private var descriptor: Int32

    /// Opens (creating if needed) the file at `url` and waits until this process holds the exclusive lock.
    /// - Throws: `.cannotCreateOutput` when the lock file cannot be opened.
    public init(at url: URL, displayPath: String? = nil) throws {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw DecantError(
                .cannotCreateOutput, "cannot open the lock file: \(String(cString: strerror(errno)))",
                at: Location(path: displayPath ?? url.displayPath))
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw DecantError(
                    .ioError, "cannot lock: \(reason)", at: Location(path: displayPath ?? url.displayPath))
            }
        }
        self.descriptor = descriptor
    }

    /// Releases the lock (closing the file). Safe to call twice.
    public func unlock() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { unlock() }

    /// Flushes a file, or a folder's entries (so a rename in it survives a power loss), to disk.
    public static func synchronize(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DecantError(.ioError, "cannot open to flush: \(String(cString: strerror(errno)))", at: Location(path: url.displayPath))
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw DecantError(.ioError, "cannot flush to disk: \(String(cString: strerror(errno)))", at: Location(path: url.displayPath))
        }
    }
}

@available(*, unavailable)
extension FileLock: Sendable {}
