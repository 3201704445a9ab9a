public import Foundation

/// A file format records can be read from or written to: one folder of the library each (`DecantSQLite`'s store,
/// `DecantFormats/JSON`, …), registered in a ``FormatRegistry``.
///
/// ```swift
/// let format = try FormatRegistry.builtIn.inputFormat(of: url, named: nil)
/// var reader = try format.makeReader(at: url, options: FormatOptions(bundle: notes))
/// ```
public protocol RecordFormat: Sendable {
    /// The name used by `--from` / `--to`: `sqlite`, `json`, `ndjson`, `csv`, `xml`, `binary`, `archive`.
    var name: String { get }
    /// Lower-case file extensions (without the dot) that suggest this format when the content does not decide.
    var fileExtensions: [String] { get }
    /// Whether the input's content is this format (magic bytes, first non-blank character, root element).
    func recognizes(_ probe: FormatProbe) -> Bool
    /// Opens a reader of `url`. Formats that carry their model version (a store's hashes) resolve it against
    /// `options.bundle`, or their own model; model-less formats take `options.bundle` at `options.version` (else
    /// its current version).
    func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader
    /// Starts a writer of a new output at `url` for `model`: `url` is where the job tells it to write (a
    /// ``DestinationLease``'s staging location, where nothing is yet); the writer writes there and only there, and
    /// the job moves the finished output into place. ``RecordWriter/abandon()`` removes what the writer wrote.
    /// - Throws: `.unsupportedFormat` for formats Decant reads only.
    func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter
    /// The files that make one store of this format at `url` (``StoreFileSet``); by default the one file or folder.
    func files(at url: URL) -> StoreFileSet
    /// Refuses an existing output at `url` this format must not replace (by default, none: a job's
    /// ``DestinationLease`` replaces what is there); shown as `displayPath`.
    func checkReplaceable(_ url: URL, displayPath: String) throws
    /// Whether this format is a Core Data persistent store (SQLite, XML, binary): objects brought into it from
    /// records (JSON, CSV, property lists, archives) meet the model's rules, as Core Data's save makes them; by
    /// default false (exports and interchange files).
    var isPersistentStore: Bool { get }
    /// Whether this format's writer refuses a second object with the key of a uniqueness constraint by itself (a
    /// SQLite store's unique index), naming the entity and the key; by default false.
    var enforcesUniquenessConstraints: Bool { get }
    /// Whether an output of this format is a folder (CSV's: a file per entity), so that an existing folder at the
    /// output path is one it may replace (``DestinationLease/checkCanCreate(_:mayBeFolder:displayPath:)``); by
    /// default false.
    var writesFolder: Bool { get }
}

extension RecordFormat {
    public var isPersistentStore: Bool { false }
    public var enforcesUniquenessConstraints: Bool { false }
    public var writesFolder: Bool { false }
}

/// What a format looks at to recognise an input: its path, whether it is a folder, and its first bytes.
public struct FormatProbe: Sendable, Hashable {
    /// The input.
    public var url: URL
    /// Whether the input is a folder (a CSV folder, a model bundle).
    public var isDirectory: Bool
    /// Up to the first 512 bytes of a file; empty for a folder.
    public var header: Data

    /// Reads the probe of `url`.
    /// - Throws: `.fileNotFound` when nothing is there, `.ioError` when the file cannot be read.
    public init(url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw DecantError(.fileNotFound, "no such file or folder", at: Location(path: url.displayPath))
        }
        self.url = url
        self.isDirectory = isDirectory.boolValue
        self.header = isDirectory.boolValue ? Data() : try Self.header(of: url, count: 512)
    }

    /// Creates a probe from parts (for tests).
    public init(url: URL, isDirectory: Bool, header: Data) {
        self.url = url
        self.isDirectory = isDirectory
        self.header = header
    }

    /// The first byte that is not white space (after a UTF-8 byte-order mark), if any.
    public var firstNonBlankByte: UInt8? {
        var bytes = header[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
    }

    /// The first `count` bytes of `url` (fewer for a shorter file).
    /// - Throws: `.ioError` when the file cannot be opened or read (exit 74): an unreadable input is not one of an
    ///   unknown format.
    public static func header(of url: URL, count: Int) throws -> Data {
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            return try handle.read(upToCount: count) ?? Data()
        } catch {
            throw DecantError(
                .ioError, "cannot read the file", at: Location(path: url.displayPath), underlyingError: error)
        }
    }
}

/// The settings format readers and writers take: those several formats share (the model bundle and version, the
/// entity and keys of a model-less input, missing external data) as properties, and each format's own settings
/// (``FormatSpecificOptions``) by their type, through a property its module adds (`options.csv`, `options.json`,
/// `options.archive`, `options.sqlite`). Each format takes what concerns it and ignores the rest.
public struct FormatOptions: Sendable, Hashable {
    /// The model bundle: the version an input matches by hash, or the version a model-less input follows.
    public var bundle: ModelBundle?
    /// For model-less inputs (CSV, plain JSON): the version of ``bundle`` to follow; its current version if nil.
    public var version: String?
    /// What a store reader does with externally stored values whose file is missing.
    public var missingExternalData: MissingExternalDataPolicy = .fail
    /// For inputs that hold one entity without naming it (a plain JSON array, a single CSV file): that entity.
    public var entity: String?
    /// Per entity, the attribute whose value identifies an object in references (`--key Entity=attribute`).
    public var keys: [String: String] = [:]
    /// Each format's own settings (CSV's delimiter, an archive's class map, …), by their options type: see
    /// ``FormatSpecificOptions`` and ``subscript(_:)``.
    var specific = SpecificOptions()

    /// Creates options.
    public init(bundle: ModelBundle? = nil, version: String? = nil) {
        self.bundle = bundle
        self.version = version
    }

    /// The model a model-less input follows: ``version`` of ``bundle``, else its current version.
    /// - Throws: `.usage` without a bundle or for an unknown version name.
    public func modelForModelLessInput(at location: Location) throws -> ObjectModel {
        guard let bundle else {
            throw DecantError(.usage, "this input does not carry its model: give it with --model", at: location)
        }
        if let version {
            guard let model = bundle.version(named: version) else {
                let names = bundle.versions.compactMap(\.versionName).joined(separator: ", ")
                throw DecantError(.usage, "\(bundle.name) has no version \(version) (it has \(names))", at: location)
            }
            return model
        }
        guard let current = bundle.currentVersion else {
            throw DecantError(.usage, "\(bundle.name) has no versions", at: location)
        }
        return current
    }
}
