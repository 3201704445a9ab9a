public import DecantCore

/// The settings of plain JSON input (an array of objects without Decant's header): the `--date-epoch` of the
/// command line. Decant's own JSON document and NDJSON carry dates in one form and need none.
///
/// ```swift
/// var options = FormatOptions(bundle: notes)
/// options.json.dateEpoch = .reference   // 0 is 2001-01-01T00:00:00Z, as Core Data stores dates
/// ```
public struct JSONOptions: FormatSpecificOptions {
    /// What a number in a Date attribute counts seconds from.
    public var dateEpoch: DateEpoch = .unix

    /// Unix time.
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
