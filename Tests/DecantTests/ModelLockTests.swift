import Decant
import DecantTestSupport
import Foundation
import Testing

/// `ModelLock`: what `decant lock` writes and what `--check` finds.
@Suite("Model lock")
struct ModelLockTests {
    static func version(_ name: String, _ attributes: [String: AttributeType], identifiers: [String] = []) -> ObjectModel {
        var item = Entity(name: "Item")
        item.attributes = attributes.keys.sorted().map { Attribute(name: $0, type: attributes[$0] ?? .string, isOptional: true) }
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        return ObjectModel(versionName: name, entities: [item, tag], versionIdentifiers: identifiers)
    }

    static func bundle(_ versions: [ObjectModel]) -> ModelBundle {
        ModelBundle(name: "Items", versions: versions, currentVersionName: versions.last?.versionName, sourceKind: .xcdatamodeld)
    }

    @Test func lockRecordsEachVersionAndReadsBack() throws {
        let v1 = Self.version("Items", ["count": .string], identifiers: ["1.0"])
        let lock = ModelLock(bundle: Self.bundle([v1, Self.version("Items 2", ["count": .integer64])]))
        #expect(lock.model == "Items")
        #expect(lock.decant == decantVersion)
        #expect(lock.versions.map(\.name) == ["Items", "Items 2"])
        #expect(lock.versions[0].identifiers == ["1.0"])
        #expect(lock.versions[0].entityHashes["Item"] == v1.versionHash(of: "Item")?.base64EncodedString())
        #expect(lock.versions[0].checksum == ObjectModel.versionChecksum(of: v1.entityVersionHashes))
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Items.decant-lock.json")
        try lock.write(to: url)
        #expect(try ModelLock.read(from: url) == lock)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Items.decant-lock.json"])
        #expect(ModelLock.defaultURL(for: folder.appendingPathComponent("Items.xcdatamodeld")) == url)
        let same = lock.check(lock)
        #expect(same.changed.isEmpty && same.removed.isEmpty && same.unlocked.isEmpty && !same.hasProblems)
    }

    @Test func checkNamesChangedRemovedAndUnlockedVersions() throws {
        let locked = ModelLock(
            bundle: Self.bundle([
                Self.version("Items", ["count": .string]), Self.version("Items 2", ["count": .integer64]),
                Self.version("Items 3", ["count": .integer64, "note": .string]),
            ]))
        // Items edited (count retyped), Items 2 deleted, Items 3 untouched, Items 4 new.
        var edited = Self.version("Items", ["count": .integer32])
        edited.entities.removeAll { $0.name == "Tag" }
        edited.entities.append(Entity(name: "Label"))
        let now = ModelLock(
            bundle: Self.bundle([
                edited, Self.version("Items 3", ["count": .integer64, "note": .string]),
                Self.version("Items 4", ["count": .integer64, "note": .string, "extra": .string]),
            ]))
        let findings = locked.check(now)
        #expect(findings.changed.map(\.version) == ["Items"])
        #expect(findings.changed.first?.changedEntities == ["Item"])
        #expect(findings.changed.first?.removedEntities == ["Tag"])
        #expect(findings.changed.first?.addedEntities == ["Label"])
        #expect(findings.removed == ["Items 2"])
        #expect(findings.unlocked == ["Items 4"])
        #expect(findings.hasProblems)
        #expect(findings.lines.count == 3)
        #expect(findings.changed.first?.changedProperties == ["Item": .init(changed: ["count"])])
        #expect(findings.lines[0].hasPrefix("changed: version Items (hash of Item (count changed); removed Tag; added Label)"))
        // A new version alone is only a warning.
        let grown = locked.check(
            ModelLock(
                bundle: Self.bundle([
                    Self.version("Items", ["count": .string]), Self.version("Items 2", ["count": .integer64]),
                    Self.version("Items 3", ["count": .integer64, "note": .string]), Self.version("Items 4", [:]),
                ])))
        #expect(!grown.hasProblems)
        #expect(grown.unlocked == ["Items 4"])
    }

    /// The check names the properties an edit changed, added or removed; an entity whose hash changed with every
    /// property the same changed its own settings; a lock written without property hashes names the entity only.
    @Test func checkNamesThePropertiesThatChanged() throws {
        let locked = ModelLock(bundle: Self.bundle([Self.version("Items", ["count": .string, "old": .string])]))
        var edited = Self.version("Items", ["count": .string, "old": .integer16, "body": .string])
        edited.entities[1].versionHashModifier = "2"
        let now = ModelLock(bundle: Self.bundle([edited]))
        let findings = locked.check(now)
        #expect(findings.changed.first?.changedEntities == ["Item", "Tag"])
        #expect(findings.changed.first?.changedProperties["Item"] == .init(changed: ["old"], added: ["body"]))
        #expect(findings.changed.first?.changedProperties["Tag"] == .init())
        #expect(
            findings.lines == [
                "changed: version Items (hash of Item (old changed, body added), Tag (no property: its parent, abstract "
                    + "flag or version hash modifier)): stores of it would no longer open"
            ])
        var removed = Self.version("Items", ["count": .string])
        removed.entities.removeAll { $0.name == "Tag" }
        #expect(locked.check(ModelLock(bundle: Self.bundle([removed]))).changed.first?.changedProperties["Item"] == .init(removed: ["old"]))
        // An older lock file has no property hashes: the entity is named alone, and reading it still works.
        var older = locked
        older.versions[0].propertyHashes = nil
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Items.decant-lock.json")
        try older.write(to: url)
        #expect(try String(contentsOf: url, encoding: .utf8).contains("propertyHashes") == false)
        let fromOlder = try ModelLock.read(from: url).check(now)
        #expect(fromOlder.changed.first?.changedProperties.isEmpty == true)
        #expect(fromOlder.lines.first?.hasPrefix("changed: version Items (hash of Item, Tag)") == true)
    }

    @Test func aMissingOrDamagedLockFileIsAnError() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("x.decant-lock.json")
        #expect(Self.code { try ModelLock.read(from: url) } == .fileNotFound)
        try Data("{\"model\": 3}".utf8).write(to: url)
        #expect(Self.code { try ModelLock.read(from: url) } == .malformedInput)
    }

    static func code(_ body: () throws -> ModelLock) -> DecantError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? DecantError)?.code
        }
    }
}
