public import Foundation

/// A destination being replaced, held by the job that replaces it from start to end: the job takes the lease, its
/// writer writes the new store at ``staging`` (a hidden name beside the destination, on the same file system), and
/// the job either commits it (renamed into place, the old store's files set aside first and, in place, backed up) or
/// discards it, so a failed run leaves the destination exactly as it was and nothing beside it.
///
/// Which files make a store is the format's to say (``RecordFormat/files(at:)``): the lease stages, backs up, sets
/// aside and removes that set, the database with its `-wal`, `-shm` and `-journal` and its support folder for a
/// SQLite store.
///
/// A job that replaces a store others may replace too (an in-place migration, a seeding) takes the lease
/// `locking`: an exclusive advisory lock (`flock`) on `.NAME.decant-lock` beside the destination, held until
/// ``release()`` or until the process ends, however it ends, so a crashed holder never leaves a stale lock. Once it
/// holds the lock it repairs a replacement a crash interrupted (``commit(backup:)`` sets the old store's files aside
/// under names tied to its staging). A job that runs another job on the same destination (a seeding that migrates)
/// hands it its lease, so the lock is held once, without a gap, through both.
///
/// ```swift
/// let lease = try DestinationLease(destination: url, format: SQLiteFormat(), locking: true)
/// defer { lease.release() }
/// do {
///     var writer = try SQLiteFormat().makeWriter(at: lease.staging, model: model, options: FormatOptions())
///     _ = try RecordTransfer.copy(from: &reader, to: &writer)
///     try lease.commit()
/// } catch {
///     lease.discard()
///     throw error
/// }
/// ```
///
/// The holder removes the lock file when it lets go, so a finished run leaves nothing beside the store (a killed
/// one leaves an empty file, which the next run takes). Removing the file on release could let two processes hold
/// "the" lock on two different files: one waiting on the file just removed, one on a new file created at the same
/// path. So a process that gets the lock checks that the path still names the file it locked, and starts over when
/// it does not; the holder removes the file while still holding its lock. Whoever holds a lock on the file the path
/// names is the only holder.
public final class DestinationLease {
    /// Where the finished output goes.
    public let destination: URL
    /// Where the writer writes it: `.NAME.decant-<token>` in the destination's folder (with the destination's
    /// extension after it, when it has one).
    public let staging: URL
    /// The destination as the user named it, for messages.
    public let displayPath: String

    private let layout: @Sendable (URL) -> StoreFileSet
    private let check: @Sendable (URL, String) throws -> Void
    private let token: String
    private let lockPath: String
    private var descriptor: Int32 = -1
    /// What this lease found and removed beside the destination: the staged files of runs whose process is gone
    /// (killed with SIGKILL, or crashed), each said once (``Diagnostic/Kind/deadRunLeftovers``).
    public private(set) var removedLeftovers: [Diagnostic] = []

    /// Leases `destination`, whose files are the set `files` gives for a URL (one file or folder by default), and
    /// which `check` may refuse to replace (it is asked now and again just before the commit).
    ///
    /// With `locking`, waits until this process holds the destination's lock, then repairs a replacement of it a
    /// crash interrupted.
    /// - Throws: `.cannotCreateOutput` when the lock file cannot be opened or `check` refuses the destination,
    ///   `.ioError` when it cannot be locked.
    public init(
        destination: URL, files: @escaping @Sendable (URL) -> StoreFileSet = StoreFileSet.single,
        check: @escaping @Sendable (URL, String) throws -> Void = { _, _ in }, locking: Bool = false,
        displayPath: String? = nil
    ) throws {
        self.destination = destination
        self.layout = files
        self.check = check
        self.displayPath = displayPath ?? destination.displayPath
        let token = Self.runToken()
        self.token = token
        self.staging = Self.staging(of: destination, token: token)
        self.lockPath = Self.lockFile(for: destination).path
        if locking {
            descriptor = try Self.lock(lockPath, shown: Location(path: self.displayPath))
            recoverInterruptedReplacement()
        }
        removeDeadRuns()
        do {
            try check(destination, self.displayPath)
        } catch {
            release()
            throw error
        }
        StagingNames.shared.register(staging.path, shownAs: self.displayPath)
        let layout = self.layout
        let (staging, destination) = (self.staging, self.destination)
        StagingNames.shared.registerRemoval(staging.path) {
            var set = layout(staging)
            set.supportFolders = layout(destination).supportFolders.indices.map {
                Self.stagedSupport(of: destination, $0, token: token)
            }
            set.remove()
        }
    }

    /// Removes what every lease of this process has staged and not yet moved into place: for a run stopped by a
    /// signal (Ctrl-C, SIGTERM), which ends the process without unwinding, so that it leaves no `.NAME.decant-…`
    /// files behind. The destinations are untouched. Safe to call from a signal's dispatch source, once.
    public static func removeStagedOutputs() {
        StagingNames.shared.removeAllStaged()
    }

    /// Leases `destination`, a store of `format`, which names its files (``RecordFormat/files(at:)``) and says what
    /// it may replace (``RecordFormat/checkReplaceable(_:displayPath:)``).
    public convenience init(
        destination: URL, format: any RecordFormat, locking: Bool = false, displayPath: String? = nil
    ) throws {
        try self.init(
            destination: destination, files: { format.files(at: $0) },
            check: { try format.checkReplaceable($0, displayPath: $1) }, locking: locking, displayPath: displayPath)
    }

    /// The staging location of `token` for `destination`: `.NAME.decant-<token>`, with the destination's extension
    /// after it when it has one (a writer that reads its output's kind from the extension, as CSV's, writes there
    /// as it would at the destination).
    private static func staging(of destination: URL, token: String) -> URL {
        let name = ".\(destination.lastPathComponent).decant-\(token)"
        let pathExtension = destination.pathExtension
        return destination.deletingLastPathComponent()
            .appendingPathComponent(pathExtension.isEmpty ? name : "\(name).\(pathExtension)")
    }

    deinit {
        StagingNames.shared.unregister(staging.path)
        release()
    }

    /// A token naming one run's staged files: `p<process id>h<host>-<UUID>`, so that a later run can tell that
    /// the process that staged them is gone (``removeDeadRuns()``).
    package static func runToken() -> String {
        "p\(getpid())h\(hostTag)-\(UUID().uuidString)"
    }

    /// This host's name as 8 hex digits (FNV-1a): staged files of another host sharing the folder are never judged.
    private static let hostTag: String = {
        var hash: UInt32 = 0x811C_9DC5
        for byte in ProcessInfo.processInfo.hostName.utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return String(format: "%08x", hash)
    }()

    /// The run token an entry beside the destination starts with (after `.NAME.decant-`, and `seed-` or `pending-`),
    /// with the process id it names: `p<pid>h<host>-<UUID>`, or a bare UUID (runs before tokens named their
    /// process, pid nil). Nil for an entry that starts with neither (the lock file).
    static func runToken(startingEntry name: Substring) -> (token: Substring, pid: Int32?)? {
        if name.first == "p", let h = name.firstIndex(of: "h"), let dash = name[h...].firstIndex(of: "-"),
            let pid = Int32(name[name.index(after: name.startIndex)..<h]), pid > 0,
            name.distance(from: dash, to: name.endIndex) > 36
        {
            let end = name.index(dash, offsetBy: 37)
            return (name[..<end], name[name.index(after: h)..<dash] == hostTag ? pid : nil)
        }
        guard name.count >= 36, UUID(uuidString: String(name.prefix(36))) != nil else { return nil }
        return (name.prefix(36), nil)
    }

    /// Removes what runs on this destination whose process is gone left beside it (a staging, its support
    /// folders, a seeding's folder), and says so in ``removedLeftovers``. A run killed with SIGKILL cannot clean up
    /// after itself; without this, its files (as large as the store) stayed forever. A run of this host only, whose
    /// process no longer exists; and never one that was replacing the destination (its `pending-` files hold the
    /// old store's files, which the next locked run puts back with its staging).
    private func removeDeadRuns() {
        let folder = destination.deletingLastPathComponent()
        let prefix = ".\(destination.lastPathComponent).decant-"
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
            $0.hasPrefix(prefix)
        }
        let replacing = Set(
            entries.compactMap { entry -> Substring? in
                let rest = entry.dropFirst(prefix.count)
                guard rest.hasPrefix("pending-") else { return nil }
                return Self.runToken(startingEntry: rest.dropFirst("pending-".count))?.token
            })
        for entry in entries.sorted() {
            var rest = entry.dropFirst(prefix.count)
            guard !rest.hasPrefix("pending-") else { continue }
            if rest.hasPrefix("seed-") { rest = rest.dropFirst("seed-".count) }
            // Signal 0 only asks whether the process exists: ESRCH is "no such process" (EPERM: it exists).
            guard let (token, owner) = Self.runToken(startingEntry: rest), let pid = owner, !replacing.contains(token),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let url = folder.appendingPathComponent(entry)
            guard (try? FileManager.default.removeItem(at: url)) != nil else { continue }
            removedLeftovers.append(
                Diagnostic(
                    .deadRunLeftovers,
                    "removed \(entry), left by a Decant run (process \(pid)) that was stopped before it finished",
                    at: Location(path: (displayPath as NSString).deletingLastPathComponent.appendingPathComponent(entry))))
        }
    }

    /// The lock file of `destination`: `.NAME.decant-lock` beside it.
    public static func lockFile(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).decant-lock")
    }

    /// The destination's files.
    public var files: StoreFileSet { layout(destination) }

    /// The staged files: the set of ``staging``, its support folders under names of this staging (so everything
    /// staged starts with `.NAME.decant-`).
    public var stagingFiles: StoreFileSet {
        var set = layout(staging)
        set.supportFolders = layout(destination).supportFolders.indices.map { stagedSupport($0, token: token) }
        return set
    }

    /// Whether this lease holds the destination's lock.
    public var holdsLock: Bool { descriptor >= 0 }

    /// Whether some holder (this process or another) holds the lock of `destination` now. It never waits.
    public static func isLocked(_ destination: URL) -> Bool {
        let descriptor = open(lockFile(for: destination).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }

    /// Removes the lock file and releases the lock (closing the file). Safe to call twice, and without a lock.
    public func release() {
        guard descriptor >= 0 else { return }
        // Still holding the lock, and the path still names our file (every holder checks that before it holds).
        unlink(lockPath)
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    /// Removes what was staged; the destination is untouched.
    public func discard() {
        stagingFiles.remove()
    }

    /// Writes a whole-file output (`data`) at ``staging`` and moves it into place.
    /// - Throws: `.cannotCreateOutput` naming `what` when the file cannot be created, `.ioError` when writing it
    ///   fails (a full disk, a file size limit), as for every other output (nothing is left behind either way).
    public func write(_ data: Data, what: String) throws {
        let descriptor = open(staging.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot create the \(what): \(reason)", at: Location(path: displayPath))
        }
        do {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            discard()
            throw DecantError(
                .ioError, "cannot write the \(what)", at: Location(path: displayPath), underlyingError: error)
        }
        try commit()
    }

    /// Removes what earlier runs on this destination left beside it: their staged files (which a crash leaves), and
    /// when no store is at the destination, companions and support folders without their store. Only for a lease
    /// that holds the lock (no other run is staging then); otherwise nothing is removed.
    public func removeLeftovers() {
        guard holdsLock else { return }
        let folder = destination.deletingLastPathComponent()
        let prefix = ".\(destination.lastPathComponent).decant-"
        let lock = URL(fileURLWithPath: lockPath).lastPathComponent
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for entry in entries where entry.hasPrefix(prefix) && entry != lock && !entry.contains(token) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(entry))
        }
        if !FileManager.default.fileExists(atPath: destination.path) { files.remove() }
    }
}

extension DestinationLease {
    /// Moves the staged output into place: the destination's companions (and, when the staging has its own, its
    /// support folders; and an earlier folder output) are set aside under names tied to this staging, the staged
    /// support folders go in, the staged main file is renamed over the destination in one rename (so the
    /// destination, once there, is whole), and what was set aside is removed. A crash at any moment leaves either
    /// the old store, restored exactly by the next locking lease, or the new one.
    ///
    /// With `backup`, every existing file of the old store is first copied to the same set at `backup` (each under
    /// a temporary name, flushed, then renamed: a crash leaves no half-written backup under the real name).
    /// - Throws: `.cannotCreateOutput` when the backup or a rename fails: the old store is then as it was and
    ///   nothing is staged.
    public func commit(backup: URL? = nil) throws {
        let manager = FileManager.default
        let target = files
        let staged = stagingFiles
        do {
            try check(destination, displayPath)
        } catch {
            discard()
            throw error
        }
        // What goes aside, and where: (destination member, pending path).
        var aside: [(URL, String)] = []
        for (index, companion) in target.companions.enumerated() where manager.fileExists(atPath: companion.path) {
            aside.append((companion, pendingPath(key: target.companionSuffixes[index])))
        }
        for (index, folder) in target.supportFolders.enumerated()
        where manager.fileExists(atPath: staged.supportFolders[index].path) && manager.fileExists(atPath: folder.path) {
            aside.append((folder, pendingPath(key: ".support\(index)")))
        }
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            // A folder output (CSV) replaces an earlier one by two renames.
            aside.append((destination, pendingPath(key: ".main")))
        }
        var backedUp: [URL] = []
        var setAside: [(URL, String)] = []
        func restore() {
            for (member, pending) in setAside.reversed() { try? manager.moveItem(atPath: pending, toPath: member.path) }
        }
        do {
            if let backup {
                let copy = layout(backup)
                for (member, into) in zip(target.members, copy.members) where manager.fileExists(atPath: member.path) {
                    try Self.copyFlushed(member, to: into, backup: backup)
                    backedUp.append(into)
                }
                try Self.synchronize(backup.deletingLastPathComponent())
            }
            for (member, pending) in aside {
                try manager.moveItem(atPath: member.path, toPath: pending)
                setAside.append((member, pending))
            }
        } catch {
            restore()
            for file in backedUp { try? manager.removeItem(at: file) }
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot set the old output aside: \(error.localizedDescription)",
                at: Location(path: displayPath), underlyingError: error)
        }
        var movedIn: [(URL, URL)] = []
        do {
            for (from, into) in zip(staged.supportFolders, target.supportFolders) where manager.fileExists(atPath: from.path) {
                try manager.moveItem(at: from, to: into)
                movedIn.append((from, into))
            }
        } catch {
            for (from, into) in movedIn { try? manager.moveItem(at: into, to: from) }
            restore()
            discard()
            throw DecantError(
                .cannotCreateOutput, "cannot move the finished output's folders into place: \(error.localizedDescription)",
                at: Location(path: displayPath), underlyingError: error)
        }
        guard rename(staging.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            for (from, into) in movedIn { try? manager.moveItem(at: into, to: from) }
            restore()
            discard()
            throw DecantError(.cannotCreateOutput, "cannot move the finished output into place: \(reason)", at: Location(path: displayPath))
        }
        // Companions of the staged file (a store left with its log) follow it.
        for (from, into) in zip(staged.companions, target.companions) where manager.fileExists(atPath: from.path) {
            try? manager.moveItem(at: from, to: into)
        }
        for (_, pending) in setAside { try? manager.removeItem(atPath: pending) }
        try? Self.synchronize(destination.deletingLastPathComponent())
    }

    /// Copies `member` (a file or folder) of the store to `into` under a temporary name, flushes and renames it.
    private static func copyFlushed(_ member: URL, to into: URL, backup: URL) throws {
        let temporary = into.deletingLastPathComponent()
            .appendingPathComponent(".\(into.lastPathComponent).decant-\(UUID().uuidString)")
        do {
            try FileManager.default.copyItem(at: member, to: temporary)
            try synchronize(temporary)
            guard rename(temporary.path, into.path) == 0 else {
                throw DecantError(
                    .cannotCreateOutput, "cannot name the backup: \(String(cString: strerror(errno)))",
                    at: Location(path: backup.displayPath))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// Where a member of the destination (by `key`: a companion's suffix, `.supportN`, `.main`) waits while the
    /// staged output of `token` replaces it.
    private func pendingPath(key: String, token: String? = nil) -> String {
        destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).decant-pending-\(token ?? self.token)\(key)").path
    }

    /// The name support folder `index` of the staging of `token` has.
    private func stagedSupport(_ index: Int, token: String) -> URL {
        Self.stagedSupport(of: destination, index, token: token)
    }

    private static func stagedSupport(of destination: URL, _ index: Int, token: String) -> URL {
        destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).decant-\(token).support\(index)", isDirectory: true)
    }

    /// Repairs a replacement of the destination that a crash interrupted: what was set aside goes back when the
    /// new main file never took the old one's place (a support folder already moved in goes back to its staging
    /// name first), and is removed when it did.
    private func recoverInterruptedReplacement() {
        let manager = FileManager.default
        let folder = destination.deletingLastPathComponent()
        let prefix = ".\(destination.lastPathComponent).decant-pending-"
        let target = files
        let entries = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
        for entry in entries where entry.hasPrefix(prefix) {
            let rest = entry.dropFirst(prefix.count)
            guard let (run, _) = Self.runToken(startingEntry: rest), run.endIndex < rest.endIndex else { continue }
            let token = String(run)
            let key = String(rest[run.endIndex...])
            let pending = folder.appendingPathComponent(entry).path
            let member: URL
            var stagedMember: URL?
            if key == ".main" {
                member = destination
            } else if key.hasPrefix(".support"), let index = Int(key.dropFirst(".support".count)),
                target.supportFolders.indices.contains(index)
            {
                member = target.supportFolders[index]
                stagedMember = stagedSupport(index, token: token)
            } else if target.companionSuffixes.contains(key) {
                member = URL(fileURLWithPath: destination.path + key)
            } else {
                continue
            }
            // (A staging without the extension is what Decant before the lease named it.)
            let stagedMain = Self.staging(of: destination, token: token).path
            let legacyStagedMain = folder.appendingPathComponent(".\(destination.lastPathComponent).decant-\(token)").path
            if manager.fileExists(atPath: stagedMain) || manager.fileExists(atPath: legacyStagedMain) {
                if let stagedMember, manager.fileExists(atPath: member.path), !manager.fileExists(atPath: stagedMember.path) {
                    try? manager.moveItem(at: member, to: stagedMember)
                }
                if !manager.fileExists(atPath: member.path) {
                    try? manager.moveItem(atPath: pending, toPath: member.path)
                    continue
                }
            }
            try? manager.removeItem(atPath: pending)
        }
    }
}

extension DestinationLease {
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

    /// Opens (creating if needed) the lock file at `path` and waits until this process holds the exclusive lock on
    /// the file that `path` names; returns its descriptor.
    private static func lock(_ path: String, shown location: Location) throws -> Int32 {
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
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
            if names(path, descriptor) { return descriptor }
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
}

@available(*, unavailable)
extension DestinationLease: Sendable {}

/// The staging locations of the leases alive in this process, each with the destination it stands for: a message
/// about a staged file names the destination the user gave (``Foundation/URL/displayPath``), never the hidden name.
final class StagingNames: @unchecked Sendable {
    static let shared = StagingNames()
    private let lock = NSLock()
    private var names: [String: String] = [:]

    /// Per staging path: what removes its staged files.
    private var removals: [String: @Sendable () -> Void] = [:]

    func register(_ path: String, shownAs shown: String) { lock.withLock { names[path] = shown } }
    func unregister(_ path: String) {
        lock.withLock {
            _ = names.removeValue(forKey: path)
            _ = removals.removeValue(forKey: path)
        }
    }
    func registerRemoval(_ path: String, _ remove: @escaping @Sendable () -> Void) {
        lock.withLock { removals[path] = remove }
    }

    /// Runs every registered removal, once.
    func removeAllStaged() {
        let pending = lock.withLock {
            defer { removals.removeAll() }
            return Array(removals.values)
        }
        for remove in pending { remove() }
    }

    /// How `path` is shown: the destination's name for a staging location (or a file in one), else nil.
    func shown(_ path: String) -> String? {
        lock.withLock {
            guard !names.isEmpty else { return nil }
            if let shown = names[path] { return shown }
            for (staging, shown) in names where path.hasPrefix(staging + "/") {
                return shown + path.dropFirst(staging.count)
            }
            return nil
        }
    }
}
