public import DecantCore
public import Foundation
public import DecantCodecs

extension KeyedArchive {
    /// Whether the property list at `url` (`header`: its first bytes) is a keyed archive of app objects rather than a
    /// compiled model or mapping model (a `.mom` or `.cdm` without its extension). A file that does not decode is told
    /// by its first bytes, so the right reader reports what is wrong with it.
    public static func holdsAppObjects(at url: URL, header: Data) -> Bool {
        guard !["omo", "cdm"].contains(url.pathExtension.lowercased()) else { return false }
        guard let data = try? Data(contentsOf: url), let propertyList = try? PropertyListValue.decode(from: data)
        else { return ArchiveFormat.looksLikeKeyedArchive(header) }
        guard propertyList["$archiver"] != nil else { return false }
        guard let archive = try? KeyedArchive(propertyList: propertyList), let root = try? archive.rootObject() else {
            return true
        }
        return !root.isKind(of: "NSManagedObjectModel") && !root.isKind(of: "NSMappingModel")
    }
}

/// An archive the format recognised holds app objects, or is a compiled model or mapping model without its extension.
extension ArchiveFormat: InputClassifyingFormat {
    public func content(of probe: FormatProbe) -> InputContent {
        KeyedArchive.holdsAppObjects(at: probe.url, header: probe.header) ? .keyedArchive : .compiledModel
    }
}
