public import DecantCore
import Foundation
import DecantCodecs

/// A property list the format recognised is a plain one, or a keyed archive all the same; a file named as one is a
/// plain property list (its reader says what is wrong with it).
extension PropertyListFormat: InputClassifyingFormat {
    /// What a property list holds, decoded: a keyed archive all the same (an XML one whose first bytes do not name
    /// `$archiver`: of app objects, or a compiled model or mapping model without its extension), or a plain property
    /// list. A file that does not decode is a plain property list when named `.plist` (its reader says what is wrong),
    /// else taken for a compiled model, as before plain property lists were read.
    public func content(of probe: FormatProbe) -> InputContent {
        let isNamedPlist = probe.url.pathExtension.lowercased() == "plist"
        guard let data = try? Data(contentsOf: probe.url), let propertyList = try? PropertyListValue.decode(from: data)
        else { return isNamedPlist ? .propertyList : .compiledModel }
        guard propertyList["$archiver"] != nil else { return .propertyList }
        return KeyedArchive.holdsAppObjects(at: probe.url, header: probe.header) ? .keyedArchive : .compiledModel
    }

    public var contentByName: InputContent { .propertyList }
}
