public import Foundation

/// The files that make one store at a URL, as its format declares them (``RecordFormat/files(at:)``): the main file
/// (or folder), the files beside it that hold part of its content under its name plus a suffix (SQLite's `-wal`,
/// `-shm` and `-journal`), and the folders beside it that belong to it (SQLite's `.NAME_SUPPORT`, where externally
/// stored values live).
///
/// Whatever copies, backs up, stages, removes or checks a store's files asks its format for this set, so every
/// operation moves the same files.
///
/// ```swift
/// let set = SQLiteFormat().files(at: url)   // Notes.sqlite, -wal, -shm, -journal, .Notes_SUPPORT
/// set.remove()
/// ```
public struct StoreFileSet: Sendable, Hashable {
    /// The main file or folder: what names the store.
    public var main: URL
    /// Suffixes of the files beside ``main`` (named `main.path + suffix`) that belong to its content.
    public var companionSuffixes: [String]
    /// Folders beside ``main`` that belong to the store (they keep their names while the main file is replaced).
    public var supportFolders: [URL]

    /// A set of `main`, its companions (by suffix) and support folders.
    public init(main: URL, companionSuffixes: [String] = [], supportFolders: [URL] = []) {
        self.main = main
        self.companionSuffixes = companionSuffixes
        self.supportFolders = supportFolders
    }

    /// The set of a format whose store is one file or one folder.
    @Sendable public static func single(_ url: URL) -> StoreFileSet { StoreFileSet(main: url) }

    /// The companion file with `suffix` beside ``main``.
    public func companion(_ suffix: String) -> URL { URL(fileURLWithPath: main.path + suffix) }

    /// The companion files, in the order of ``companionSuffixes``.
    public var companions: [URL] { companionSuffixes.map(companion) }

    /// Every member: the main file, its companions, its support folders.
    public var members: [URL] { [main] + companions + supportFolders }

    /// The members that exist now.
    public var existingMembers: [URL] { members.filter { FileManager.default.fileExists(atPath: $0.path) } }

    /// The companion files that exist now.
    public var existingCompanions: [URL] { companions.filter { FileManager.default.fileExists(atPath: $0.path) } }

    /// Removes every member, ignoring those that are not there.
    public func remove() {
        for member in members { try? FileManager.default.removeItem(at: member) }
    }
}

extension RecordFormat {
    /// One file or one folder at `url`: the set of formats that keep nothing beside their output.
    public func files(at url: URL) -> StoreFileSet { StoreFileSet.single(url) }

    /// Any output may be replaced (whether a folder may, ``DestinationLease/checkCanCreate(_:mayBeFolder:displayPath:)``
    /// says before any work).
    public func checkReplaceable(_ url: URL, displayPath: String) throws {}
}
