import DecantCore
import DecantSwiftData
import DecantTestSupport
import Foundation
import Testing

/// The Core Data model built from small SwiftData sources of the tests' own (coredata-formats.md 12.2–12.8).
@Suite struct SwiftSourceModelTests {
    @Test func storedPropertiesOnlyWithTheirTypesAndOptionality() throws {
        let model = try SwiftSource.model(
            """
            import SwiftData
            @Model final class Note {
                var title: String
                let id = UUID()
                var count = 3
                var score: Double?
                var flag: Bool = false
                var blob: Data?
                var created: Date
                var tags: [String]?
                var a, b: Int
                var upper: String { title.uppercased() }
                static var shared = 1
                @Transient var scratch: String = ""
                var observed: Int = 0 { didSet { } }
                init() { title = ""; created = .now; a = 0; b = 0 }
            }
            """)
        let note = try #require(model.entity(named: "Note"))
        let types = Dictionary(uniqueKeysWithValues: note.attributes.map { ($0.name, $0.type) })
        #expect(
            types == [
                "title": .string, "id": .uuid, "count": .integer64, "score": .double, "flag": .boolean, "blob": .binary,
                "created": .date, "tags": .transformable, "a": .integer64, "b": .integer64, "observed": .integer64,
            ])
        #expect(note.attributes.filter(\.isOptional).map(\.name) == ["score", "blob", "tags"])
        let tags = try #require(note.attributes.first { $0.name == "tags" })
        #expect(tags.valueClassName == "Array<String>")
        #expect(tags.valueTransformerName == "NSSecureUnarchiveFromData")
        #expect(note.attributes.first { $0.name == "count" }?.defaultValue == "3")
        #expect(note.attributes.allSatisfy { $0.renamingIdentifier == $0.name })
        #expect(model.versionIdentifiers == ["1.0.0"])
    }

    @Test func inversesDeclaredInferredAndAbsent() throws {
        let model = try SwiftSource.model(
            """
            @Model final class Folder {
                @Relationship(deleteRule: .cascade, inverse: \\Note.folder) var notes: [Note] = []
                var owner: Person?
                init() {}
            }
            @Model final class Note {
                var folder: Folder?
                var author: Person?
                init() {}
            }
            @Model final class Person {
                var notes: [Note]?
                init() {}
            }
            """)
        let folder = try #require(model.entity(named: "Folder"))
        let note = try #require(model.entity(named: "Note"))
        let person = try #require(model.entity(named: "Person"))
        let notes = try #require(folder.relationships.first { $0.name == "notes" })
        #expect(notes.inverseName == "folder" && notes.isToMany && notes.deleteRule == .cascade && !notes.isOptional)
        #expect(note.relationships.first { $0.name == "folder" }?.inverseName == "notes")
        // Inferred: Person.notes is the only relationship of Person back to Note.
        #expect(note.relationships.first { $0.name == "author" }?.inverseName == "notes")
        #expect(person.relationships.first?.inverseName == "author")
        #expect(person.relationships.first?.isOptional == true)
        // Person has no relationship back to Folder: no inverse.
        #expect(folder.relationships.first { $0.name == "owner" }?.inverseName == nil)
        #expect(folder.relationships.first { $0.name == "owner" }?.deleteRule == .nullify)
    }

    @Test func relationshipCountsAndRenaming() throws {
        let model = try SwiftSource.model(
            """
            @Model final class Tag {
                @Relationship(minimumModelCount: 1, maximumModelCount: 5, originalName: "items") var notes: [Note]
                @Attribute(.unique, .externalStorage, originalName: "label") var name: String
                @Attribute(.preserveValueOnDeletion, hashModifier: "v2") var picture: Data
                init() { notes = []; name = ""; picture = Data() }
            }
            @Model final class Note { var tags: [Tag] = []; init() {} }
            """)
        let tag = try #require(model.entity(named: "Tag"))
        let notes = try #require(tag.relationships.first)
        #expect(notes.minCount == 1 && notes.maxCount == 5)
        #expect(notes.renamingIdentifier == "items")
        #expect(notes.inverseName == "tags")
        let name = try #require(tag.attributes.first { $0.name == "name" })
        #expect(name.renamingIdentifier == "label" && name.allowsExternalBinaryDataStorage)
        let picture = try #require(tag.attributes.first { $0.name == "picture" })
        #expect(picture.preservesValueInHistoryOnDeletion && picture.versionHashModifier == "v2")
        #expect(tag.uniquenessConstraints == [["name"]])
    }

    @Test func transformableTakesAnyTypeThroughItsTransformer() throws {
        let model = try SwiftSource.model(
            """
            import UIKit
            @Model final class Swatch {
                @Attribute(.transformable(by: ColorTransformer.self)) var color: UIColor?
                @Attribute(.transformable(by: "PointTransformer")) var point: CGPoint
                init() { point = .zero }
            }
            """)
        let swatch = try #require(model.entity(named: "Swatch"))
        #expect(swatch.attributes.map(\.type) == [.transformable, .transformable])
        #expect(swatch.attributes.map(\.valueTransformerName) == ["ColorTransformer", "PointTransformer"])
        #expect(swatch.attributes.map(\.isOptional) == [true, false])
    }

    @Test func uniqueAndIndexMacros() throws {
        let model = try SwiftSource.model(
            """
            @Model class Trip {
                #Unique<Trip>([\\.name], [\\.name, \\.start])
                #Index<Trip>([\\.name], [\\.start, \\.name])
                @Attribute(.unique) var name: String
                var start: Int
                init() { name = ""; start = 0 }
            }
            """)
        let trip = try #require(model.entity(named: "Trip"))
        #expect(trip.uniquenessConstraints == [["name"], ["name", "start"]])
        #expect(trip.fetchIndexes.map(\.name) == ["SwiftDataIndexOnBinaryname", "SwiftDataIndexOnBinarystartname"])
        #expect(trip.fetchIndexes[1].elements.map(\.property) == ["start", "name"])
        #expect(trip.attributes.allSatisfy { $0.isIndexed })
    }

    @Test func compositesForEachShape() throws {
        let model = try SwiftSource.model(
            """
            import SwiftUI
            enum Mood: String, Codable { case calm, busy }
            enum Level: Int, Codable { case low, high }
            enum Weather: Codable { case sun, rain, snow }
            struct Place: Codable { var name: String; var lat: Double; var id = UUID(); var moods: [Mood]? }
            @Model final class Day {
                var mood: Mood
                var level: Level?
                var weather: Weather
                var place: Place?
                var tint: Color.Resolved
                init() { fatalError() }
            }
            """)
        let day = try #require(model.entity(named: "Day"))
        func composite(_ property: String) throws -> (Attribute, CompositeType) {
            let attribute = try #require(day.attributes.first { $0.name == property })
            #expect(attribute.type == .composite)
            let type = try #require(model.composites.first { $0.name == attribute.compositeName })
            return (attribute, type)
        }
        let (mood, moodType) = try composite("mood")
        #expect(moodType.attributes.map(\.name) == ["mood"] && moodType.attributes[0].type == .string)
        #expect(moodType.attributes[0].isOptional && !mood.isOptional)
        #expect(mood.userInfo == ["EnumType": .bool(true)])
        let (level, levelType) = try composite("level")
        #expect(levelType.attributes.map(\.type) == [.integer64] && level.isOptional)
        let (weather, weatherType) = try composite("weather")
        #expect(weatherType.attributes.map(\.name) == ["sun", "rain", "snow"])
        #expect(weatherType.attributes.allSatisfy { $0.type == .string && $0.isOptional })
        #expect(weather.userInfo["enum"] == .array(["sun", "rain", "snow"]))
        let (_, placeType) = try composite("place")
        #expect(placeType.attributes.map(\.name) == ["name", "lat", "id", "moods"])
        #expect(placeType.attributes.map(\.type) == [.string, .double, .uuid, .binary])
        #expect(placeType.attributes.allSatisfy { $0.isOptional })
        let (_, tintType) = try composite("tint")
        #expect(tintType.attributes.map(\.name) == ["linearRed", "linearGreen", "linearBlue", "opacity"])
        #expect(tintType.attributes.allSatisfy { $0.type == .float && !$0.isOptional })
    }

    /// A recipe app's shape: a property's type declared in an extension of the model class, in another file, and a
    /// type nested in an extension of that type (`extension Folder.FolderType`), and one reached through a
    /// versioned schema's type alias; the same model as when the types are declared inside the class.
    @Test func typesDeclaredInExtensionsAtAnyDepthInAnyFile() throws {
        let folder = try SwiftSource.folder([
            "Folder.swift": """
                @Model final class Folder {
                    var name: String
                    var kind: FolderType
                    var style: Folder.FolderType.Style?
                    var shade: Shade
                    init() { fatalError() }
                }
                """,
            "Folder+Kinds.swift": """
                extension Folder {
                    enum FolderType: String, Codable { case user, system }
                }
                extension Folder.FolderType {
                    enum Style: Int, Codable { case plain, bold }
                }
                enum V2 { enum Palette {} }
                typealias Palette = V2.Palette
                extension Palette { enum Shade: String, Codable { case light, dark } }
                extension Folder { typealias Shade = Palette.Shade }
                """,
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let fromExtensions = try #require(try SwiftSourceModelReader.load(from: folder).currentVersion)
        let inline = try SwiftSource.model(
            """
            @Model final class Folder {
                enum FolderType: String, Codable {
                    case user, system
                    enum Style: Int, Codable { case plain, bold }
                }
                enum Shade: String, Codable { case light, dark }
                var name: String
                var kind: FolderType
                var style: Folder.FolderType.Style?
                var shade: Shade
                init() { fatalError() }
            }
            """)
        #expect(fromExtensions.entityVersionHashes == inline.entityVersionHashes)
        let attributes = try #require(fromExtensions.entity(named: "Folder")?.attributes)
        #expect(attributes.map(\.name).sorted() == ["kind", "name", "shade", "style"])
        #expect(attributes.filter { $0.type == .composite }.count == 3)
    }

    /// What is truly missing is still named: the hint names the type no file declares.
    @Test func aTypeNoFileDeclaresIsStillNamed() throws {
        let error = try SwiftSource.refusal([
            "Folder.swift": "@Model final class Folder { var kind: Folder.Missing; init() { fatalError() } }",
            "Folder+Kinds.swift": "extension Folder { enum FolderType: String, Codable { case user } }",
        ])
        #expect(error.message.contains("the type 'Folder.Missing' of Folder.kind is not declared in the files given"))
        #expect(error.location?.path?.hasSuffix("Folder.swift") == true)
    }

    @Test func schemaIsWhatTheContainerReaches() throws {
        let model = try SwiftSource.model(
            """
            @Model final class Root { var child: Child?; init() {} }
            @Model final class Child { var name = ""; init() {} }
            @Model final class Orphan { var name = ""; init() {} }
            let container = try ModelContainer(for: Root.self)
            """)
        #expect(model.entities.map(\.name) == ["Root", "Child"])
    }

    @Test func withoutAContainerEveryModelIsInTheSchema() throws {
        let model = try SwiftSource.model(
            """
            @Model final class A { var name = ""; init() {} }
            @Model final class B { var name = ""; init() {} }
            """)
        #expect(model.entities.map(\.name) == ["A", "B"])
    }

    @Test func nestedModelsAndTypesFromAnotherFileAndAliases() throws {
        let folder = try SwiftSource.folder([
            "Models.swift": """
            enum Catalog {
                @Model final class Shelf { var books: [Book] = []; var kind: Kind = .paper; init() {} }
            }
            typealias Book = Library.Book
            """,
            "Library.swift": """
            enum Library { @Model final class Book { var title = ""; var shelf: Catalog.Shelf?; init() {} } }
            typealias Kind = Format
            enum Format: String, Codable { case paper, ebook }
            """,
        ])
        let model = try #require(try SwiftSourceModelReader.load(from: folder).currentVersion)
        #expect(Set(model.entities.map(\.name)) == ["Shelf", "Book"])
        #expect(model.entity(named: "Shelf")?.relationships.first?.inverseName == "shelf")
        #expect(model.entity(named: "Shelf")?.attributes.first?.type == .composite)
        // The same files named one by one, separated by commas, as --model takes them.
        let list = URL(
            fileURLWithPath: ["Models.swift", "Library.swift"].map {
                folder.appendingPathComponent($0).path
            }.joined(separator: ","))
        let files = try #require(SwiftSourceModelReader.sourceFiles(at: list))
        #expect(files.files.count == 2)
        let fromList = try SwiftSourceModelReader.load(files: files.files, name: files.name)
        #expect(fromList.currentVersion?.entityVersionHashes == model.entityVersionHashes)
    }

    @Test func versionedSchemasAndTheirPlan() throws {
        let source = """
            import SwiftData
            enum V1: VersionedSchema {
                static var versionIdentifier = Schema.Version(1, 0, 0)
                static var models: [any PersistentModel.Type] { [Note.self] }
                @Model final class Note { var title = ""; init() {} }
            }
            enum V2: VersionedSchema {
                static var versionIdentifier = Schema.Version(2, 0, 0)
                static var models: [any PersistentModel.Type] { [Note.self] }
                @Model final class Note { var title = ""; var body: String?; init() {} }
            }
            enum V3: VersionedSchema {
                static let versionIdentifier: Schema.Version = .init(3, 1, 0)
                static var models: [any PersistentModel.Type] { [Note.self] }
                @Model final class Note { var title = ""; var text: String?; init() {} }
            }
            enum Plan: SchemaMigrationPlan {
                static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self, V3.self] }
                static var stages: [MigrationStage] { [.lightweight(fromVersion: V1.self, toVersion: V2.self), toV3] }
                static let toV3 = MigrationStage.custom(
                    fromVersion: V2.self, toVersion: V3.self,
                    willMigrate: { context in try context.save() },
                    didMigrate: nil
                )
            }
            """
        let bundle = try SwiftSource.load(source)
        #expect(bundle.versions.map(\.versionName) == ["V1", "V2", "V3"])
        #expect(bundle.versions.map(\.versionIdentifiers) == [["1.0.0"], ["2.0.0"], ["3.1.0"]])
        #expect(bundle.currentVersionName == "V3")
        #expect(bundle.order == .given)
        #expect(bundle.stages.count == 2)
        #expect(bundle.stages[0].kind == .lightweight)
        #expect(bundle.stages[0].from == "V1" && bundle.stages[0].to == "V2")
        guard case .custom(let closures) = bundle.stages[1].kind else {
            Issue.record("the second stage is not custom: \(bundle.stages[1])")
            return
        }
        #expect(closures.map(\.name) == ["willMigrate"])
        #expect(closures.first?.location?.line == 22)
        #expect(closures.first?.location?.path?.hasSuffix("Model.swift") == true)
        #expect(bundle.versions[1].entity(named: "Note")?.attributes.map(\.name) == ["title", "body"])
    }
}
