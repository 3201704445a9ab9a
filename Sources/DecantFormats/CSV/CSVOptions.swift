public import DecantCore
import DecantCodecs

/// The settings of delimited text (CSV), read and written: the `--delimiter` and `--null` of the command line.
/// ``CSVDialect`` checks them when a reader or writer starts.
///
/// ```swift
/// var options = FormatOptions(bundle: notes)
/// options.csv.delimiter = ";"
/// options.csv.nullMarker = "NULL"
/// ```
public struct CSVOptions: FormatSpecificOptions {
    /// The character between fields; a comma when nil.
    public var delimiter: Character?
    /// The text that stands for nil. When nil, an empty unquoted field is nil and a quoted empty field (`""`) is the
    /// empty string.
    public var nullMarker: String?

    /// Comma-separated, nil as an empty unquoted field.
    public init() {}
}

extension FormatOptions {
    /// The settings of CSV input and output.
    public var csv: CSVOptions {
        get { self[CSVOptions.self] }
        set { self[CSVOptions.self] = newValue }
    }
}
