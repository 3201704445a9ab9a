import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// For every SQLite store in the corpus, a model source from the same corpus repository hashes to the store's
/// `NSStoreModelVersionHashes`, read by Python's sqlite3 + plistlib as an independent oracle.
@Suite("Store metadata hashes")
struct StoreMetadataHashTests {
    static let stores: [String] = Fixtures.corpusStores

    /// Reads `Z_METADATA.Z_PLIST`'s `NSStoreModelVersionHashes` from a copy of the store (with its -wal/-shm).
    static func storeHashes(_ store: URL) throws -> [String: Data] {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("store.sqlite")
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: store.path + suffix)
            if FileManager.default.fileExists(atPath: source.path) {
                try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: copy.path + suffix))
            }
        }
        let script = """
            import sqlite3, plistlib, json, base64, sys
            con = sqlite3.connect(sys.argv[2])
            blob = con.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0]
            hashes = plistlib.loads(blob)["NSStoreModelVersionHashes"]
            print(json.dumps({k: base64.b64encode(v).decode() for k, v in hashes.items()}))
            """
        let data = try PythonOracle.run(script, arguments: [copy.path])
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        return try json.mapValues { try #require(Data(base64Encoded: $0)) }
    }

    @Test func corpusHasStores() {
        #expect(Self.stores.count >= 10)
    }

    @Test(arguments: stores)
    func storeHashesMatchAModelSourceInTheSameRepository(_ relativePath: String) throws {
        let store = Fixtures.corpus(relativePath)
        let hashes = try Self.storeHashes(store)
        #expect(!hashes.isEmpty)
        let repository = String(relativePath.prefix { $0 != "/" })
        let bundles = Fixtures.corpusItems { url in
            url.pathExtension == "xcdatamodeld"
                || (url.pathExtension == "xcdatamodel" && url.deletingLastPathComponent().pathExtension != "xcdatamodeld")
        }
            .filter { Fixtures.corpusRelativePath($0).hasPrefix(repository + "/") }
        var candidates: [ObjectModel] = []
        for url in bundles {
            // Only the allow-listed Xcode 3 models may fail to load; any other failure is an issue.
            let record = { (text: String) in _ = Issue.record(Comment(rawValue: text)) }
            guard let bundle = CorpusAllowList.loadModelBundle(url, record: record, load: ModelBundle.load(from:))
            else { continue }
            candidates += bundle.versions.filter { Set($0.entities.map(\.name)) == Set(hashes.keys) }
        }
        if let reason = CorpusAllowList.storesWithoutModelSource[relativePath] {
            #expect(candidates.isEmpty, "\(relativePath) is allow-listed (\(reason)) but has a model source now")
            return
        }
        try #require(
            !candidates.isEmpty, "\(relativePath): no model source with entities \(hashes.keys.sorted())")
        let matching = candidates.filter { $0.entityVersionHashes == hashes }
        #expect(
            !matching.isEmpty,
            "no version of \(candidates.compactMap(\.versionName)) hashes to the metadata of \(relativePath)")
    }
}
