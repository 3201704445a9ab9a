/// What an input holds, told by the format that recognised it: its records, or, for a format of Apple's property
/// lists, a keyed archive of app objects, a plain property list, or a compiled model (a `.mom` or `.cdm` without its
/// extension is a keyed archive too). `decant inspect` chooses its report by it (``InputClassifyingFormat``).
public enum InputContent: Sendable, Hashable {
    /// Records of the format.
    case records
    /// An NSKeyedArchiver archive of app objects.
    case keyedArchive
    /// A property list that is no keyed archive, compiled model or mapping model.
    case propertyList
    /// A compiled model or mapping model.
    case compiledModel
}

/// A format that tells what an input it recognised holds, when that can be more than its records: a keyed archive's
/// format tells an archive of app objects from a compiled model, a property list's format a plain list from an archive
/// (``InputContent``). `decant inspect` asks it, and names no format.
///
/// ```swift
/// if let format = registry.format(recognizing: probe) as? any InputClassifyingFormat {
///     print(format.content(of: probe))   // .keyedArchive
/// }
/// ```
public protocol InputClassifyingFormat: RecordFormat {
    /// What the input of `probe`, whose content this format recognised, holds.
    func content(of probe: FormatProbe) -> InputContent
    /// What an input named as this format holds when its content decides nothing (`--from`, or its extension, for a
    /// damaged file): by default its records.
    var contentByName: InputContent { get }
}

extension InputClassifyingFormat {
    public var contentByName: InputContent { .records }
}
