import DecantCore
import DecantCodecs
import Foundation

/// The small JSON files that say how a model-less input becomes objects (a keyed archive's class mapping, a property
/// list's array mapping): their bytes and top-level object, with failures located at the file and key.
enum JSONMappingFile {
    /// The bytes of the mapping file at `url`; `what` names it in the error (`"class mapping"`).
    /// - Throws: `.fileNotFound` when it cannot be read.
    static func data(at url: URL, describing what: String) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw DecantError(
                .fileNotFound, "cannot read the \(what) file", at: Location(path: url.displayPath),
                underlyingError: error)
        }
    }

    /// The top-level object of a mapping's JSON `data`.
    /// - Throws: `.malformedInput` when it is not JSON, or `shape` (located at `key`) when it is not an object.
    static func object(_ data: Data, at location: Location, describing what: String, shape: String, key: String)
        throws -> [String: Any]
    {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw DecantError(.malformedInput, "the \(what) is not JSON", at: location, underlyingError: error)
        }
        guard let root = document as? [String: Any] else {
            throw failure("the \(what) must be \(shape)", key: key, at: location)
        }
        return root
    }

    /// A `.malformedInput` error at `key` of the mapping at `location`.
    static func failure(_ message: String, key: String, at location: Location) -> DecantError {
        var here = location
        here.keyPath = key
        return DecantError(.malformedInput, message, at: here)
    }
}
