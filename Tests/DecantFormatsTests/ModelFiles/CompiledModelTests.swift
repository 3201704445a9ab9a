import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Compiled models (`.momd`, `.mom`) read through the generic keyed-archive decoder, checked against what Xcode
/// wrote beside them (`VersionInfo.plist`) and against their model sources; and Decant's own archive of a model
/// (what it stores in `Z_MODELCACHE`) read back.
@Suite("Compiled models")
struct CompiledModelTests {
    static let compiledBundles: [String] = Fixtures.corpusItems { $0.pathExtension == "momd" }
        .map(Fixtures.corpusRelativePath)
    static let compiledFiles: [String] = Fixtures.corpusItems { $0.pathExtension == "mom" }
        .map(Fixtures.corpusRelativePath)
    static let sourceBundles: [String] = Fixtures.corpusItems { $0.pathExtension == "xcdatamodeld" }
        .map(Fixtures.corpusRelativePath)

    /// The parameterized tests below run once per item: an empty list would pass.
    @Test func theCorpusHasItsModels() {
        #expect(Self.compiledBundles.count == 2)
        #expect(Self.compiledFiles.count == 6)
        #expect(Self.sourceBundles.count == 130)
    }

    @Test("every .mom reads, and its hashes equal VersionInfo.plist's", arguments: compiledBundles)
    func versionInfo(_ path: String) throws {
        let url = Fixtures.corpus(path)
        let bundle = try ModelBundle.load(from: url)
        let info = try PropertyListValue.decode(from: Data(contentsOf: url.appendingPathComponent("VersionInfo.plist")))
        #expect(bundle.currentVersionName == info["NSManagedObjectModel_CurrentVersionName"]?.stringValue)
        let table = try #require(info["NSManagedObjectModel_VersionHashes"]?.dictionaryValue)
        #expect(Set(table.keys) == Set(bundle.versions.compactMap(\.versionName)))
        for version in bundle.versions {
            let name = try #require(version.versionName)
            var expected: [String: Data] = [:]
            for (entity, hash) in table[name]?.dictionaryValue ?? [:] { expected[entity] = hash.dataValue }
            #expect(version.entityVersionHashes == expected, "\(name)")
            if let checksum = info["NSManagedObjectModel_VersionChecksums"]?[name]?.stringValue {
                #expect(version.versionChecksum == checksum, "\(name)")
            }
        }
    }

    @Test("every .mom reads on its own", arguments: compiledFiles)
    func singleFile(_ path: String) throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus(path))
        #expect(bundle.sourceKind == .mom)
        #expect(bundle.versions.count == 1)
        #expect(!(bundle.versions.first?.entities.isEmpty ?? true))
    }

    @Test("a compiled version equals its source version", arguments: compiledBundles)
    func matchesSource(_ path: String) throws {
        let compiled = try ModelBundle.load(from: Fixtures.corpus(path))
        let repository = String(path.prefix { $0 != "/" })
        let source = try #require(
            Self.sourceBundles.filter { $0.hasPrefix(repository) && $0.hasSuffix("/\(compiled.name).xcdatamodeld") }
                .first.map { try ModelBundle.load(from: Fixtures.corpus($0)) })
        for version in compiled.versions {
            let twin = try #require(source.versions.first { $0.versionName == version.versionName })
            #expect(version.entityVersionHashes == twin.entityVersionHashes)
            #expect(version.versionIdentifiers == twin.versionIdentifiers)
            #expect(Self.shape(of: version) == Self.shape(of: twin))
        }
    }

    @Test("Decant's archive of a model reads back with the same hashes", arguments: sourceBundles)
    func archiveRoundTrip(_ path: String) throws {
        let record = { (text: String) in _ = Issue.record(Comment(rawValue: text)) }
        // Only the allow-listed Xcode 3 models may fail to load; any other failure is an issue.
        guard let bundle = CorpusAllowList.loadModelBundle(Fixtures.corpus(path), record: record, load: ModelBundle.load(from:))
        else { return }
        for version in bundle.versions {
            let data = try ArchivedModelEncoder.encode(version)
            let back = try ArchivedModelDecoder.decode(data)
            #expect(back.entityVersionHashes == version.entityVersionHashes, "\(version.versionName ?? "")")
            #expect(Self.shape(of: back) == Self.shape(of: version))
        }
    }

    @Test func notAModelArchive() throws {
        let url = Fixtures.corpus(
            "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-UUIDTest.plist")
        let error = #expect(throws: DecantError.self) { try ArchivedModelDecoder.decode(Data(contentsOf: url)) }
        #expect(error?.code == .malformedInput)
    }

    /// What the compiled model keeps of a source: entities, inheritance, property names, types and flags.
    static func shape(of model: ObjectModel) -> [String] {
        model.entities.sorted { $0.name < $1.name }.flatMap { entity -> [String] in
            let header = "\(entity.name) < \(entity.parentName ?? "-") abstract=\(entity.isAbstract) "
                + "unique=\(entity.uniquenessConstraints) index=\(entity.fetchIndexes.map(\.name))"
            let attributes = entity.attributes.sorted { $0.name < $1.name }.map {
                "  \($0.name): \($0.type) optional=\($0.isOptional) transient=\($0.isTransient) "
                    + "external=\($0.allowsExternalBinaryDataStorage) derived=\($0.derivation?.expression ?? "-")"
            }
            let relationships = entity.relationships.sorted { $0.name < $1.name }.map {
                "  \($0.name) -> \($0.destinationEntity ?? "-") inverse=\($0.inverseName ?? "-") "
                    + "\($0.minCount)...\($0.maxCount) ordered=\($0.isOrdered) rule=\($0.deleteRule)"
            }
            return [header] + attributes + relationships
        }
    }
}
