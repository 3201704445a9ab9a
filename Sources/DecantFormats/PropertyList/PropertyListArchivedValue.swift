import DecantCore
import DecantCodecs
import Foundation

/// A keyed archive held in a property list's `Data` value (an `NSKeyedArchiver` archive that an app put there,
/// as user defaults hold colours and dates): told by its content, and decoded in place to its root object.
enum PropertyListArchivedValue {
    /// Whether `data` is a property list naming `$archiver` (binary, or XML starting with `<?xml` / `<plist`).
    static func looksLikeArchive(_ data: Data) -> Bool {
        let header = data.prefix(512)
        let isPropertyList =
            BinaryPropertyListReader.isBinaryPropertyList(header) || header.range(of: Data("<plist".utf8)) != nil
        return isPropertyList && data.range(of: Data("$archiver".utf8)) != nil
    }

    /// The archive in `data`, or nil when `data` is not one. `place` names the value (`Bookmarks[2].Icon`).
    /// - Throws: `.malformedInput` naming the file, the value and the archive's object when it looks like an archive
    ///   but does not decode.
    static func archive(in data: Data, path: String, place: String) throws -> KeyedArchive? {
        guard looksLikeArchive(data) else { return nil }
        let value: PropertyListValue
        do {
            value = try PropertyListValue.decode(from: data, path: path)
        } catch let error as DecantError {
            throw located(error, path: path, place: place)
        }
        guard value["$archiver"] != nil else { return nil }
        do {
            return try KeyedArchive(propertyList: value, path: path)
        } catch let error as DecantError {
            throw located(error, path: path, place: place)
        }
    }

    /// The archive's root object resolved one level (a Foundation value, a collection, an app object).
    static func root(of archive: KeyedArchive, path: String, place: String) throws -> ArchiveField {
        do {
            guard let root = try archive.rootObject() else { return .null }
            return try ArchiveField.resolve(root, in: archive)
        } catch let error as DecantError {
            throw located(error, path: path, place: place)
        }
    }

    /// A short description of the root: its kind and, for a value, its text (`date 2024-05-19T18:14:06Z`).
    static func summary(of field: ArchiveField) -> String {
        switch field {
        case .string(let text): "string " + (text.count > 60 ? String(text.prefix(57)) + "…" : text)
        case .integer(let value): "integer \(value)"
        case .real(let value): "real \(value)"
        case .bool(let value): "boolean \(value)"
        case .date(let seconds):
            "date " + ISO8601DateFormatter().string(from: Date(timeIntervalSinceReferenceDate: seconds))
        case .data(let data): "data (\(data.count) bytes)"
        case .uuid(let uuid): "uuid \(uuid.uuidString)"
        case .url(let url): "url \(url)"
        case .nsValue(let kind, let text): "\(kind) \(text)"
        case .collection(let kind, _, let elements): "\(kind) of \(elements.count)"
        case .dictionary(_, let count): "dictionary of \(count)"
        case .null: "nil"
        case .object(let object): "object of class \(object.className ?? "?")"
        }
    }

    /// `error` with the place of the value that holds the archive put before what the archive's reader said.
    static func located(_ error: DecantError, path: String, place: String) -> DecantError {
        let innerLocation = error.location ?? Location()
        let inner = [
            innerLocation.object, innerLocation.keyPath, innerLocation.offset.map { "byte \($0) of the archive" },
        ].compactMap { $0 }.joined(separator: ", ")
        let location = Location(path: path, keyPath: place)
        return DecantError(
            error.code, "the keyed archive in this value: " + (inner.isEmpty ? "" : inner + ": ") + error.message,
            at: location, underlyingError: error.underlyingError)
    }
}
