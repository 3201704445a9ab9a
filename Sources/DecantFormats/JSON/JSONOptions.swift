public import DecantCore
import DecantCodecs

/// The settings of JSON: for plain JSON input (an array of objects without Decant's header), the `--date-epoch` of
/// the command line (Decant's own JSON document and NDJSON carry dates in one form and need none); for output,
/// `--decode-transformables`.
///
/// ```swift
/// var options = FormatOptions(bundle: notes)
/// options.json.dateEpoch = .reference   // 0 is 2001-01-01T00:00:00Z, as Core Data stores dates
/// options.json.decodesTransformables = true
/// ```
public struct JSONOptions: FormatSpecificOptions {
    /// What a number in a Date attribute counts seconds from.
    public var dateEpoch: DateEpoch = .unix
    /// Whether the JSON and NDJSON writers write a Transformable value whose keyed archive holds only Foundation's
    /// plain values as that value, `{"archived": …}` (``FoundationValue``), rather than the archive's bytes in
    /// base64. Values that hold anything else stay base64 and are counted in a warning per attribute. The readers
    /// take both forms whatever this says, and archive `{"archived": …}` again as `NSKeyedArchiver` lays it out.
    public var decodesTransformables = false

    /// Unix time; transformable values as base64.
    public init() {}

    /// The instant a number of seconds in plain JSON counts from.
    public enum DateEpoch: String, Sendable, Hashable, CaseIterable, Codable {
        /// 1970-01-01T00:00:00Z, Unix time: what most exported JSON holds.
        case unix
        /// 2001-01-01T00:00:00Z, Core Data's reference date: what a Core Data store holds.
        case reference
    }
}

extension FormatOptions {
    /// The settings of plain JSON input.
    public var json: JSONOptions {
        get { self[JSONOptions.self] }
        set { self[JSONOptions.self] = newValue }
    }
}
