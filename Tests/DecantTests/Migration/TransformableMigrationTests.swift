import Decant
import DecantTestSupport
import Foundation
import Testing

/// Migrating through Transformable values (issue 39, point 3): key paths into decoded archives
/// (`$source.info.address.city`, `$source.emails[0]`), a Transformable attribute becoming a plain one and the
/// reverse, the failures, and the in-SQLite engine leaving such plans to the record stream.
///
/// Corpus stores used: apptentive `ATDataModelv5.sqlite` (its SDK archived `NSMutableDictionary`s into the Binary
/// `ATEvent.dictionaryData`; two hold `interaction_id`) and BookMigration `Model1.sqlite` (Transformable
/// `Book.fileURL`, the default transformer over `NSString`s). The small Contacts model holds what the corpus lacks: a
/// nested dictionary, an array of e-mails, an app class (`MyApp.Cover`, refused as NSSecureUnarchiveFromData refuses
/// it), bytes that are no archive.
@Suite("Migrating through Transformable values")
struct TransformableMigrationTests {
    /// Contacts 1: `Person{name, info, emails, cover, nickname: Transformable, label: String}`.
    /// Contacts 2: `Person{name, title, city, zip, firstEmail, secondEmail, emailCount, address: Transformable,
    /// coverText, nickname: String, label: Transformable}`.
    static func contacts() -> ModelBundle {
        func attribute(_ name: String, _ type: AttributeType) -> Attribute {
            Attribute(name: name, type: type, isOptional: true)
        }
        var cover = attribute("cover", .transformable)
        cover.valueTransformerName = "NSSecureUnarchiveFromData"
        var person1 = Entity(name: "Person")
        person1.attributes = [
            attribute("name", .string), attribute("info", .transformable), attribute("emails", .transformable),
            cover, attribute("nickname", .transformable), attribute("label", .string),
        ]
        var person2 = Entity(name: "Person")
        person2.attributes = [
            attribute("name", .string), attribute("title", .string), attribute("city", .string),
            attribute("zip", .integer64), attribute("firstEmail", .string), attribute("secondEmail", .string),
            attribute("emailCount", .integer64), attribute("address", .transformable), attribute("coverText", .string),
            attribute("nickname", .string), attribute("label", .transformable),
        ]
        return MigrationFixtures.bundle(
            "Contacts",
            [
                ObjectModel(versionName: "Contacts 1", entities: [person1]),
                ObjectModel(versionName: "Contacts 2", entities: [person2]),
            ])
    }

    static let mapping = """
        source: Contacts 1
        destination: Contacts 2
        entities:
          Person:
            attributes:
              title: $source.info.title
              city: $source.info.address.city
              zip: $source.info.address.zip
              firstEmail: $source.emails[0]
              secondEmail: $source.emails[1]
              emailCount: $source.emails.@count
              address: $source.info.address
              coverText: $source.cover.text
              nickname: unarchived($source.nickname)
              label: $source.label
        """

    static let address = FoundationValue.dictionary([.init("city", .string("Oslo")), .init("zip", .integer(150))])

    /// Writes Contacts 1 people: p1 with everything (its cover an app class), p2 with a dictionary without an address,
    /// no e-mails and an `NSOrderedSet` cover (both refused by `NSSecureUnarchiveFromData`), p3 with one e-mail and
    /// nothing else.
    static func contactsStore(in folder: URL, info first: Data? = nil) throws -> URL {
        let v1 = contacts().versions[0]
        let url = folder.appendingPathComponent("contacts1.sqlite")
        func archive(_ value: FoundationValue) throws -> Value { .transformable(try value.archivedData()) }
        let info = try first.map(Value.transformable)
            ?? archive(.dictionary([.init("title", .string("Dr")), .init("address", address)], isMutable: true))
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: [
                MigrationFixtures.record(
                    "Person", 1, in: v1,
                    [
                        "name": "Ada", "info": info,
                        "emails": try archive(.collection([.string("a@x.org"), .string("b@x.org")], .mutableArray)),
                        "cover": .transformable(try TransformableFixtures.object("MyApp.Cover")),
                        "nickname": try archive(.string("Al")), "label": "L1",
                    ]),
                MigrationFixtures.record(
                    "Person", 2, in: v1,
                    [
                        "name": "Bo", "info": try archive(.dictionary([.init("title", .string("Ms"))])),
                        "emails": try archive(.collection([])),
                        "cover": .transformable(try TransformableFixtures.object("NSOrderedSet")),
                    ]),
                MigrationFixtures.record(
                    "Person", 3, in: v1, ["name": "Cy", "emails": try archive(.collection([.string("c@x.org")]))]),
            ])
        return url
    }

    /// Options migrating with `bundle` through the mapping file text `mapping`.
    static func options(
        _ mapping: String = mapping, path: String = "contacts-1-2.yaml", bundle: ModelBundle = contacts()
    ) throws -> StoreMigration.Options {
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [try MappingFiles.parse(mapping, path: path)]
        return options
    }

    /// An entity of optional attributes.
    static func entity(
        _ name: String, _ attributes: [(String, AttributeType)], _ relationships: [Relationship] = []
    ) -> Entity {
        var entity = Entity(name: name)
        entity.attributes = attributes.map { Attribute(name: $0.0, type: $0.1, isOptional: true) }
        entity.relationships = relationships
        return entity
    }

    @Test("fields move out of a transformable dictionary and array into attributes, and the types change both ways")
    func movesFieldsOutOfArchives() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.contactsStore(in: folder)
        let options = try Self.options()
        let output = folder.appendingPathComponent("contacts2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let v2 = Self.contacts().versions[1]
        let people = try #require(try MigrationFixtures.read(output, bundle: Self.contacts())["Person"])
        func values(_ name: String) -> [Value?] { people.map { MigrationFixtures.value($0, name, model: v2) } }
        #expect(values("name") == [.string("Ada"), .string("Bo"), .string("Cy")])
        #expect(values("title") == [.string("Dr"), .string("Ms"), .null])
        #expect(values("city") == [.string("Oslo"), .null, .null])
        #expect(values("zip") == [.integer(150), .null, .null])
        #expect(values("firstEmail") == [.string("a@x.org"), .null, .string("c@x.org")])
        #expect(values("secondEmail") == [.string("b@x.org"), .null, .null])
        #expect(values("emailCount") == [.integer(2), .integer(0), .integer(1)])
        #expect(values("nickname") == [.string("Al"), .null, .null])
        // The nested dictionary stays an archive, NSKeyedArchiver's layout; the String label is archived.
        guard case .transformable(let address)?? = values("address").first, case .transformable(let label)?? =
            values("label").first
        else {
            Issue.record("address and label are not Transformable values: \(values("address")), \(values("label"))")
            return
        }
        #expect(try FoundationValue(archivedData: address) == Self.address)
        #expect(try FoundationValue(archivedData: label) == .string("L1"))
        #expect(values("address").dropFirst().allSatisfy { $0 == .null })
        // The app class and the ordered set read as nil, as NSSecureUnarchiveFromData gives them, with one warning.
        #expect(values("coverText") == [.null, .null, .null])
        let warnings = report.warnings.filter { $0.kind == .archivedValueReadAsNil }
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.message.hasPrefix(
                "Person.coverText: 2 values read from archives holding classes outside Foundation's plain ones "
                    + "(MyApp.Cover, NSOrderedSet) were nil, as NSSecureUnarchiveFromData gives them (Person/p1, "
                    + "Person/p2)") == true, "\(warnings)")
        #expect(warnings.first?.location?.object == "Person/p1")
    }

    @Test("the in-SQLite engine leaves a plan that reads into archived values to the record stream, and says why")
    func inStoreEngineDeclines() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.contactsStore(in: folder)
        let report = try StoreMigration.migrate(
            store: store, to: .file(folder.appendingPathComponent("out.sqlite")), options: try Self.options())
        #expect(report.engine == .stream)
        let reason = report.streamReason?.description ?? ""
        #expect(
            reason.hasPrefix(
                "Person.address reads into the archived value of Person.info ($source.info.address): each archive is "
                    + "decoded object by object"), "\(reason)")
        let plan = try StoreMigration.plan(store: store, options: try Self.options())
        #expect(plan.streamReason?.description == report.streamReason?.description)
    }

    @Test("a key path into bytes that are no keyed archive stops the run, naming the object and attribute (exit 65)")
    func notAnArchiveFails() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.contactsStore(in: folder, info: Data("#ff0000".utf8))
        let output = folder.appendingPathComponent("out.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: try Self.options())
        }
        #expect(error.code == .malformedInput && error.code.exitCode == 65)
        // The first attribute in the entity's order that reads into it.
        #expect(
            error.message.contains("$source.info.address: the value is not a keyed archive (7 bytes)"),
            "\(error.message)")
        #expect(error.location?.entity == "Person" && error.location?.object == "Person/p1")
        #expect(error.location?.keyPath == "address")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a key path into a String attribute is a mistake of the mapping file, at its line (exit 65)")
    func keyPathIntoPlainValueFails() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.yaml")
        try Data(
            ("source: Contacts 1\ndestination: Contacts 2\nentities:\n  Person:\n    attributes:\n"
                + "      title: $source.name.first\n").utf8
        ).write(to: file)
        var options = StoreMigration.Options(bundle: Self.contacts())
        let error = try #require(throws: DecantError.self) { try options.loadMappings(from: [file]) }
        #expect(error.code.exitCode == 65, "\(error.code)")
        #expect(error.location?.line == 6 && error.location?.path?.hasSuffix("bad.yaml") == true, "\(error)")
        #expect(
            error.message.contains(
                "$source.name.first: first is read from a value, not from an object (a key path reads on only into a "
                    + "Transformable or Binary attribute's archived value)"), "\(error.message)")
    }

    @Test("`[` must hold a whole number: the parse error names the mapping file, line and column")
    func indexSyntax() throws {
        let expression = try ValueExpression(parsing: "$source.people[2].emails[0]")
        #expect(expression == .source(keyPath: ["people", "[2]", "emails", "[0]"]))
        #expect(expression.description == "$source.people[2].emails[0]")
        let error = try #require(throws: DecantError.self) {
            try MappingFiles.parse(
                "source: Contacts 1\ndestination: Contacts 2\nentities:\n  Person:\n    attributes:\n"
                    + "      firstEmail: $source.emails[first]\n",
                path: "index.yaml")
        }
        #expect(error.code.exitCode == 65)
        #expect(error.description.contains("index.yaml:6"), "\(error.description)")
        #expect(error.message.contains("column 16: expected a whole number and `]` after `[`"), "\(error.message)")
    }

    @Test("a type change from Transformable is not inferred; plan suggests unarchived(…)")
    func typeChangeNotInferred() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.contactsStore(in: folder)
        let plan = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: Self.contacts()))
        let problem = try #require(plan.plan.problems.first { $0.property == "nickname" })
        #expect(problem.message == "Transformable → String is not a change Core Data infers")
        #expect(problem.advice?.hasSuffix("nickname: 'unarchived($source.nickname)'") == true, "\(problem)")
        let label = try #require(plan.plan.problems.first { $0.property == "label" })
        #expect(label.advice?.hasSuffix("label: 'archived($source.label)'") == true, "\(label)")
    }

    @Test("key paths through relationships read into the archives of the objects they reach")
    func archivesOfOtherObjects() throws {
        let notes = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        let folder = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        let bundle = MigrationFixtures.bundle(
            "Drawer",
            [
                ObjectModel(
                    versionName: "Drawer 1",
                    entities: [
                        Self.entity("Folder", [("info", .transformable)], notes),
                        Self.entity("Note", [("meta", .transformable)], folder),
                    ]),
                ObjectModel(
                    versionName: "Drawer 2",
                    entities: [
                        Self.entity("Folder", [("newest", .integer64)], notes),
                        Self.entity("Note", [("folderKind", .string)], folder),
                    ]),
            ])
        let v1 = bundle.versions[0]
        let v2 = bundle.versions[1]
        let temporary = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let store = temporary.appendingPathComponent("drawer1.sqlite")
        func archive(_ entries: [FoundationValue.Entry]) throws -> Value {
            .transformable(try FoundationValue.dictionary(entries).archivedData())
        }
        let home = RelationshipValue.toOne(ObjectReference(entity: "Folder", id: .primaryKey(1)))
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["info": try archive([.init("kind", .string("work"))])]),
                MigrationFixtures.record("Folder", 2, in: v1),
                MigrationFixtures.record(
                    "Note", 1, in: v1, ["meta": try archive([.init("year", .integer(1999))])],
                    relationships: ["folder": home]),
                MigrationFixtures.record(
                    "Note", 2, in: v1, ["meta": try archive([.init("year", .integer(2024))])],
                    relationships: ["folder": home]),
                MigrationFixtures.record("Note", 3, in: v1),
            ])
        let options = try Self.options(
            """
            source: Drawer 1
            destination: Drawer 2
            entities:
              Folder: { attributes: { newest: $source.notes.@max.meta.year } }
              Note: { attributes: { folderKind: $source.folder.info.kind } }
            """, path: "drawer.yaml", bundle: bundle)
        let output = temporary.appendingPathComponent("drawer2.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        #expect(migrated["Folder"]?.map { MigrationFixtures.value($0, "newest", model: v2) } == [.integer(2024), .null])
        #expect(
            migrated["Note"]?.map { MigrationFixtures.value($0, "folderKind", model: v2) }
                == [.string("work"), .string("work"), .null])
    }

    // MARK: Corpus

    @Test("apptentive: ATEvent's interaction_id moves out of the SDK's archived dictionaries into an attribute")
    func apptentiveInteractionID() throws {
        let bundle = try ModelBundle.load(
            from: Fixtures.corpus(
                "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/Apptentive/Model/ATDataModel.xcdatamodeld"))
        let v5 = try #require(bundle.version(named: "ATDataModel 5"))
        var plain = v5
        plain.versionName = "ATDataModel 5 plain"
        let index = try #require(plain.entities.firstIndex { $0.name == "ATEvent" })
        plain.entities[index].attributes.append(Attribute(name: "interactionID", type: .string, isOptional: true))
        let migrating = MigrationFixtures.bundle("ATDataModel", [v5, plain])
        let options = try Self.options(
            """
            source: ATDataModel 5
            destination: ATDataModel 5 plain
            entities:
              ATEvent:
                attributes:
                  interactionID: $source.dictionaryData.interaction_id
            """, path: "events.yaml", bundle: migrating)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = Fixtures.corpus(
            "\(Fixtures.appsPrefix)apptentive__apptentive-ios/Apptentive/ApptentiveTests/data/ATDataModelv5.sqlite")
        let output = folder.appendingPathComponent("events.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let reason = report.streamReason?.description ?? ""
        #expect(reason.contains("reads into the archived value of ATEvent.dictionaryData"), "\(reason)")
        let events = try #require(try MigrationFixtures.read(output, bundle: migrating)["ATEvent"])
        #expect(events.map(\.reference.description) == ["ATEvent/p168", "ATEvent/p179"])
        #expect(
            events.map { MigrationFixtures.value($0, "interactionID", model: plain) }
                == Array(repeating: .string("55c2826335878be4ab000dac"), count: 2))
        #expect(report.warnings.filter { $0.kind == .archivedValueReadAsNil }.isEmpty)
    }

    @Test("BookMigration: Transformable Book.fileURL (NSString archives) becomes a String attribute")
    func bookFileURLBecomesString() throws {
        let folder = "\(Fixtures.appsPrefix)hwaxxer__BookMigration/BookMigration/"
        let bundle = try ModelBundle.load(from: Fixtures.corpus(folder + "Model.xcdatamodeld"))
        let v1 = try #require(bundle.version(named: "Model1"))
        var plain = v1
        plain.versionName = "Model1 plain"
        let book = try #require(plain.entities.firstIndex { $0.name == "Book" })
        let fileURL = try #require(plain.entities[book].attributes.firstIndex { $0.name == "fileURL" })
        plain.entities[book].attributes[fileURL].type = .string
        let migrating = MigrationFixtures.bundle("Model", [v1, plain])
        let options = try Self.options(
            "source: Model1\ndestination: Model1 plain\nentities:\n  Book:\n    attributes:\n"
                + "      fileURL: $source.fileURL\n", path: "books.yaml", bundle: migrating)
        let temporary = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let output = temporary.appendingPathComponent("books.sqlite")
        let report = try StoreMigration.migrate(
            store: Fixtures.corpus(folder + "Model1.sqlite"), to: .file(output), options: options)
        #expect(report.engine == .stream)
        let books = try #require(try MigrationFixtures.read(output, bundle: migrating)["Book"])
        #expect(
            books.map { MigrationFixtures.value($0, "fileURL", model: plain) }
                == ["The Trial.file", "Cosmos.file", "Metamorphosis.file", "Extinction.file"].map(Value.string))
    }
}
