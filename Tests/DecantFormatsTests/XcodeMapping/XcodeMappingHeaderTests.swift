import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// A mapping model's header (its entity names and hashes, read without building its mappings) says what the model
/// read whole says, for every mapping model of the corpora, and is read without reading the model whole.
@Suite("Xcode mapping model headers")
struct XcodeMappingHeaderTests {
    static let mappingModels: [URL] = Fixtures.corpusItems { url in
        ["xcmappingmodel", "cdm"].contains(url.pathExtension.lowercased())
    }

    @Test func everyCorpusMappingModelsHeaderHasTheHashesOfTheWholeRead() throws {
        #expect(Self.mappingModels.count >= 18)
        var compared = 0
        for url in Self.mappingModels {
            let observer = XcodeMappingParseObserver()
            let header = try XcodeMappingParseObserver.$current.withValue(observer) {
                try XcodeMappingHeader(contentsOf: url)
            }
            #expect(observer.parsed.isEmpty, "\(url.path)")
            // Every corpus mapping model reads whole without its bundle: one that does not fails here, never skips.
            let whole = try XcodeMappingModel.load(contentsOf: url, bundle: nil)
            let hashes = try header.entityHashes(bundle: nil)
            #expect(hashes.source == whole.sourceEntityHashes, "\(url.path)")
            #expect(hashes.destination == whole.destinationEntityHashes, "\(url.path)")
            #expect(header.sourceEntityNames == Set(whole.entityMappings.compactMap(\.sourceEntityName)), "\(url.path)")
            #expect(
                header.destinationEntityNames == Set(whole.entityMappings.compactMap(\.destinationEntityName)),
                "\(url.path)")
            compared += 1
        }
        #expect(compared == Self.mappingModels.count)
    }

    /// With the bundle whose versions the model paths name, the header takes the hashes from those versions, as the
    /// whole read compiles against them, and decodes no snapshot.
    @Test func theBundlesVersionsGiveTheHashesTheirPathsName() throws {
        let folder = "objcio__core-data/Migrations/Migrations"
        let bundle = try ModelBundle.load(from: Fixtures.corpus("\(folder)/Moody.xcdatamodeld"))
        for hop in ["Moody 2-Moody 3", "Moody 3-Moody 4", "Moody 4-Moody 5", "Moody 5-Moody 6"] {
            let url = Fixtures.corpus("\(folder)/\(hop).xcmappingmodel")
            let header = try XcodeMappingHeader(contentsOf: url)
            #expect(!header.needsSnapshot(bundle: bundle), "\(hop)")
            #expect(header.needsSnapshot(bundle: nil), "\(hop)")
            let whole = try XcodeMappingModel.load(contentsOf: url, bundle: bundle)
            let hashes = try header.entityHashes(bundle: bundle)
            #expect(hashes.source == whole.sourceEntityHashes, "\(hop)")
            #expect(hashes.destination == whole.destinationEntityHashes, "\(hop)")
        }
    }

    /// A model path naming a version of the bundle that lacks an entity the mapping names: the header throws what the
    /// whole read throws (`.modelMismatch`, naming the entity).
    @Test func anEntityTheNamedVersionLacksIsTheWholeReadsError() throws {
        let url = Fixtures.corpus("yonaskolb__XcodeGen/Tests/Fixtures/TestProject/App_iOS/Model.xcmappingmodel")
        var other = Entity(name: "Other")
        other.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        let bundle = ModelBundle(
            name: "Model",
            versions: [
                ObjectModel(versionName: "Model", entities: [other]),
                ObjectModel(versionName: "Model 2", entities: [other]),
            ], currentVersionName: "Model 2", sourceKind: .xcdatamodeld)
        let header = try XcodeMappingHeader(contentsOf: url)
        #expect(!header.needsSnapshot(bundle: bundle))
        let whole = #expect(throws: DecantError.self) { try XcodeMappingModel.load(contentsOf: url, bundle: bundle) }
        let read = #expect(throws: DecantError.self) { try header.entityHashes(bundle: bundle) }
        #expect(whole?.code == .modelMismatch)
        #expect(read?.code == whole?.code)
        #expect(read?.message == whole?.message)
    }

    /// The snapshots' base64 is skipped as raw bytes only when it is plain text: a character reference in it, or a
    /// CDATA section, is decoded as the whole read decodes it; an object the header skips is read when a comment in it
    /// could hide its end; the hashes still agree.
    @Test func referencesCDATAAndCommentsReadAsTheWholeReadReadsThem() throws {
        let source = Fixtures.corpus(
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel/xcmapping.xml")
        var text = try String(contentsOf: source, encoding: .utf8)
        for (key, wrap) in [("sourcemodeldata", false), ("destinationmodeldata", true)] {
            let tag = try #require(text.range(of: "<attribute name=\"\(key)\" type=\"binary\">"))
            let end = try #require(text.range(of: "</attribute>", range: tag.upperBound..<text.endIndex))
            let payload = String(text[tag.upperBound..<end.lowerBound])
            let changed = wrap ? "<![CDATA[" + payload + "]]>" : "&#10;" + payload.replacingOccurrences(of: "\n", with: "&#10;")
            text.replaceSubrange(tag.upperBound..<end.lowerBound, with: changed)
        }
        // Objects the header skips unread: one holding a comment that looks like its end tag is read instead.
        let attribute = try #require(text.range(of: "<object type=\"XDDEVATTRIBUTEMAPPING\""))
        let inside = try #require(text.range(of: ">", range: attribute.upperBound..<text.endIndex))
        text.insert(contentsOf: "<!-- </object> <object type=\"XDDEVMAPPINGMODEL\" id=\"z1\"> -->", at: inside.upperBound)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("V2toV3.xcmappingmodel", isDirectory: true)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: model.appendingPathComponent("xcmapping.xml"))

        let whole = try XcodeMappingModel.load(contentsOf: model, bundle: nil)
        let hashes = try XcodeMappingHeader(contentsOf: model).entityHashes(bundle: nil)
        #expect(!hashes.source.isEmpty)
        #expect(hashes.source == whole.sourceEntityHashes)
        #expect(hashes.destination == whole.destinationEntityHashes)
    }
}
