import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Xcode 3 models (`Foo.xcdatamodel/elements`) load as models with Core Data's version hashes, alone and inside
/// bundles beside modern versions (coredata-formats.md 1.8).
@Suite("Xcode 3 models")
struct Xcode3ModelTests {
    static let twitter = Fixtures.legacyCorpus(
        "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel")

    /// A Note ⇄ Folder model with every setting the hashes take, in Xcode 3's archive and as a `contents` file.
    static let notes: [Xcode3ModelFiles.Entity] = [
        .init(
            "Note", className: "Note",
            attributes: [
                .init("title", type: 700, optional: false, defaultValue: "Untitled"),
                .init("count", type: 200, defaultValue: "0"),
                .init("created", type: 900),
                .init("flagged", type: 800, transient: true),
                .init("body", type: 700, versionHashModifier: "2", renamingIdentifier: "text"),
            ],
            relationships: [.init("folder", destination: "Folder", inverse: "notes")]),
        .init(
            "Folder", parent: "Item",
            attributes: [.init("name", type: 700)],
            relationships: [.init("notes", destination: "Note", inverse: "folder", toMany: true, deleteRule: 2)]),
        .init("Item", abstract: true, attributes: [.init("position", type: 300, optional: false)]),
    ]

    static let notesContents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model userDefinedModelVersionIdentifier="1.1">
        <entity name="Note" representedClassName="Note">
        <attribute name="title" attributeType="String" defaultValueString="Untitled"/>
        <attribute name="count" optional="YES" attributeType="Integer 32" defaultValueString="0"/>
        <attribute name="created" optional="YES" attributeType="Date"/>
        <attribute name="flagged" optional="YES" transient="YES" attributeType="Boolean"/>
        <attribute name="body" optional="YES" attributeType="String" versionHashModifier="2" elementID="text"/>
        <relationship name="folder" optional="YES" minCount="1" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
        </entity>
        <entity name="Folder" parentEntity="Item">
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="notes" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
        </entity>
        <entity name="Item" isAbstract="YES">
        <attribute name="position" attributeType="Integer 64"/>
        </entity>
        </model>
        """

    @Test("the corpus model hashes as the store it wrote (coredata-formats.md 1.8's vector)")
    func corpusModelMatchesItsStore() throws {
        let bundle = try ModelBundle.load(from: Self.twitter)
        #expect(bundle.sourceKind == .xcdatamodel)
        let model = try #require(bundle.versions.first)
        #expect(bundle.versions.count == 1 && model.isXcode3Model)
        #expect(model.versionName == "RKTwitterCoreData" && bundle.currentVersion?.versionName == "RKTwitterCoreData")
        // No _modelVersionIdentifier: one empty identifier, as the store's NSStoreModelVersionIdentifiers.
        #expect(model.versionIdentifiers == [""])
        let hashes = model.entityVersionHashes.mapValues { $0.base64EncodedString() }
        #expect(hashes == [
            "Tweet": "03/3h3rvyZ47wXshv/VXUgXc4yBt3dSvlv148MVfP90=",
            "User": "0l9cLHSs9tngemqQ6YaBlitgrL9+hJnrT8ajvmvao5c=",
        ])
        let tweet = try #require(model.entity(named: "Tweet"))
        #expect(tweet.className == "RKTweet")
        #expect(tweet.attributes.map(\.name).sorted()
            == ["createdAt", "inReplyToScreenName", "isFavorited", "statusID", "text", "urlString"])
        // Stored as Xcode 3 wrote it: optional, and yet minCount 1.
        let user = try #require(tweet.relationships.first { $0.name == "user" })
        #expect(user.isOptional && !user.isToMany && user.minCount == 1 && user.maxCount == 1)
        #expect(user.destinationEntity == "User" && user.inverseName == "status" && user.inverseEntity == "User")
        let status = try #require(model.entity(named: "User")?.relationships.first)
        #expect(status.isToMany && status.minCount == 0 && status.maxCount == 0)
        // Rewritten into the modern form, the hash would no longer be the store's.
        var modern = model
        let index = try #require(modern.entities.firstIndex { $0.name == "Tweet" })
        modern.entities[index].relationships = modern.entities[index].relationships.map {
            var relationship = $0
            relationship.minCount = 0
            return relationship
        }
        #expect(modern.entityVersionHashes["Tweet"] != model.entityVersionHashes["Tweet"])
    }

    @Test func anArchiveOfOurOwnHashesAsItsContentsForm() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Xcode3ModelFiles.write("Notes", entities: Self.notes, versionIdentifier: "1.1", in: folder)
        let bundle = try ModelBundle.load(from: url)
        let model = try #require(bundle.versions.first)
        let contents = try XcdatamodelReader.parse(Data(Self.notesContents.utf8), path: "contents")
        #expect(model.isXcode3Model && !contents.isXcode3Model)
        #expect(model.entityVersionHashes == contents.entityVersionHashes)
        #expect(model.entityVersionHashes.count == 3)
        #expect(model.versionIdentifiers == ["1.1"])
        let note = try #require(model.entity(named: "Note"))
        #expect(note.attributes.first { $0.name == "title" }?.defaultValue == "Untitled")
        #expect(note.attributes.first { $0.name == "body" }?.renamingIdentifier == "text")
        #expect(model.entity(named: "Folder")?.parentName == "Item")
        #expect(model.entity(named: "Item")?.isAbstract == true)
        #expect(model.entity(named: "Folder")?.relationships.first?.deleteRule == .cascade)
        #expect(model.properties(of: try #require(model.entity(named: "Folder"))).attributes.map(\.name) == ["position", "name"])
    }

    @Test("tags early Xcode 3 releases left out take their defaults")
    func absentTags() throws {
        var entities = Self.notes
        entities[1].relationships[0].minCount = nil
        entities[1].relationships[0].maxCount = nil
        let model = try Xcode3ModelReader.decode(Xcode3ModelFiles.elements(entities), path: "elements")
        let notes = try #require(model.entity(named: "Folder")?.relationships.first)
        #expect(notes.isToMany && notes.minCount == 0 && notes.maxCount == 0)
        let contents = try XcdatamodelReader.parse(Data(Self.notesContents.utf8), path: "contents")
        #expect(model.entityVersionHashes == contents.entityVersionHashes)
    }

    @Test("a bundle mixing modern and Xcode 3 versions loads whole, in order, each marked")
    func mixedBundle() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundleURL = try ModelBundleFiles.write(
            "Notes",
            versions: [
                ("Notes 2", #"<entity name="Note"><attribute name="title" attributeType="String"/></entity>"#),
                ("Notes 3", #"<entity name="Note"><attribute name="title" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/></entity>"#),
            ],
            current: "Notes 3", in: folder)
        try Xcode3ModelFiles.write("Notes", entities: [.init("Note", attributes: [.init("title", type: 700, optional: false)])], in: bundleURL)
        let bundle = try ModelBundle.load(from: bundleURL)
        #expect(bundle.versions.map(\.versionName) == ["Notes", "Notes 2", "Notes 3"])
        #expect(bundle.versions.map(\.isXcode3Model) == [true, false, false])
        #expect(bundle.currentVersion?.versionName == "Notes 3")
        // The Xcode 3 version and Notes 2 declare the same entity: the same hash.
        #expect(bundle.versions[0].entityVersionHashes == bundle.versions[1].entityVersionHashes)
    }

    @Test func aFolderWithNeitherFileNamesWhatIsMissing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let error = #expect(throws: DecantError.self) { try ModelBundle.load(from: url) }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("elements") == true)
    }
}

/// Damaged `elements` files: `.malformedInput` (exit 65) with the file and the place, never a crash.
@Suite("Xcode 3 models: damaged input")
struct Xcode3ModelHostileTests {
    static func outcome(_ data: Data) -> DecantError? {
        do {
            _ = try Xcode3ModelReader.decode(data, path: "Bad.xcdatamodel/elements")
            return nil
        } catch let error as DecantError {
            return error
        } catch {
            return DecantError(.internalError, "\(error)")
        }
    }

    static func corpusBytes() throws -> Data {
        try Data(contentsOf: Xcode3ModelTests.twitter.appendingPathComponent("elements"))
    }

    @Test func truncatedFilesAreMalformedAndLocated() throws {
        let data = try Self.corpusBytes()
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 101)) {
            let error = Self.outcome(data.prefix(length))
            #expect(error?.code == .malformedInput, "length \(length)")
            #expect(error?.location?.path == "Bad.xcdatamodel/elements", "length \(length)")
        }
    }

    @Test func flippedBytesReadOrAreMalformed() throws {
        let data = try Self.corpusBytes()
        var state: UInt64 = 0x3C0D_E5
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var failures = 0
        for _ in 0..<300 {
            var bytes = [UInt8](data)
            let index = Int(next() % UInt64(bytes.count))
            bytes[index] ^= UInt8(truncatingIfNeeded: next() | 1)
            if let error = Self.outcome(Data(bytes)) {
                failures += 1
                #expect(error.code == .malformedInput, "byte \(index): \(error)")
                #expect(error.location?.path == "Bad.xcdatamodel/elements", "byte \(index)")
            }
        }
        #expect(failures > 0)
    }

    /// The Note ⇄ Folder archive as a property list, changed by `edit`, then read.
    static func edited(_ edit: (inout [PropertyListValue], (String) -> Int?) -> Void) throws -> DecantError? {
        let data = try Xcode3ModelFiles.elements(Xcode3ModelTests.notes)
        guard case .dictionary(var archive) = try PropertyListValue.decode(from: data),
            case .array(var objects)? = archive["$objects"]
        else { return DecantError(.internalError, "not an archive") }
        // The index of the object whose `_name` entry is the string `name`, or of that string itself with "$"
        // (looked up in the unedited entries: `edit` holds `objects` while it runs).
        let original = objects
        func find(_ name: String) -> Int? {
            if name.hasPrefix("$") { return original.firstIndex(of: .string(String(name.dropFirst()))) }
            guard let string = original.firstIndex(of: .string(name)) else { return nil }
            return original.indices.first { index in
                guard case .dictionary(let object) = original[index] else { return false }
                return object["_name"] == .uid(UInt64(string))
            }
        }
        edit(&objects, find)
        archive["$objects"] = .array(objects)
        return outcome(BinaryPropertyListWriter().write(.dictionary(archive)))
    }

    static func set(_ key: String, to value: PropertyListValue, in objects: inout [PropertyListValue], at index: Int?) {
        guard let index, case .dictionary(var object) = objects[index] else {
            Issue.record("no object to change")
            return
        }
        object[key] = value
        objects[index] = .dictionary(object)
    }

    @Test func aNameThatIsANumberNamesTheObject() throws {
        var target: Int?
        let error = try Self.edited { objects, find in
            target = find("Folder")
            Self.set("_name", to: .integer(7), in: &objects, at: target)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.object == target.map { "$objects[\($0)]" })
    }

    @Test func anAttributeTypeThatIsTextNamesTheTag() throws {
        let error = try Self.edited { objects, find in
            guard let tag = find("XD_PAttK_attributeType") else { Issue.record("no tag"); return }
            Self.set("_default", to: .string("String"), in: &objects, at: tag)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.keyPath == "XD_PAttK_attributeType")
        #expect(error?.location?.object != nil)
    }

    @Test func anUnknownAttributeTypeIsRefused() throws {
        let error = try Self.edited { objects, find in
            guard let tag = find("XD_PAttK_attributeType"), case .dictionary(let property) = objects[tag],
                case .uid(let value)? = property["_default"]
            else { Issue.record("no tag"); return }
            objects[Int(value)] = .integer(4242)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("4242") == true)
    }

    @Test func aClassBucketThatIsNotADictionaryIsRefused() throws {
        let error = try Self.edited { objects, find in
            guard let package = objects.indices.first(where: { index in
                if case .dictionary(let object) = objects[index] { return object["_xd_owningModel"] != nil }
                return false
            }) else { Issue.record("no package"); return }
            Self.set("XDBucketForClassesstorage", to: .integer(3), in: &objects, at: package)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "Bad.xcdatamodel/elements")
    }

    @Test func aRootThatIsNotAModelIsRefused() throws {
        let data = try KeyedArchiveWriter().encodedData(root: nil)
        #expect(Self.outcome(data)?.code == .malformedInput)
        #expect(Self.outcome(Data())?.code == .malformedInput)
        #expect(Self.outcome(Data("<plist><dict/></plist>".utf8))?.code == .malformedInput)
    }

    @Test func aDestinationOutsideTheModelNamesTheRelationship() throws {
        let folder = Xcode3ModelFiles.Entity("Folder", relationships: [.init("notes", destination: "Note", toMany: true)])
        let data = try Xcode3ModelFiles.elements([folder])  // no Note: the destination tag is nil
        let model = try Xcode3ModelReader.decode(data, path: "elements")
        #expect(model.entity(named: "Folder")?.relationships.first?.destinationEntity == nil)
        // A destination that is an entity of another package (here: an entity left out of the bucket).
        let error = try Self.edited { objects, find in
            guard let package = objects.indices.first(where: { index in
                if case .dictionary(let object) = objects[index] { return object["_xd_owningModel"] != nil }
                return false
            }), case .dictionary(let packageObject) = objects[package], case .uid(let bucket)? = packageObject["XDBucketForClassesstorage"],
                case .dictionary(var classes) = objects[Int(bucket)], case .array(let keys)? = classes["NS.keys"],
                case .array(let values)? = classes["NS.objects"], let note = find("$Note"),
                let position = keys.firstIndex(of: .uid(UInt64(note)))
            else { Issue.record("no bucket"); return }
            var newKeys = keys
            var newValues = values
            newKeys.remove(at: position)
            newValues.remove(at: position)
            classes["NS.keys"] = .array(newKeys)
            classes["NS.objects"] = .array(newValues)
            objects[Int(bucket)] = .dictionary(classes)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.entity == "Folder" && error?.location?.keyPath == "notes")
        #expect(error?.message.contains("Note") == true)
    }

    @Test func aPropertyDeclaredTwiceIsRefused() throws {
        let note = Xcode3ModelFiles.Entity("Note", attributes: [.init("title", type: 700), .init("Title", type: 700)])
        let error = try { () throws -> DecantError? in
            let data = try Xcode3ModelFiles.elements([note])
            guard case .dictionary(var archive) = try PropertyListValue.decode(from: data),
                case .array(var objects)? = archive["$objects"], let title = objects.firstIndex(of: .string("Title"))
            else { return nil }
            objects[title] = .string("title")  // the bucket keeps two keys; both elements are now named title
            archive["$objects"] = .array(objects)
            return Self.outcome(BinaryPropertyListWriter().write(.dictionary(archive)))
        }()
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.entity == "Note" && error?.location?.keyPath == "title")
    }

    @Test func anInheritanceCycleIsRefused() throws {
        let entities: [Xcode3ModelFiles.Entity] = [.init("A", parent: "B"), .init("B", parent: "A")]
        let error = Self.outcome(try Xcode3ModelFiles.elements(entities))
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("cycle") == true)
    }

    /// 1,000 entities in one inheritance chain, each with a relationship whose inverse the deepest entity
    /// inherits from the root: the reference checks stay linear per relationship, and a cycle closing the chain is
    /// still found.
    @Test func aLongInheritanceChainReadsInBoundedTime() throws {
        func chain(_ count: Int) -> [Xcode3ModelFiles.Entity] {
            var entities: [Xcode3ModelFiles.Entity] = [
                .init("E0", relationships: [.init("up", destination: "E1", toMany: true)])
            ]
            for index in 1..<count {
                entities.append(.init(
                    "E\(index)", parent: "E\(index - 1)",
                    relationships: [.init("r\(index)", destination: "E\(count - 1)", inverse: "up")]))
            }
            return entities
        }
        let count = 1_000
        var entities = chain(count)
        let data = try Xcode3ModelFiles.elements(entities)
        let model = try Xcode3ModelReader.decode(data, path: "elements")
        #expect(model.entities.count == count)
        #expect(model.entity(named: "E7")?.relationships.first?.inverseName == "up")
        // 4× the entities: well under the 16× that checking every relationship against every entity would take.
        let growth = try Growth.ratio(from: 300) { count in
            _ = try Xcode3ModelReader.decode(try Xcode3ModelFiles.elements(chain(count)), path: "elements")
        }
        #expect(growth < 10, "4× the entities took \(growth)× the time")
        entities[0].parent = "E\(count - 1)"
        let error = Self.outcome(try Xcode3ModelFiles.elements(entities))
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("cycle") == true)
    }

    @Test func anInverseThatIsNotARelationshipIsRefused() throws {
        let entities: [Xcode3ModelFiles.Entity] = [
            .init("Note", relationships: [.init("folder", destination: "Folder", inverse: "notes")]),
            .init("Folder", relationships: [.init("notes", destination: "Note", inverse: "folder", toMany: true)]),
        ]
        let error = try { () throws -> DecantError? in
            let data = try Xcode3ModelFiles.elements(entities)
            guard case .dictionary(var archive) = try PropertyListValue.decode(from: data),
                case .array(var objects)? = archive["$objects"]
            else { return nil }
            // Point Note.folder's inverse tag at the Folder entity instead of a relationship.
            guard let tagName = objects.firstIndex(of: .string("XD_PRK_inverseRelationship")),
                let folderName = objects.firstIndex(of: .string("Folder")),
                let folder = objects.indices.first(where: {
                    if case .dictionary(let o) = objects[$0] { return o["_name"] == .uid(UInt64(folderName)) && o["_isAbstract"] != nil }
                    return false
                }),
                let tag = objects.indices.first(where: {
                    if case .dictionary(let o) = objects[$0] { return o["_name"] == .uid(UInt64(tagName)) }
                    return false
                })
            else { return nil }
            guard case .dictionary(var property) = objects[tag] else { return nil }
            property["_default"] = .uid(UInt64(folder))
            objects[tag] = .dictionary(property)
            archive["$objects"] = .array(objects)
            return Self.outcome(BinaryPropertyListWriter().write(.dictionary(archive)))
        }()
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.entity != nil || error?.location?.object != nil)
    }
}
