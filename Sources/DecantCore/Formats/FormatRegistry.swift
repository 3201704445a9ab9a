public import Foundation

/// The formats Decant knows, and the choice of one for an input or an output: by `--from`/`--to` when given,
/// else an input by its content and then its extension, an output by its extension.
///
/// ```swift
/// let registry = FormatRegistry.builtIn              // from the Decant module
/// let input = try registry.inputFormat(of: url, named: nil)
/// let output = try registry.outputFormat(for: out, named: "ndjson")
/// ```
public struct FormatRegistry: Sendable {
    /// The registered formats, in the order they are tried.
    public private(set) var formats: [any RecordFormat]

    /// A registry of `formats`.
    public init(_ formats: [any RecordFormat] = []) {
        self.formats = formats
    }

    /// Adds a format; a format of the same name is replaced.
    public mutating func register(_ format: any RecordFormat) {
        formats.removeAll { $0.name == format.name }
        formats.append(format)
    }

    /// The names of the registered formats.
    public var names: [String] { formats.map(\.name) }

    /// The format called `name`.
    /// - Throws: `.usage` naming the known formats.
    public func format(named name: String) throws -> any RecordFormat {
        guard let format = formats.first(where: { $0.name == name.lowercased() }) else {
            throw DecantError(.usage, "unknown format \(name) (known: \(names.joined(separator: ", ")))")
        }
        return format
    }

    /// The format of the input at `url`: `name` when given, else the first format that recognises its content,
    /// else the one its extension names.
    /// - Throws: `.fileNotFound` when nothing is there, `.unsupportedFormat` when no format fits (naming `--from`,
    ///   which every command that reads records has).
    public func inputFormat(of url: URL, named name: String?) throws -> any RecordFormat {
        let probe = try FormatProbe(url: url)
        if let name { return try format(named: name) }
        if let format = format(recognizing: probe) ?? format(forExtensionOf: url) { return format }
        throw DecantError(
            .unsupportedFormat,
            "cannot tell the format of this input from its content or extension; "
                + "name it with --from (\(names.joined(separator: ", ")))", at: Location(path: url.displayPath))
    }

    /// The first format that recognises `probe`'s content (each format owns its magic bytes), if any.
    public func format(recognizing probe: FormatProbe) -> (any RecordFormat)? {
        formats.first { $0.recognizes(probe) }
    }

    /// The first format whose file extensions include `url`'s, if any.
    public func format(forExtensionOf url: URL) -> (any RecordFormat)? {
        let pathExtension = url.pathExtension.lowercased()
        return formats.first { $0.fileExtensions.contains(pathExtension) }
    }

    /// The format whose in-store engine `engine` names (``MigrationEngineKind/inStore(format:)``), when it is registered:
    /// what a report says of the engine comes from it (``InStoreMigratingFormat/inStoreRunNote``).
    public func inStoreMigratingFormat(of engine: MigrationEngineKind?) -> (any InStoreMigratingFormat)? {
        guard case .inStore(let name)? = engine else { return nil }
        return (try? format(named: name)) as? any InStoreMigratingFormat
    }

    /// The store format an output is written in when nothing names one (an output without a known extension, a
    /// seeding's destination): the first registered Core Data persistent store (``RecordFormat/isPersistentStore``),
    /// Core Data's default (SQLite) in ``builtIn``.
    /// - Throws: `.usage` when no store format is registered.
    public func defaultStoreFormat() throws -> any RecordFormat {
        guard let store = formats.first(where: \.isPersistentStore) else {
            throw DecantError(.usage, "no store format is registered (\(names.joined(separator: ", ")))")
        }
        return store
    }

    /// The format to write `url` in: `name` when given, else the one its extension names, else `fallback` (by name),
    /// else, with `storeByDefault`, ``defaultStoreFormat()``.
    /// - Throws: `.usage` for an unknown name, or when neither the extension nor a fallback decides.
    public func outputFormat(
        for url: URL, named name: String?, fallback: String? = nil, storeByDefault: Bool = false
    ) throws -> any RecordFormat {
        if let name { return try format(named: name) }
        if let format = format(forExtensionOf: url) { return format }
        if let fallback { return try format(named: fallback) }
        if storeByDefault { return try defaultStoreFormat() }
        throw DecantError(
            .usage, "cannot tell which format to write from the extension; name it with --to (\(names.joined(separator: ", ")))",
            at: Location(path: url.displayPath))
    }
}
