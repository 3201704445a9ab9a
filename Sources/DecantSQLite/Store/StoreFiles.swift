import Decant
import Foundation

/// The files that make up one SQLite store on disk: the database, its `-wal` and `-shm`, and the hidden
/// support folder holding externally stored binary data (`.<Name>_SUPPORT/_EXTERNAL_DATA`).
public struct StoreFiles: Sendable, Hashable {
    /// The main database file.
    public var database: URL

    /// Creates the description of the store at `database`.
    public init(database: URL) {
        self.database = database
    }

    /// The write-ahead log beside the database.
    public var writeAheadLog: URL { URL(fileURLWithPath: database.path + "-wal") }
    /// The WAL index beside the database.
    public var sharedMemory: URL { URL(fileURLWithPath: database.path + "-shm") }
    /// A rollback journal beside the database.
    public var rollbackJournal: URL { URL(fileURLWithPath: database.path + "-journal") }

    /// `.<Name>_SUPPORT/_EXTERNAL_DATA` beside the database (the name without its extension).
    public var externalDataFolder: URL {
        let name = database.deletingPathExtension().lastPathComponent
        return database.deletingLastPathComponent()
            .appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
            .appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// The companion files that exist now (`-wal`, `-shm`, `-journal`).
    public var existingCompanions: [URL] {
        [writeAheadLog, sharedMemory, rollbackJournal].filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The first `count` bytes of `url` (fewer for a shorter file, none when it cannot be read).
    static func header(of url: URL, count: Int) -> Data {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return Data() }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: count)) ?? Data()
    }

    /// Opens the store for reading without ever modifying the files on disk.
    ///
    /// Opening a database that has a `-wal` normally writes its `-shm` (and may checkpoint), so when any
    /// companion file exists the set is copied into a private temporary folder and the copy is opened; a store
    /// without companions is opened read-only and immutable, which writes nothing.
    /// - Returns: The path to open and a folder to delete afterwards, if a copy was made.
    package func readableLocation() throws -> (uri: String, temporaryFolder: URL?) {
        guard FileManager.default.fileExists(atPath: database.path) else {
            throw DecantError(.fileNotFound, "no store at this path", at: Location(path: database.path))
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
                at: Location(path: database.path), underlyingError: error)
        }
    }

    private func percentEncoded(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}
