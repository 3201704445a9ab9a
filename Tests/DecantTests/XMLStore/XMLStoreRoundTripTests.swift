import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// `store → XML store → store` keeps every object, value, relationship and order, on every corpus store and on the
/// library model with every attribute type and relationship kind, through the registry as `decant convert` does.
@Suite("Store to XML store and back")
struct XMLStoreRoundTripTests {
    static let stores = CSVStoreRoundTripTests.stores

    /// Converts `store` to `format` and back to a store beside it; returns the intermediate file and the new store.
    static func roundTrip(_ store: URL, through format: String, options: FormatOptions) throws -> (
        middle: URL, back: URL
    ) {
        let folder = store.deletingLastPathComponent()
        let middle = folder.appendingPathComponent("middle.\(format == "xml" ? "xml" : "binarystore")")
        let back = folder.appendingPathComponent("back.sqlite")
        let out = try StoreConversion.convert(from: store, to: middle, outputFormat: format, options: options)
        #expect(out.outputFormat == format)
        let home = try StoreConversion.convert(from: middle, to: back, options: options)
        #expect(home.inputFormat == format)
        #expect(home.read == out.written)
        #expect(home.written == out.read)
        return (middle, back)
    }

    @Test("every corpus store goes to an XML store and back unchanged", arguments: stores)
    func corpusStore(_ store: String) throws {
        let copy = try CSVStoreRoundTripTests.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let opened = try SQLiteStore(contentsOf: copy)
        let model = try opened.resolveModel(
            bundle: CorpusStoreModels.bundle(forStore: store, hashes: opened.metadata.entityVersionHashes))
        let bundle = ModelBundle(
            name: "Cache", versions: [model], currentVersionName: model.versionName, sourceKind: .storeCache)
        guard
            let (xml, back) = try CorpusAllowList.readingRows(of: store, refusedBy: CorpusAllowList.danglingReferences, {
                try Self.roundTrip(copy, through: "xml", options: FormatOptions(bundle: bundle))
            })
        else { return }
        let original = try CSVStoreRoundTripTests.records(of: copy, model: model)
        // Every row the store holds was read (some real stores are empty fixtures).
        #expect(try original.values.map(\.count).reduce(0, +) == opened.objectCounts(model: model).values.reduce(0, +))
        ObjectGraph.expectEqual(original, try CSVStoreRoundTripTests.records(of: back, model: model), model: model)
        // The XML store carries the version hashes of its model version.
        let reader = try XMLStoreReader(contentsOf: xml, options: FormatOptions(bundle: bundle))
        #expect(reader.metadata.entityVersionHashes == model.entityVersionHashes)
        #expect(reader.metadata.versionHashesDigest == model.versionHashesDigest)
        #expect(try SQLiteStore(contentsOf: back).metadata.entityVersionHashes == model.entityVersionHashes)
    }

    static func libraryStore(in folder: URL) throws -> URL {
        let store = folder.appendingPathComponent("Library.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: LibraryFixture.model, journalMode: .delete)
        for batch in LibraryFixture.batches { try writer.write(batch) }
        try writer.finish()
        return store
    }

    @Test func libraryGoesToAnXMLStoreAndBackUnchanged() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.libraryStore(in: folder)
        let options = FormatOptions(bundle: LibraryFixture.bundle)
        let (xml, back) = try Self.roundTrip(store, through: "xml", options: options)
        let model = LibraryFixture.model
        ObjectGraph.expectEqual(
            try CSVStoreRoundTripTests.records(of: store, model: model),
            try CSVStoreRoundTripTests.records(of: back, model: model), model: model)
        // The ordered one-to-many keeps its order.
        #expect(
            try StoreFeatureQuery.rows(
                back,
                "SELECT ZTITLE FROM ZBOOK WHERE ZSHELF = (SELECT Z_PK FROM ZSHELF WHERE ZLABEL = 'Fiction') "
                    + "ORDER BY Z_FOK_SHELF") == ["", "Dune", "Snow Crash"])
        // The file is laid out as Core Data writes it.
        let text = String(decoding: try Data(contentsOf: xml), as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" standalone=\"yes\"?>\n<!DOCTYPE database SYSTEM "))
        #expect(text.contains("\n\n<database>\n    <databaseInfo>\n        <version>134481920</version>\n"))
        #expect(text.contains("<object type=\"EBOOK\" id=\"z"))
        #expect(text.contains("<attribute name=\"filesize\" type=\"int64\">1099511627776</attribute>"))
        #expect(text.contains("type=\"0/0\" destination=\"AUTHOR\" idrefs=\"z"))
        // The empty shelf keeps its empty to-many, without idrefs.
        #expect(text.contains("<relationship name=\"books\" type=\"0/0\" destination=\"BOOK\"></relationship>"))
        #expect(text.contains("<attribute name=\"title\" type=\"string\"></attribute>"))
        #expect(text.hasSuffix("</database>"))
        // Objects in ascending id order, from z102, and nextObjectID the highest.
        let ids = text.components(separatedBy: " id=\"z").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(ids == Array(102..<(102 + ids.count)))
        #expect(text.contains("<nextObjectID>\(101 + ids.count)</nextObjectID>"))
    }

    @Test func sniffedByContentWhateverItsName() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.libraryStore(in: folder)
        let xml = folder.appendingPathComponent("library.data")
        _ = try StoreConversion.convert(
            from: store, to: xml, outputFormat: "xml", options: FormatOptions(bundle: LibraryFixture.bundle))
        #expect(try FormatRegistry.builtIn.inputFormat(of: xml, named: nil).name == "xml")
        let mapping = Fixtures.corpusItems { $0.lastPathComponent == "xcmapping.xml" }
        for url in mapping { #expect(try FormatRegistry.builtIn.inputFormat(of: url, named: nil).name == "xml") }
    }

    // MARK: Bad input

    /// Writes the library as an XML store, lets `damage` edit its text, and converts it to a store.
    static func convertDamaged(_ damage: (String) -> String) throws -> (error: DecantError, folder: URL) {
        let folder = try Fixtures.temporaryDirectory()
        let store = try libraryStore(in: folder)
        let xml = folder.appendingPathComponent("library.xml")
        let options = FormatOptions(bundle: LibraryFixture.bundle)
        _ = try StoreConversion.convert(from: store, to: xml, options: options)
        let text = String(decoding: try Data(contentsOf: xml), as: UTF8.self)
        try Data(damage(text).utf8).write(to: xml)
        let output = folder.appendingPathComponent("out.sqlite")
        let error = try #require(throws: DecantError.self) {
            _ = try StoreConversion.convert(from: xml, to: output, options: options)
        }
        #expect(error.code.exitCode == 65, "\(error)")
        #expect(error.location?.path?.hasSuffix("library.xml") == true, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["Library.sqlite", "library.xml"], "output left behind: \(left)")
        return (error, folder)
    }

    @Test func truncatedFileFailsWithItsLine() throws {
        let (error, folder) = try Self.convertDamaged { String($0.prefix($0.count * 2 / 3)) }
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(error.code == .malformedInput)
        #expect(error.location?.line != nil)
    }

    @Test func wrongTypesFailNamingEntityAndObject() throws {
        let (error, folder) = try Self.convertDamaged {
            $0.replacingOccurrences(of: "type=\"int32\">101<", with: "type=\"int32\">one hundred one<")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(error.code == .malformedInput)
        #expect(error.location?.entity == "Book")
        #expect(error.location?.object?.hasPrefix("z") == true)
        #expect(error.location?.keyPath == "pages")
        #expect(error.location?.line != nil)
        #expect(error.message.contains("not a valid int32 value"))
        // A value written with another type than the model's.
        let (typed, other) = try Self.convertDamaged {
            $0.replacingOccurrences(of: "name=\"pages\" type=\"int32\"", with: "name=\"pages\" type=\"string\"")
        }
        defer { try? FileManager.default.removeItem(at: other) }
        #expect(typed.message.contains("written as type string"))
    }

    @Test func unknownIdrefsFailNamingTheRelationship() throws {
        let (error, folder) = try Self.convertDamaged {
            $0.replacingOccurrences(of: "destination=\"SHELF\" idrefs=\"z", with: "destination=\"SHELF\" idrefs=\"z9")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(error.code == .malformedInput)
        #expect(error.message.contains("not an object of this store"))
        #expect(error.location?.keyPath == "shelf")
        #expect(error.location?.object != nil)
        #expect(error.location?.line != nil)
    }

    @Test func brokenXMLFailsWithItsLine() throws {
        let (error, folder) = try Self.convertDamaged {
            $0.replacingOccurrences(
                of: "</object>\n    <object type=\"AUTHOR\"", with: "</objet>\n    <object type=\"AUTHOR\"")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(error.code == .malformedInput)
        #expect(error.message.contains("</objet> closes <object>"))
        #expect((error.location?.line ?? 0) > 10)
    }
}
