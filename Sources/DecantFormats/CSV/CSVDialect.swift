public import DecantCore
import DecantCodecs

/// How delimited text separates fields and spells nil: the `--delimiter` and `--null` of `decant convert`.
///
/// By default fields are separated by commas; an empty unquoted field is nil and a quoted empty field (`""`) is the
/// empty string (or empty data). With a null marker (`NULL`, `\N`), that marker unquoted is nil, the marker quoted is
/// the text itself, and an empty field is the empty string; in columns that are not text (numbers, dates, UUIDs…)
/// an empty field is nil either way.
///
/// ```swift
/// let tabs = try CSVDialect(delimiter: "\t", nullMarker: "\\N")
/// let plain = CSVDialect.standard        // comma, empty unquoted field for nil
/// ```
public struct CSVDialect: Sendable, Hashable {
    /// The byte between fields: an ASCII character other than a quote, CR or LF.
    public let delimiter: UInt8
    /// The text that stands for nil, or nil for "an empty unquoted field".
    public let nullMarker: String?

    /// Comma-separated, nil as an empty unquoted field.
    public static let standard = CSVDialect(validDelimiter: 0x2C, nullMarker: nil)

    /// A dialect with `delimiter` and `nullMarker` (an empty marker means the default).
    /// - Throws: `.usage` for a delimiter that is not one ASCII character other than a quote, CR or LF, or a marker
    ///   that contains the delimiter, a quote or a line break (it could not be written unquoted).
    public init(delimiter: Character = ",", nullMarker: String? = nil) throws {
        guard let ascii = delimiter.asciiValue, ![0x22, 0x0A, 0x0D].contains(ascii) else {
            throw DecantError(
                .usage,
                "the delimiter must be one ASCII character other than a quote or a line break, not "
                    + delimiter.debugDescription)
        }
        let marker = nullMarker?.isEmpty == true ? nil : nullMarker
        if let marker, marker.utf8.contains(where: { [ascii, 0x22, 0x0A, 0x0D].contains($0) }) {
            throw DecantError(
                .usage,
                "the null marker \(marker.debugDescription) cannot contain the delimiter, a quote or a line break")
        }
        self.init(validDelimiter: ascii, nullMarker: marker)
    }

    private init(validDelimiter: UInt8, nullMarker: String?) {
        self.delimiter = validDelimiter
        self.nullMarker = nullMarker
    }

    /// The dialect `options` ask for (`delimiter`, `nullMarker`), falling back to `defaults` for what they leave
    /// unset.
    /// - Throws: `.usage` as ``init(delimiter:nullMarker:)``.
    public init(options: FormatOptions, defaults: CSVDialect = .standard) throws {
        try self.init(
            delimiter: options.csv.delimiter ?? Character(Unicode.Scalar(defaults.delimiter)),
            nullMarker: options.csv.nullMarker ?? defaults.nullMarker)
    }

    /// The delimiter as text.
    public var delimiterText: String { String(Character(Unicode.Scalar(delimiter))) }
}
