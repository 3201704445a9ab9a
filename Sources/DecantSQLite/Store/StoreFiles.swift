public import DecantCore
public import Foundation

/// The files that make up one SQLite store on disk: the database, its `-wal` and `-shm`, and the hidden
/// support folder holding externally stored binary data (`.<Name>_SUPPORT/_EXTERNAL_DATA`).
public struct StoreFiles: Sendable, Hashable {
    /// The main database file.
    public var database: URL

    /// Creates the description of the store at `database`.
    public init(database: URL) {
        self.database = database
    }

    /// The suffixes of the files SQLite keeps beside a database (`-wal`, `-shm`, `-journal`); they belong to the
    /// database's content.
    public static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The companion files beside the database (whether they exist or not).
    public func companions() -> [URL] { Self.companionSuffixes.map(companion) }

    /// The companion file with `suffix` (one of ``companionSuffixes``) beside the database.
    public func companion(_ suffix: String) -> URL { URL(fileURLWithPath: database.path + suffix) }
    /// The write-ahead log beside the database.
    public var writeAheadLog: URL { companion("-wal") }
    /// The WAL index beside the database.
    public var sharedMemory: URL { companion("-shm") }
    /// A rollback journal beside the database.
    public var rollbackJournal: URL { companion("-journal") }

    /// `.<Name>_SUPPORT` beside the database (the name without its extension): the store's support folder.
    public var supportFolder: URL {
        let name = database.deletingPathExtension().lastPathComponent
        return database.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
    }

    /// `.<Name>_SUPPORT/_EXTERNAL_DATA` beside the database (the name without its extension).
    public var externalDataFolder: URL {
        supportFolder.appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// The set as a ``StoreFileSet``: the database, its companions and its support folder (what
    /// ``SQLiteFormat/files(at:)`` declares).
    public var fileSet: StoreFileSet {
        StoreFileSet(main: database, companionSuffixes: Self.companionSuffixes, supportFolders: [supportFolder])
    }

    /// What ``externalDataFile(named:at:)`` found.
    public enum ExternalDataFile: Sendable, Hashable {
        /// The file's bytes.
        case found(Data)
        /// No file at that path (the path looked at).
        case missing(URL)
    }

    /// Reads the externally stored value `name` from ``externalDataFolder``.
    ///
    /// A store is untrusted input: a name that is not a plain file name (a separator, `.` or `..`), or a file or
    /// folder on the way that is a symbolic link or not a regular file, is refused, so a crafted store cannot make
    /// Decant copy a file from elsewhere into its output.
    /// - Throws: `.malformedInput` naming the path looked at; `.ioError` when the file exists but cannot be read.
    public func externalDataFile(named name: String, at location: Location) throws -> ExternalDataFile {
        let folder = externalDataFolder
        let file = folder.appendingPathComponent(name)
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw DecantError(
                .malformedInput, "externally stored value has an unsafe file name \"\(name)\"", at: location)
        }
        for path in [folder.deletingLastPathComponent(), folder, file] {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path.path) else {
                return .missing(file)
            }
            let type = attributes[.type] as? FileAttributeType
            let expected: FileAttributeType = path == file ? .typeRegular : .typeDirectory
            guard type == expected else {
                throw DecantError(
                    .malformedInput,
                    "refusing \(path.displayPath) for externally stored value \(name): "
                        + (type == .typeSymbolicLink ? "it is a symbolic link" : "it is not a regular \(path == file ? "file" : "folder")"),
                    at: location)
            }
        }
        do {
            return .found(try Data(contentsOf: file))
        } catch {
            throw DecantError(
                .ioError, "cannot read externally stored value \(file.displayPath)", at: location,
                underlyingError: error)
        }
    }

    /// The companion files that exist now (`-wal`, `-shm`, `-journal`).
    public var existingCompanions: [URL] {
        fileSet.existingCompanions
    }

    /// Opens the store for reading without ever modifying the files on disk.
    ///
    /// Opening a database that has a `-wal` normally writes its `-shm` (and may checkpoint), so when any
    /// companion file exists the set is copied into a private temporary folder and the copy is opened; a store
    /// without companions is opened read-only and immutable, which writes nothing.
    /// - Returns: The path to open and a folder to delete afterwards, if a copy was made.
    package func readableLocation() throws -> (uri: String, temporaryFolder: URL?) {
        guard FileManager.default.fileExists(atPath: database.path) else {
            throw DecantError(.fileNotFound, "no store at this path", at: Location(path: database.displayPath))
        }
        let companions = existingCompanions
        if companions.isEmpty {
            return ("file:\(percentEncoded(database.path))?mode=ro&immutable=1", nil)
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("decant-read-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = folder.appendingPathComponent(database.lastPathComponent)
            try FileManager.default.copyItem(at: database, to: copy)
            for companion in companions {
                let suffix = String(companion.path.dropFirst(database.path.count))
                try FileManager.default.copyItem(at: companion, to: URL(fileURLWithPath: copy.path + suffix))
            }
            return ("file:\(percentEncoded(copy.path))", folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw DecantError(
                .ioError, "could not make a private copy of the store to read it",
                at: Location(path: database.displayPath), underlyingError: error)
        }
    }

    private func percentEncoded(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}

extension SQLiteFormat {
    /// A store's files: the database, its `-wal`, `-shm` and `-journal`, and its `.<Name>_SUPPORT` folder
    /// (``StoreFiles``). Every copy, backup, staging and removal of a SQLite store moves this set.
    public func files(at url: URL) -> StoreFileSet { StoreFiles(database: url).fileSet }
}
