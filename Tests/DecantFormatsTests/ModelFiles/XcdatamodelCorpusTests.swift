import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Every Xcode model source in the corpus (and the legacy corpus) loads, Xcode 3 models (`elements`) included.
@Suite("Xcdatamodel corpus")
struct XcdatamodelCorpusTests {
    static let versionFolders: [String] = Fixtures.corpusItems { $0.pathExtension == "xcdatamodel" }
        .map(Fixtures.corpusRelativePath)
    static let bundles: [String] = Fixtures.corpusItems { $0.pathExtension == "xcdatamodeld" }
        .map(Fixtures.corpusRelativePath)

    @Test func corpusHasTheExpectedNumberOfModels() {
        // 132 in the corpus, 1 (RestKit's Xcode 3 model) in the legacy corpus, 76 in the apps corpus.
        #expect(Self.versionFolders.count == 209)
        // 102 in the corpus, 28 in the apps corpus.
        #expect(Self.bundles.count == 130)
    }

    @Test(arguments: versionFolders)
    func everyVersionFolderLoadsOrIsLegacy(_ relativePath: String) throws {
        let url = Fixtures.corpus(relativePath)
        let hasContents = FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path)
        if hasContents {
            let bundle = try ModelBundle.load(from: url)
            #expect(bundle.sourceKind == .xcdatamodel)
            let model = try #require(bundle.versions.first)
            #expect(bundle.versions.count == 1)
            #expect(model.versionName == url.deletingPathExtension().lastPathComponent)
            #expect(!model.entities.isEmpty || model.composites.isEmpty)
            // Every entity in the file is read, and every property element.
            let text = try String(contentsOf: url.appendingPathComponent("contents"), encoding: .utf8)
            #expect(model.entities.count == occurrences(of: "<entity ", in: text))
            let attributes = model.entities.reduce(0) { $0 + $1.attributes.count }
                + model.composites.reduce(0) { $0 + $1.attributes.count }
            #expect(attributes == occurrences(of: "<attribute ", in: text))
            #expect(model.entities.reduce(0) { $0 + $1.relationships.count } == occurrences(of: "<relationship ", in: text))
            // The hashes can be computed for every entity.
            #expect(model.entityVersionHashes.count == model.entities.count)
        } else {
            // An Xcode 3 model: every XDPMEntity, XDPMAttribute and XDPMRelationship of the archive is read.
            let elements = url.appendingPathComponent("elements")
            let archive = try KeyedArchive(data: Data(contentsOf: elements), path: elements.path)
            var classes: [String: Int] = [:]
            for index in 0..<archive.objectCount {
                guard case .dictionary = try archive.entry(at: index) else { continue }
                if let name = try archive.object(at: index).className { classes[name, default: 0] += 1 }
            }
            let bundle = try ModelBundle.load(from: url)
            let model = try #require(bundle.versions.first)
            #expect(bundle.versions.count == 1 && model.isXcode3Model)
            #expect(model.versionName == url.deletingPathExtension().lastPathComponent)
            #expect(model.entities.count == classes["XDPMEntity"] ?? 0)
            #expect(model.entities.reduce(0) { $0 + $1.attributes.count } == classes["XDPMAttribute"] ?? 0)
            #expect(model.entities.reduce(0) { $0 + $1.relationships.count } == classes["XDPMRelationship"] ?? 0)
            #expect(model.entityVersionHashes.count == model.entities.count)
        }
    }

    @Test(arguments: bundles)
    func everyVersionedBundleLoads(_ relativePath: String) throws {
        let url = Fixtures.corpus(relativePath)
        let folders = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".xcdatamodel") }
        let legacy = folders.filter {
            !FileManager.default.fileExists(atPath: url.appendingPathComponent($0).appendingPathComponent("contents").path)
        }
        let bundle = try ModelBundle.load(from: url)
        #expect(bundle.sourceKind == .xcdatamodeld)
        // Xcode 3 versions load with the others, each marked.
        #expect(
            Set(bundle.versions.filter(\.isXcode3Model).compactMap(\.versionName))
                == Set(legacy.map { String($0.dropLast(12)) }))
        #expect(bundle.name == url.deletingPathExtension().lastPathComponent)
        #expect(Set(bundle.versions.compactMap(\.versionName)) == Set(folders.map { String($0.dropLast(12)) }))
        let marker = url.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path) {
            let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: marker), format: nil)
            let dictionary = try #require(plist as? [String: Any])
            // Some Xcode-written markers are an empty dictionary: no current version was ever chosen.
            let named = dictionary["_XCCurrentVersionName"] as? String
            #expect(bundle.currentVersionName.map { $0 + ".xcdatamodel" } == named)
            if named != nil { #expect(bundle.currentVersion?.versionName == bundle.currentVersionName) }
        } else {
            #expect(bundle.currentVersionName == nil)
        }
    }

    private func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}
