import DecantFormats
import DecantCodecs
import DecantTestSupport
import Foundation
import Testing

/// Xcode 3 models (`elements`) through the commands: `inspect` (marked as such, diagrams), and the store RestKit's
/// Xcode 3 model wrote (framework 419, no `Z_MODELCACHE`) converted and migrated with it.
@Suite("decant on Xcode 3 models", .serialized, .requiresDecantBinary)
struct Xcode3ModelCommandTests {
    static let folder = "RestKit__RestKit/Examples/RKTwitterCoreData"
    static let model = Fixtures.legacyCorpus("\(folder)/Resources/RKTwitterCoreData.xcdatamodel")
    static let store = Fixtures.legacyCorpus("\(folder)/RKSeedDatabase.sqlite")

    /// Version 2 of the Twitter model, written as Xcode 4 and later write it: `Tweet` gains `retweetCount`, and
    /// `user` takes the modern optional to-one form; `User` is unchanged.
    static let secondVersion = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Tweet" representedClassName="RKTweet">
        <attribute name="createdAt" optional="YES" attributeType="Date"/>
        <attribute name="inReplyToScreenName" optional="YES" attributeType="String"/>
        <attribute name="isFavorited" optional="YES" attributeType="Boolean"/>
        <attribute name="retweetCount" optional="YES" attributeType="Integer 64" defaultValueString="0"/>
        <attribute name="statusID" optional="YES" attributeType="Integer 64"/>
        <attribute name="text" optional="YES" attributeType="String"/>
        <attribute name="urlString" optional="YES" attributeType="String"/>
        <relationship name="user" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="User" inverseName="status" inverseEntity="User"/>
        </entity>
        <entity name="User">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="screenName" optional="YES" attributeType="String"/>
        <attribute name="userID" optional="YES" attributeType="Integer 64"/>
        <relationship name="status" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tweet" inverseName="user" inverseEntity="Tweet"/>
        </entity>
        </model>
        """

    /// `Twitter.xcdatamodeld` in `folder`: the corpus's Xcode 3 version (its `elements` copied) and a modern
    /// `RKTwitterCoreData 2`, current.
    static func twoVersionBundle(in folder: URL) throws -> URL {
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Twitter.xcdatamodeld"), withIntermediateDirectories: true)
        let bundle = try ModelBundleFiles.write("Twitter", versions: [], current: "RKTwitterCoreData 2", in: folder)
        let legacy = bundle.appendingPathComponent("RKTwitterCoreData.xcdatamodel")
        let modern = bundle.appendingPathComponent("RKTwitterCoreData 2.xcdatamodel")
        for version in [legacy, modern] { try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(
            at: model.appendingPathComponent("elements"), to: legacy.appendingPathComponent("elements"))
        try Data(secondVersion.utf8).write(to: modern.appendingPathComponent("contents"))
        return bundle
    }

    /// The tweets of a store as Python's sqlite3 reads them: primary key → (text, statusID, user's primary key).
    static func tweets(in store: URL, extra: String = "NULL") throws -> [Int: [String]] {
        let script = """
            import sqlite3, sys, json
            con = sqlite3.connect("file:" + sys.argv[2] + "?mode=ro", uri=True)
            rows = con.execute("SELECT Z_PK, ZTEXT, ZSTATUSID, ZUSER, \(extra) FROM ZTWEET").fetchall()
            print(json.dumps({str(r[0]): [str(v) for v in r[1:]] for r in rows}))
            """
        let data = try PythonOracle.run(script, arguments: [store.path])
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String]])
        return Dictionary(uniqueKeysWithValues: json.compactMap { key, value in Int(key).map { ($0, value) } })
    }

    @Test func inspectSaysTheVersionIsXcode3() throws {
        let text = try EndToEndTests.run(["inspect", Self.model.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("version RKTwitterCoreData (current)\n  format:      Xcode 3 model (elements)\n"))
        #expect(text.stdout.contains("Tweet  03/3h3rvyZ47wXshv/VXUgXc4yBt3dSvlv148MVfP90=  6 attributes, 1 relationships"))
        #expect(text.stdout.contains("User  0l9cLHSs9tngemqQ6YaBlitgrL9+hJnrT8ajvmvao5c=  3 attributes, 1 relationships"))
        let json = try EndToEndTests.run(["inspect", Self.model.path, "--json"])
        #expect(json.status == 0)
        #expect(try EndToEndTests.validate(json.stdout) == "valid")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let versions = try #require(document["versions"] as? [[String: Any]])
        #expect(versions.map { $0["isXcode3Model"] as? Bool } == [true])
        // mogenerator's Xcode 3 bundle in the corpus, refused before, reads too.
        let ponso = Fixtures.corpus(
            "rentzsch__mogenerator/contributed templates/Nikita Zhuk/ponso/sample project/PonsoTest/MyModel.xcdatamodeld")
        let other = try EndToEndTests.run(["inspect", ponso.path])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(other.stdout.contains("format:      Xcode 3 model (elements)"))
    }

    @Test func theStoreMatchesTheModelAndConvertsWithIt() throws {
        let inspected = try EndToEndTests.run(["inspect", Self.store.path, "--model", Self.model.path])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdout.contains("model:             matches RKTwitterCoreData version RKTwitterCoreData"))

        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("out.json")
        let converted = try EndToEndTests.run(["convert", Self.store.path, json.path, "--model", Self.model.path])
        #expect(converted.status == 0, "\(converted.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let objects = try #require(document["objects"] as? [[String: Any]])
        #expect(objects.count == 22)
        let expected = try Self.tweets(in: Self.store)
        #expect(expected.count == 20)
        var seen = 0
        for object in objects {
            guard let id = object["@id"] as? String, id.hasPrefix("Tweet/p"), let key = Int(id.dropFirst(7)) else { continue }
            let row = try #require(expected[key], "\(id)")
            #expect(object["text"] as? String == row[0], "\(id)")
            #expect((object["statusID"] as? NSNumber)?.int64Value == Int64(row[1]), "\(id)")
            #expect(object["user"] as? String == "User/p\(row[2])", "\(id)")
            seen += 1
        }
        #expect(seen == 20)

        // To a new SQLite store, which then matches the model by hashes and has the same tweets.
        let sqlite = folder.appendingPathComponent("out.sqlite")
        let copied = try EndToEndTests.run(["convert", Self.store.path, sqlite.path, "--model", Self.model.path, "--journal", "delete"])
        #expect(copied.status == 0, "\(copied.stderr)")
        let again = try EndToEndTests.run(["inspect", sqlite.path, "--model", Self.model.path])
        #expect(again.stdout.contains("matches RKTwitterCoreData version RKTwitterCoreData"), "\(again.stdout)")
        #expect(try Self.tweets(in: sqlite) == expected)
    }

    @Test func theStoreMigratesToAModernVersion() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.twoVersionBundle(in: folder)
        let store = try Fixtures.copyStore(Self.store, into: folder)

        let plan = try EndToEndTests.run(["plan", store.path, "--model", bundle.path])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("version RKTwitterCoreData → RKTwitterCoreData 2"), "\(plan.stdout)")
        #expect(plan.stdout.contains("retweetCount = 0"), "\(plan.stdout)")

        let output = folder.appendingPathComponent("v2.sqlite")
        let migrated = try EndToEndTests.run(["migrate", store.path, "--model", bundle.path, "--output", output.path])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("migrated RKTwitterCoreData → RKTwitterCoreData 2"), "\(migrated.stdout)")
        let inspected = try EndToEndTests.run(["inspect", output.path, "--model", bundle.path])
        #expect(inspected.stdout.contains("matches Twitter version RKTwitterCoreData 2"), "\(inspected.stdout)")
        // Every tweet kept its text, id and user, and has the new attribute's default.
        let before = try Self.tweets(in: Self.store, extra: "0")
        let after = try Self.tweets(in: output, extra: "ZRETWEETCOUNT")
        #expect(after == before)
        #expect(try Data(contentsOf: store) == Data(contentsOf: Self.store), "the input changed")
    }

    /// `Tweet.user` is archived with minCount 1 but optional: a tweet without a user converts and validates, as
    /// Core Data lets an empty optional relationship pass its count checks.
    @Test func anEmptyOptionalToOneArchivedWithMinCountOneValidates() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("tweets.json")
        try Data(#"[{"text": "no user"}, {"text": "none either"}]"#.utf8).write(to: input)
        let store = folder.appendingPathComponent("tweets.sqlite")
        let converted = try EndToEndTests.run(
            ["convert", input.path, store.path, "--model", Self.model.path, "--entity", "Tweet"])
        #expect(converted.status == 0, "\(converted.stderr)")
        let validated = try EndToEndTests.run(["validate", store.path, "--model", Self.model.path])
        #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
        #expect(validated.stdout.contains("2 objects checked against RKTwitterCoreData, all valid"), "\(validated.stdout)")
    }

    @Test func inferMappingAndDiagramsWork() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.twoVersionBundle(in: folder)
        let mapping = try EndToEndTests.run([
            "infer-mapping", "--model", bundle.path, "--from-version", "RKTwitterCoreData", "--to-version", "RKTwitterCoreData 2",
        ])
        #expect(mapping.status == 0, "\(mapping.stderr)")
        #expect(mapping.stdout.contains(#""retweetCount": "0"   # added (default 0)"#), "\(mapping.stdout)")
        #expect(mapping.stdout.contains(#""user": "$source.user""#))
        #expect(mapping.stdout.contains(#""status": "$source.status""#))

        let mermaid = try EndToEndTests.run(["inspect", Self.model.path, "--diagram", "mermaid"])
        #expect(mermaid.status == 0, "\(mermaid.stderr)")
        // Tweet.user is archived with minCount 1, but it is optional: 0..1, as Core Data treats it.
        #expect(mermaid.stdout.contains(#"Tweet "*" -- "0..1" User : user / status"#), "\(mermaid.stdout)")
        #expect(mermaid.stdout.contains("+Integer64? statusID"))
        let dot = try EndToEndTests.run(["inspect", bundle.path, "--diagram", "dot", "--model-version", "RKTwitterCoreData"])
        #expect(dot.status == 0, "\(dot.stderr)")
        #expect(dot.stdout.hasPrefix("digraph") && dot.stdout.contains("Tweet") && !dot.stdout.contains("retweetCount"))
    }

    @Test func aDamagedElementsFileExits65WithThePlace() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = try Data(contentsOf: Self.model.appendingPathComponent("elements"))
        let bad = folder.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        let elements = bad.appendingPathComponent("elements")

        try data.prefix(data.count / 2).write(to: elements)
        let truncated = try EndToEndTests.run(["inspect", bad.path])
        #expect(truncated.status == 65)
        #expect(truncated.stderr.hasPrefix("Error: \(elements.path)"), "\(truncated.stderr)")

        // An entity whose name is a number instead of a string: the object is named.
        guard case .dictionary(var archive) = try PropertyListValue.decode(from: data),
            case .array(var objects)? = archive["$objects"], let name = objects.firstIndex(of: .string("Tweet")),
            let entity = objects.indices.first(where: {
                if case .dictionary(let object) = objects[$0] { return object["_name"] == .uid(UInt64(name)) }
                return false
            }),
            case .dictionary(var tweet) = objects[entity]
        else {
            Issue.record("the corpus model has no Tweet entity")
            return
        }
        tweet["_name"] = .integer(12)
        objects[entity] = .dictionary(tweet)
        archive["$objects"] = .array(objects)
        try BinaryPropertyListWriter().write(.dictionary(archive)).write(to: elements)
        let wrongType = try EndToEndTests.run(["convert", Self.store.path, folder.appendingPathComponent("x.json").path, "--model", bad.path])
        #expect(wrongType.status == 65)
        #expect(wrongType.stderr.contains("elements: object $objects[\(entity)], key _name: malformed input"), "\(wrongType.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("x.json").path))
    }
}
