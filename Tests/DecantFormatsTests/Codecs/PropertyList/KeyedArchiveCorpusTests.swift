import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Apple-written archives and property lists from the shared corpus.
@Suite("Keyed archives from the corpus")
struct KeyedArchiveCorpusTests {
    static let archives: [String] = Fixtures.corpusItems { url in
        let relative = Fixtures.corpusRelativePath(url)
        let name = url.lastPathComponent
        if relative.hasPrefix("apple__swift-corelibs-foundation/") {
            return name.hasSuffix(".archive") || (name.hasPrefix("NSKeyedUnarchiver-") && name.hasSuffix(".plist"))
        }
        if relative.hasPrefix("threeplanetssoftware__apple_cloud_notes_parser/") {
            return name.hasPrefix("ZSERVER") && name.hasSuffix(".bin")
        }
        if relative.hasPrefix("alemar11__CoreDataPlus/") {
            return name.hasSuffix(".mom") || name.hasSuffix(".cdm")
        }
        return false
    }.map(Fixtures.corpusRelativePath)

    static let versionInfos: [String] = Fixtures.corpusItems { url in
        Fixtures.corpusRelativePath(url).hasPrefix("alemar11__CoreDataPlus/")
            && url.lastPathComponent == "VersionInfo.plist"
    }.map(Fixtures.corpusRelativePath)

    static func load(_ relative: String) throws -> Data {
        try Data(contentsOf: Fixtures.corpus(relative))
    }

    @Test func corpusIsThere() {
        #expect(Self.archives.count >= 46 + 2 + 7)
        #expect(Self.versionInfos.count == 2)
    }

    @Test("Every object and class resolves, and matches plistlib", arguments: archives)
    func archiveDecodes(relative: String) throws {
        let data = try Self.load(relative)
        _ = try PropertyListValue.decode(from: data, path: relative)
        let archive = try KeyedArchive(data: data, path: relative)
        try archive.validate()
        var ourClasses: [String] = []
        for index in 0..<archive.objectCount {
            let object = try archive.object(at: index)
            ourClasses.append(object.className ?? "-")
            for (_, value) in object.fields {
                if case .uid = value { _ = try archive.object(for: value) }
            }
        }
        for key in archive.topKeys where archive.topValue(forKey: key)?.uidValue != nil {
            _ = try archive.topReference(forKey: key)
        }
        // Python's plistlib, independently: the class name of every $objects entry.
        let script = """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[1], 'rb'))
            objs = v['$objects']
            def uid(x):
                return x['CF$UID'] if isinstance(x, dict) else x.data
            for o in objs:
                print(objs[uid(o['$class'])]['$classname'] if isinstance(o, dict) and '$class' in o else '-')
            """
        let theirs = try PythonOracle.text(script, input: data).split(separator: "\n").map(String.init)
        #expect(ourClasses == theirs)
    }

    @Test(
        "Small archives decode as the whole tree",
        arguments: archives.filter { !$0.hasSuffix(".mom") && !$0.hasSuffix(".cdm") }
    )
    func treeDecodes(relative: String) throws {
        let data = try Self.load(relative)
        let archive = try KeyedArchive(data: data, path: relative)
        var ours: Set<String> = []
        var urls: Set<String> = []
        func collect(_ value: ArchivedValue) {
            switch value {
            case .string(let text): ours.insert(text)
            case .url(let text): urls.insert(text)
            case .array(let elements): elements.forEach(collect)
            case .dictionary(let entries):
                for entry in entries {
                    collect(entry.key)
                    collect(entry.value)
                }
            case .object(_, let fields): fields.forEach { collect($0.value) }
            default: break
            }
        }
        for key in archive.topKeys {
            let reference = archive.topValue(forKey: key)
            let tree = try archive.decodeTree(reference)
            // A reference to anything but `$null` decodes to a value.
            if let uid = reference?.uidValue, uid != 0 { #expect(tree != .null, "\(relative): $top.\(key)") }
            collect(tree)
        }
        // Python's plistlib, independently: every string the tree holds is a string of the archive.
        let script = """
            import plistlib, sys
            found = set()
            def walk(v):
                if isinstance(v, str): found.add(v)
                elif isinstance(v, (list, tuple)): [walk(x) for x in v]
                elif isinstance(v, dict): [walk(k) or walk(x) for k, x in v.items()]
            walk(plistlib.load(open(sys.argv[1], "rb")))
            print("\\n".join(sorted(found)))
            """
        let theirs = Set(try PythonOracle.text(script, input: data).split(separator: "\n").map(String.init))
        // (Python's lines cannot show an empty string or one with a line break.)
        let unknown = ours.filter { !$0.isEmpty && !$0.contains("\n") && !theirs.contains($0) }
        #expect(unknown.isEmpty, "\(relative): strings not in the archive: \(unknown.sorted())")
        // A URL is its base resolved with its relative string: it ends with a string of the archive.
        let unknownURLs = urls.filter { url in !theirs.contains { !$0.isEmpty && url.hasSuffix($0) } }
        #expect(unknownURLs.isEmpty, "\(relative): URLs not in the archive: \(unknownURLs.sorted())")
        // And the other way (an empty tree passed the checks above): every string the archive keeps as an object of
        // its own (an NSString in `$objects`) is in the tree, or is the base or relative part of a URL in it.
        let objectScript = """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[1], "rb"))
            print("\\n".join(sorted({o for o in v["$objects"] if isinstance(o, str) and o != "$null"})))
            """
        let objectStrings = try PythonOracle.text(objectScript, input: data).split(separator: "\n").map(String.init)
        let missing = objectStrings.filter { text in
            !text.contains("\n") && !ours.contains(text) && !urls.contains { $0.hasPrefix(text) || $0.hasSuffix(text) }
        }
        #expect(missing.isEmpty, "\(relative): strings of the archive not in the tree: \(missing.sorted())")
    }

    @Test func compiledModelsAreCyclicAndWalkByIndex() throws {
        let relative = "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3.mom"
        let archive = try KeyedArchive(data: try Self.load(relative), path: relative)
        let model = try #require(try archive.rootObject())
        #expect(model.className == "NSManagedObjectModel")
        let entities = try #require(try archive.stringKeyedEntries(forKey: "NSEntities", in: model))
        #expect(entities.map(\.key) == ["User"])
        let user = try #require(try archive.object(for: entities[0].value))
        #expect(try archive.string(forKey: "NSEntityName", in: user) == "User")
        // The entity points back at the model: a cycle, fine when walking by index.
        #expect(try archive.object(forKey: "NSManagedObjectModel", in: user)?.index == model.index)
        // A tree decode of the model must detect that cycle instead of recursing forever.
        let error = #expect(throws: DecantError.self) { try archive.decodeRootTree() }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object != nil)
    }

    @Test func uuidBytes() throws {
        let relative = "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-UUIDTest.plist"
        let data = try Self.load(relative)
        let archive = try KeyedArchive(data: data, path: relative)
        let uuid = try #require(try archive.uuid(archive.topValue(forKey: "root")))
        let expected = try PythonOracle.text(
            """
            import plistlib, sys, uuid
            v = plistlib.load(open(sys.argv[1], 'rb'))
            print(str(uuid.UUID(bytes=v['$objects'][1]['NS.uuidbytes'])).upper())
            """,
            input: data
        )
        #expect(uuid.uuidString == expected)
        #expect(try archive.decodeRootTree() == .uuid(uuid))
    }

    @Test func urlWithBase() throws {
        let relative = "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-URLTest.plist"
        let archive = try KeyedArchive(data: try Self.load(relative), path: relative)
        #expect(try archive.url(archive.topValue(forKey: "root")) == "https://www.example.com/foo.xml")
    }

    @Test func orderedSetForm() throws {
        let relative =
            "apple__swift-corelibs-foundation/Tests/Foundation/Resources/NSKeyedUnarchiver-OrderedSetTest.plist"
        let archive = try KeyedArchive(data: try Self.load(relative), path: relative)
        let elements = try #require(try archive.elements(archive.topValue(forKey: "root")))
        #expect(try elements.map { try archive.string($0) } == ["valgeir", "nico", "puzzle"])
        #expect(try archive.decodeRootTree() == .array([.string("valgeir"), .string("nico"), .string("puzzle")]))
    }

    @Test func arrayAndSetArchives() throws {
        let relative =
            "apple__swift-corelibs-foundation/Tests/Foundation/Resources/Fixtures/macOS-10.14/NSSet-Numbers.archive"
        let data = try Self.load(relative)
        let archive = try KeyedArchive(data: data, path: relative)
        guard case .array(let values) = try archive.decodeRootTree() else {
            Issue.record("NSSet did not decode as an array")
            return
        }
        let expected = try PythonOracle.text(
            """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[1], 'rb'))
            o = v['$objects']
            print(','.join(str(o[u.data]) for u in o[v['$top']['root'].data]['NS.objects']))
            """,
            input: data
        )
        #expect(
            values.map { value -> String in
                switch value {
                case .integer(let integer): "\(integer)"
                case .real(let real): "\(real)"
                default: "?"
                }
            }.joined(separator: ",") == expected
        )
    }

    @Test("VersionInfo.plist decodes", arguments: versionInfos)
    func versionInfo(relative: String) throws {
        let data = try Self.load(relative)
        let value = try PropertyListValue.decode(from: data, path: relative)
        let hashes = try #require(value["NSManagedObjectModel_VersionHashes"]?.dictionaryValue)
        let script = """
            import plistlib, sys, base64
            v = plistlib.load(open(sys.argv[1], 'rb'))
            print(v['NSManagedObjectModel_CurrentVersionName'])
            for version, entities in v['NSManagedObjectModel_VersionHashes'].items():
                for name, digest in entities.items():
                    print(version, name, base64.b64encode(digest).decode())
            """
        var lines = try PythonOracle.text(script, input: data).split(separator: "\n").map(String.init)
        #expect(value["NSManagedObjectModel_CurrentVersionName"]?.stringValue == lines.removeFirst())
        var ours: [String] = []
        for (version, entities) in hashes {
            for (name, digest) in entities.dictionaryValue ?? [:] {
                ours.append("\(version) \(name) \(digest.dataValue?.base64EncodedString() ?? "?")")
            }
        }
        #expect(ours.sorted() == lines.sorted())
    }

    @Test func sampleModel3VersionHash() throws {
        let relative =
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist"
        let value = try PropertyListValue.decode(from: try Self.load(relative), path: relative)
        let digest = value["NSManagedObjectModel_VersionHashes"]?["SampleModel3"]?["User"]?.dataValue
        #expect(digest?.base64EncodedString() == "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
        #expect(value["NSManagedObjectModel_CurrentVersionName"]?.stringValue == "SampleModel3")
    }

    @Test func modelCacheKnownKeysDictionary() throws {
        // Z_MODELCACHE of an Apple-written store: raw DEFLATE around a keyed archive whose NSEntities is an
        // NSKnownKeysDictionary1 (section 4.5). Python's sqlite3 pulls the blob out; we do the rest.
        let relative = "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"
        let blob = try PythonOracle.run(
            """
            import sqlite3, sys
            c = sqlite3.connect('file:' + sys.argv[2] + '?mode=ro&immutable=1', uri=True)
            sys.stdout.buffer.write(c.execute('select Z_CONTENT from Z_MODELCACHE').fetchone()[0])
            """,
            arguments: [Fixtures.corpus(relative).path]
        )
        let inflated = try Deflate.inflate(blob, path: relative)
        let archive = try KeyedArchive(data: inflated, path: relative)
        try archive.validate()
        let model = try #require(try archive.rootObject())
        let entitiesObject = try #require(try archive.object(forKey: "NSEntities", in: model))
        #expect(entitiesObject.className == "NSKnownKeysDictionary1")
        let entities = try #require(try archive.stringKeyedEntries(forKey: "NSEntities", in: model))
        #expect(entities.map(\.key) == ["User"])
        let user = try #require(try archive.object(for: entities[0].value))
        #expect(try archive.string(forKey: "NSEntityName", in: user) == "User")
    }
}
