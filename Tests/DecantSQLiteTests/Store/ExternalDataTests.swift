import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Externally stored values whose file is missing follow `--missing-external-data`; files in `_EXTERNAL_DATA` are
/// read only when they are plain files inside that folder.
@Suite("External data")
struct ExternalDataTests {
    static let fileName = "5B3D0F2E-1111-4A4A-9C9C-000000000001"

    /// A library store whose Book 3 keeps its cover in `_EXTERNAL_DATA/<fileName>`, the file not created.
    static func storeWithExternalReference() throws -> (folder: URL, url: URL) {
        let folder = try Fixtures.temporaryDirectory { folder in
            let url = folder.appendingPathComponent("Library.sqlite")
            try StoreFeatureTests.writeLibrary(to: url)
            _ = try StoreFeatureTests.query(
                url, "UPDATE ZBOOK SET ZCOVER = CAST(X'02' || '\(fileName)' || X'00' AS BLOB) WHERE Z_PK = 3")
        }
        return (folder, folder.appendingPathComponent("Library.sqlite"))
    }

    static func copy(_ url: URL, policy: MissingExternalDataPolicy) throws -> (TransferReport, URL) {
        let store = try SQLiteStore(contentsOf: url)
        let model = try store.resolveModel(bundle: nil)
        var reader = try SQLiteStoreReader(store: store, model: model, missingExternalData: policy)
        let output = url.deletingLastPathComponent().appendingPathComponent("Out-\(policy).sqlite")
        var writer = try SQLiteStoreWriter(creating: output, model: model, journalMode: .delete)
        return (try RecordTransfer.copy(from: &reader, to: &writer), output)
    }

    @Test func failStopsNamingObjectAttributeAndFile() throws {
        let (folder, url) = try Self.storeWithExternalReference()
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = #expect(throws: DecantError.self) { try Self.copy(url, policy: .fail) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == "Book/p3")
        #expect(error?.location?.keyPath == "cover")
        #expect(error?.message.contains("_EXTERNAL_DATA/\(Self.fileName)") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Out-fail.sqlite").path))
    }

    @Test func keepWritesTheSameReference() throws {
        let (folder, url) = try Self.storeWithExternalReference()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (report, output) = try Self.copy(url, policy: .keep)
        #expect(report.isReconciled)
        #expect(report.written["Book"] == 2)
        #expect(report.diagnostics.count == 1)
        let warning = try #require(report.diagnostics.first)
        #expect(warning.kind == .missingExternalData)
        #expect(warning.location?.object == "Book/p3")
        #expect(warning.location?.keyPath == "cover")
        #expect(warning.file?.hasSuffix(".Library_SUPPORT/_EXTERNAL_DATA/\(Self.fileName)") == true)
        // The output holds exactly the input's reference, and reads back (under keep) as the same reference.
        #expect(
            try StoreFeatureTests.query(output, "SELECT hex(ZCOVER) FROM ZBOOK WHERE Z_PK = 3")
                == StoreFeatureTests.query(url, "SELECT hex(ZCOVER) FROM ZBOOK WHERE Z_PK = 3"))
        let reread = try SQLiteStore(contentsOf: output)
        let reader = try SQLiteStoreReader(store: reread, model: try reread.resolveModel(bundle: nil), missingExternalData: .keep)
        let book = try #require(try reader.records(of: "Book").first { $0.id == .primaryKey(3) })
        #expect(book.values[1] == .externalDataReference(Self.fileName))
    }

    @Test func nullWritesNil() throws {
        let (folder, url) = try Self.storeWithExternalReference()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (report, output) = try Self.copy(url, policy: .null)
        #expect(report.isReconciled)
        #expect(report.diagnostics.map(\.location?.object) == ["Book/p3"])
        #expect(try StoreFeatureTests.query(output, "SELECT ZCOVER IS NULL FROM ZBOOK WHERE Z_PK = 3") == ["1"])
    }

    @Test("links and names leaving the folder are refused", arguments: ["link", "folderLink", "name"])
    func refusesEscapes(_ kind: String) throws {
        let (folder, url) = try Self.storeWithExternalReference()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = StoreFiles(database: url)
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("private".utf8).write(to: secret)
        switch kind {
        case "link":
            try FileManager.default.createDirectory(at: files.externalDataFolder, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                at: files.externalDataFolder.appendingPathComponent(Self.fileName), withDestinationURL: secret)
        case "folderLink":
            let elsewhere = folder.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: secret, to: elsewhere.appendingPathComponent(Self.fileName))
            try FileManager.default.createDirectory(
                at: files.externalDataFolder.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: files.externalDataFolder, withDestinationURL: elsewhere)
        default:
            _ = try StoreFeatureTests.query(
                url, "UPDATE ZBOOK SET ZCOVER = CAST(X'02' || '../../secret.txt' || X'00' AS BLOB) WHERE Z_PK = 3")
        }
        for policy in MissingExternalDataPolicy.allCases {
            let error = #expect(throws: DecantError.self) { try Self.copy(url, policy: policy) }
            #expect(error?.code == .malformedInput)
            #expect(error?.location?.object == "Book/p3")
            #expect(error?.message.contains(kind == "name" ? "unsafe file name" : "symbolic link") == true, "\(error?.message ?? "")")
        }
    }
}
