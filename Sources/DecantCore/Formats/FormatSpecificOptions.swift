/// The settings of one format, kept in ``FormatOptions`` by their type, so a format reads its own settings without
/// the core knowing them: CSV's delimiter (`CSVOptions`), plain JSON's date epoch (`JSONOptions`), a keyed
/// archive's class map (`ArchiveOptions`), the SQLite store's journal mode (`SQLiteOptions`), each declared in its
/// format's folder.
///
/// A format's options type has a value for every setting when created with `init()`: the format's defaults. A
/// format adds a property to ``FormatOptions`` for its type, so callers write `options.csv.delimiter = ";"`:
///
/// ```swift
/// public struct CSVOptions: FormatSpecificOptions {
///     public var delimiter: Character?
///     public init() {}
/// }
///
/// extension FormatOptions {
///     public var csv: CSVOptions {
///         get { self[CSVOptions.self] }
///         set { self[CSVOptions.self] = newValue }
///     }
/// }
/// ```
public protocol FormatSpecificOptions: Sendable, Hashable {
    /// The format's defaults.
    init()
}

extension FormatSpecificOptions {
    /// Whether `other` holds the same settings (of the same type).
    fileprivate func isEqual(to other: any FormatSpecificOptions) -> Bool {
        (other as? Self) == self
    }
}

extension FormatOptions {
    /// The settings of the format whose options type is `type`: those set, else the format's defaults.
    ///
    /// ```swift
    /// options[CSVOptions.self].nullMarker = "NULL"     // or options.csv.nullMarker, from DecantFormats
    /// ```
    public subscript<Options: FormatSpecificOptions>(_ type: Options.Type) -> Options {
        get { specific.values[ObjectIdentifier(type)] as? Options ?? Options() }
        set {
            // Defaults are not stored, so options set back to their defaults equal options never set.
            specific.values[ObjectIdentifier(type)] = newValue == Options() ? nil : newValue
        }
    }
}

/// The per-format settings of a ``FormatOptions``, by options type: equal when they hold equal settings.
struct SpecificOptions: Sendable, Hashable {
    var values: [ObjectIdentifier: any FormatSpecificOptions] = [:]

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.values.count == rhs.values.count
            && lhs.values.allSatisfy { key, value in rhs.values[key].map(value.isEqual(to:)) ?? false }
    }

    func hash(into hasher: inout Hasher) {
        // Independent of the dictionary's order: each entry is hashed alone and the results combined by XOR.
        var combined = 0
        for (key, value) in values {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(value)
            combined ^= entry.finalize()
        }
        hasher.combine(combined)
    }
}
