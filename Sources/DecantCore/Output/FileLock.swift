public import Foundation

/// An exclusive advisory lock (`flock`) on a lock file: held until ``unlock()`` or until the process ends, however
/// it ends, so a crashed holder never leaves a stale lock behind. The holder removes the lock file when it lets go,
/// so a finished run leaves nothing beside the store (a killed one leaves an empty file, which the next run takes).
///
/// Removing the file on release could let two processes hold "the" lock on two different files: one waiting on the
/// file just removed, one on a new file created at the same path. So a process that gets the lock checks that the
/// path still names the file it locked, and starts over when it does not; the holder removes the file while still
/// holding its lock. Whoever holds a lock on the file the path names is the only holder.
///
/// ```swift
/// let lock = try FileLock(at: folder.appendingPathComponent(".Notes.sqlite.decant-lock"))
/// defer { lock.unlock() }
/// ```
public final class FileLock {
    private var descriptor: Int32
    private let path: String

    /// Opens (creating if needed) the file at `url` and waits until this process holds the exclusive lock on the
    /// file that `url` names.
    /// - Throws: `.cannotCreateOutput` when the lock file cannot be opened, `.ioError` when it cannot be locked.
    public init(at url: URL, displayPath: String? = nil) throws {
        let location = Location(path: displayPath ?? url.displayPath)
        path = url.path
        while true {
            let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw DecantError(
                    .cannotCreateOutput, "cannot open the lock file: \(String(cString: strerror(errno)))", at: location)
            }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    let reason = String(cString: strerror(errno))
                    close(descriptor)
                    throw DecantError(.ioError, "cannot lock: \(reason)", at: location)
                }
            }
            if Self.names(url.path, descriptor) {
                self.descriptor = descriptor
                return
            }
            // The holder before us removed the file (or it was replaced): lock the one the path names now.
            close(descriptor)
        }
    }

    /// Whether `path` names the file open at `descriptor` (same device and inode).
    private static func names(_ path: String, _ descriptor: Int32) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(descriptor, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Removes the lock file and releases the lock (closing the file). Safe to call twice.
    public func unlock() {
        guard descriptor >= 0 else { return }
        // Still holding the lock, and the path still names our file (every holder checks that before it holds).
        unlink(path)
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
