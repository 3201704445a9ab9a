import Decant
import Foundation

/// A memo store is copied into place as it is (``StoreCopyingFormat``) and describes itself (``StoreDescribingFormat``)
/// from its first line, the NDJSON header naming its model version by hash, and the entity of each object's `@id`.
/// That is all it takes for `inspect` (``InputKind``, ``StoreReport``) and `seed` (``Seeding``) to take memo stores:
/// nothing in them names the memo format.
extension MemoFormat: StoreCopyingFormat, StoreDescribingFormat {
    /// A memo store is one file, copied as it is.
    func copyStore(from source: URL, to destination: URL) throws {
        try FileManager.default.copyItem(at: source, to: destination)
    }

    func describeStore(at url: URL) throws -> any DescribedStore {
        let lines = try Data(contentsOf: url).split(separator: UInt8(ascii: "\n"))
        guard let first = lines.first,
            let header = (try? JSONSerialization.jsonObject(with: first)) as? [String: Any],
            let decant = header["decant"] as? [String: Any], let model = decant["model"] as? [String: Any]
        else {
            throw DecantError(.malformedInput, "a memo store starts with its header", at: Location(path: url.displayPath, line: 1))
        }
        var counts: [String: Int] = [:]
        for (index, line) in lines.dropFirst().enumerated() {
            guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any],
                let id = object["@id"] as? String, let entity = id.split(separator: "/").first
            else {
                // A line that is no object of the store is damage, not something to leave out of the counts.
                throw DecantError(
                    .malformedInput, "expected an object with an @id", at: Location(path: url.displayPath, line: index + 2))
            }
            counts[String(entity), default: 0] += 1
        }
        let hashes = (model["entityVersionHashes"] as? [String: String] ?? [:]).compactMapValues { Data(base64Encoded: $0) }
        return DescribedMemoStore(
            url: url, storeUUID: (decant["metadata"] as? [String: String])?["NSStoreUUID"] ?? "",
            versionIdentifiers: model["versionIdentifiers"] as? [String] ?? [], entityVersionHashes: hashes,
            counts: counts)
    }
}

/// A memo store as it describes itself: no journal, no kept model.
struct DescribedMemoStore: DescribedStore {
    let url: URL
    let storeUUID: String
    let versionIdentifiers: [String]
    let entityVersionHashes: [String: Data]
    let counts: [String: Int]

    var kind: String { "memo store" }
    var journalMode: String? { nil }
    var storeType: String? { "Memo" }
    var frameworkVersion: Int? { nil }
    var modelCacheName: String? { nil }
    var hasModelCache: Bool { false }
    var cachedModel: ObjectModel? { nil }
    var modelCacheRefusal: DecantError? { nil }

    func objectCounts(model: ObjectModel?) throws -> [String: Int] { counts }

    func makeReader(model: ObjectModel, entities: Set<String>, options: FormatOptions) throws -> any RecordReader {
        try MemoFormat().makeReader(at: url, options: options)
    }
}
