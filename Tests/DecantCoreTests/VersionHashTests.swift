import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Version hashes computed from Xcode model sources equal Apple's (`coredata-formats.md` 8.7, VersionInfo.plist).
@Suite("Version hashes")
struct VersionHashTests {
    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let sampleModel3 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"

    func load(_ relativePath: String) throws -> ModelBundle {
        try ModelBundle.load(from: Fixtures.corpus(relativePath))
    }

    func hex(_ data: Data?) -> String {
        (data ?? Data()).map { String(format: "%02x", $0) }.joined()
    }

    @Test func propertyVectorsOfSampleModel3Version1() throws {
        let model = try #require(try load(Self.sampleModel3).version(named: "SampleModel3"))
        let user = try #require(model.entity(named: "User"))
        let name = try #require(user.attributes.first { $0.name == "name" })
        let petName = try #require(user.attributes.first { $0.name == "petName" })
        #expect(name.isOptional == false && petName.isOptional == true)
        #expect(hex(VersionHashing.baseHash(of: name.common)) == "90d44c7db5b5a80bff15f243906d1f1c650a9a74e2506784ec96d4ff03f61b73")
        #expect(hex(VersionHashing.hash(of: name)) == "8cb9965c0031ac68913984f3110941ad965395be9fd9b17de7be54bc7ad46890")
        #expect(hex(VersionHashing.baseHash(of: petName.common)) == "a0a3ecd1576b89e6f97b0769271c34ad93faa5309720ec4f9e626c270a255ef9")
        #expect(hex(VersionHashing.hash(of: petName)) == "3600ceedf50b080f90041365395158784f0deb03bc9acddf1cad607c4fe50742")
        #expect(hex(model.versionHash(ofProperty: "name", in: "User")) == hex(VersionHashing.hash(of: name)))
    }

    @Test func modelVectorsOfSampleModel3Version1() throws {
        let model = try #require(try load(Self.sampleModel3).version(named: "SampleModel3"))
        let user = hex(model.versionHash(of: "User"))
        #expect(user.hasPrefix("6b31f4e9") && user.hasSuffix("fe4be798"))
        #expect(model.versionHash(of: "User")?.base64EncodedString() == "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
        #expect(model.versionChecksum == "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=")
        #expect(
            model.versionHashesDigest
                == "0KLB/FnL8roMcgeszeCxnPnvYqnn4VzB2DpFP6csqrDKzLB6fyG5rrVfjY5DtnQxx4355oWuKFublPf2Jo1UWg==")
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func relationshipVectorOfSampleModel3Version2() throws {
        let model = try #require(try load(Self.sampleModel3).version(named: "SampleModel3_v2"))
        let owner = try #require(model.entity(named: "Pet")?.relationships.first { $0.name == "owner" })
        #expect(owner.destinationEntity == "User" && owner.inverseName == "pet" && owner.maxCount == 1 && owner.isOptional)
        let hash = hex(model.versionHash(ofProperty: "owner", in: "Pet"))
        #expect(hash.hasPrefix("431f6f1b") && hash.hasSuffix("ecf6447c"))
        #expect(model.versionHash(of: "Pet")?.base64EncodedString() == "dnNCJipkWHMMeKrnPFMo0PyqTjWW0vh/IuNm60ap9G8=")
    }

    @Test func inheritanceConstraintAndPreserveVectorsOfSampleModelVersion1() throws {
        let model = try #require(try load(Self.sampleModel).version(named: "SampleModel"))
        let expected = [
            "Car": "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=",
            "SportCar": "UU7BkHpWgpn5+2hREGUWE28HVfRfpTqCOg5NRAE9UxM=",
            "ExpensiveSportCar": "PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=",
            "Person": "FkJoVRtFEIrnY6orph/zLTLTIyOFCYfD4hYHyNpEtys=",
        ]
        #expect(model.entityVersionHashes.mapValues { $0.base64EncodedString() } == expected)
        // Without the preserveAfterDeletion byte, Person's hash differs (the byte is required).
        var altered = model
        let index = try #require(altered.entities.firstIndex { $0.name == "Person" })
        let id = try #require(altered.entities[index].attributes.firstIndex { $0.name == "id" })
        #expect(altered.entities[index].attributes[id].preservesValueInHistoryOnDeletion)
        altered.entities[index].attributes[id].preservesValueInHistoryOnDeletion = false
        #expect(altered.versionHash(of: "Person")?.base64EncodedString().hasPrefix("LAcoW/US") == true)
    }

    /// Every version of both CoreDataPlus model sources hashes to the `NSManagedObjectModel_VersionHashes` (and
    /// checksums) Xcode's compiler wrote into the `.momd`'s VersionInfo.plist.
    @Test(arguments: [
        (sampleModel, "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd"),
        (sampleModel3, "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd"),
    ])
    func sourcesMatchCompiledVersionInfo(source: String, momd: String) throws {
        let bundle = try load(source)
        let plistURL = Fixtures.corpus(momd).appendingPathComponent("VersionInfo.plist")
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: plistURL), format: nil) as? [String: Any])
        let hashes = try #require(plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        #expect(Set(hashes.keys) == Set(bundle.versions.compactMap(\.versionName)))
        for version in bundle.versions {
            let name = try #require(version.versionName)
            #expect(version.entityVersionHashes == hashes[name], "version \(name)")
        }
        if let checksums = plist["NSManagedObjectModel_VersionChecksums"] as? [String: String] {
            for version in bundle.versions {
                let name = try #require(version.versionName)
                #expect(version.versionChecksum == checksums[name], "checksum of \(name)")
            }
        }
        #expect(plist["NSManagedObjectModel_CurrentVersionName"] as? String == bundle.currentVersionName)
    }

    /// A hostile model (an inheritance chain 3,000 entities deep, whose root declares an attribute and a relationship
    /// every entity inherits) hashes in a moment: each parent is looked up once by name, not by scanning every entity
    /// at every level of every entity's ancestry, which took over 15 minutes (cubic work). Each entity still walks its
    /// own ancestry for its inherited properties, so the work is quadratic: 4× the depth takes about 16× the time,
    /// and must stay well under cubic work's 64× (a clock limit would pass cubic work at a smaller size). Each
    /// entity's hash still feeds its child's.
    @Test func aDeepInheritanceChainHashesWithoutScanningItsAncestryAgain() {
        func chain(_ depth: Int) -> ObjectModel {
            var model = ObjectModel(entities: [])
            for level in 0..<depth {
                var entity = Entity(name: "E\(level)", parentName: level == 0 ? nil : "E\(level - 1)")
                if level == 0 {
                    entity.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
                    var link = Relationship(name: "next", destination: "E0", inverse: "next")
                    link.isOptional = true
                    entity.relationships = [link]
                }
                model.entities.append(entity)
            }
            return model
        }
        let growth = Growth.ratio(from: 500) { depth in
            let model = chain(depth)
            #expect(model.entityVersionHashes.count == depth)
        }
        #expect(growth < 32, "4× the depth took \(growth)× the time")
        let model = chain(3_000)
        let hashes = model.entityVersionHashes
        #expect(hashes.count == 3_000)
        var shallow = model
        shallow.entities = Array(model.entities.prefix(2))
        #expect(hashes["E1"] == shallow.entityVersionHashes["E1"])
        #expect(hashes["E2999"] != hashes["E2998"])
    }
}
