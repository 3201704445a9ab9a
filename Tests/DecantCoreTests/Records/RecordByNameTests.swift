import DecantCore
import Foundation
import Testing

/// Records written and read by property name: ``Record/init(entity:id:_:relationships:in:)``, the layout's
/// lookups and ``InMemoryStore/insert(_:id:_:relationships:)``.
@Suite("Records by property name")
struct RecordByNameTests {
    /// `Folder{name} ⇄ Note{pinned (default YES), score, text, when; folder}`, `Checklist` a sub-entity of Note.
    static let model: ObjectModel = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        var pinned = Attribute(name: "pinned", type: .boolean)
        pinned.defaultValue = "YES"
        note.attributes = [
            pinned, Attribute(name: "score", type: .double, isOptional: true),
            Attribute(name: "text", type: .string, isOptional: true),
            Attribute(name: "when", type: .date, isOptional: true),
        ]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        let checklist = Entity(name: "Checklist", parentName: "Note")
        return ObjectModel(versionName: "Notes", entities: [checklist, folder, note])
    }()

    @Test func aRecordByNameIsTheRecordByPosition() throws {
        let home = ObjectReference(entity: "Folder", id: .primaryKey(1))
        let note = try Record(
            entity: "Note", id: .primaryKey(7), ["text": "milk", "score": 2, "pinned": false],
            relationships: ["folder": .toOne(home)], in: Self.model)
        // Layout order: pinned, score, text, when; folder. An integer literal is taken for a Double.
        #expect(note == Record(entity: "Note", id: .primaryKey(7), values: [false, .double(2), "milk", nil],
                               relationships: [.toOne(home)]))
        let layout = try #require(RecordLayout(entity: "Note", in: Self.model))
        #expect(try layout.value("text", of: note) == "milk")
        #expect(try layout.relationship("folder", of: note) == .toOne(home))
        #expect(layout.namedValues(of: note) == ["pinned": false, "score": .double(2), "text": "milk", "when": nil])
    }

    @Test func leftOutPropertiesTakeTheirDefaults() throws {
        let note = try Record(entity: "Note", id: .primaryKey(1), ["text": "milk"], in: Self.model)
        // pinned's default is YES, as a new object in a Core Data context would have it.
        #expect(note.values == [true, nil, "milk", nil])
        #expect(note.relationships == [.toOne(nil)])
        // Folder.notes is carried by its to-one inverse, as every reader gives it.
        let folder = try Record(entity: "Folder", id: .primaryKey(1), ["name": "Home"], in: Self.model)
        #expect(folder.relationships == [.viaInverse])
    }

    @Test(
        "unknown names and wrong types are usage errors naming the entity and the property",
        arguments: [
            (["colour": Value.string("red")], [String: RelationshipValue](), "colour", "Note has no attribute colour"),
            (["folder": .null], [:], "folder", "it is a relationship"),
            ([:], ["text": .toOne(nil)], "text", "it is an attribute"),
            (["pinned": "yes"], [:], "pinned", "Note.pinned is a Boolean attribute: the string \"yes\""),
            (["when": 3], [:], "when", "the integer 3"),
        ])
    func refusals(_ values: [String: Value], _ relationships: [String: RelationshipValue], _ key: String, _ text: String)
        throws
    {
        let error = try #require(throws: DecantError.self) {
            try Record(entity: "Note", id: .primaryKey(1), values, relationships: relationships, in: Self.model)
        }
        #expect(error.code == .usage)
        #expect(error.location?.entity == "Note" && error.location?.keyPath == key)
        #expect(error.message.contains(text), "\(error.message)")
        let layout = try #require(RecordLayout(entity: "Note", in: Self.model))
        let note = try Record(entity: "Note", id: .primaryKey(1), [:], in: Self.model)
        #expect(throws: DecantError.self) { try layout.value("colour", of: note) }
        #expect(throws: DecantError.self) { try Record(entity: "Nope", id: .primaryKey(1), [:], in: Self.model) }
    }

    @Test func theInMemoryStoreNumbersObjectsPerInheritanceTree() throws {
        var store = InMemoryStore(model: Self.model)
        let home = try store.insert("Folder", ["name": "Home"])
        let first = try store.insert("Note", ["text": "milk"], relationships: ["folder": .toOne(home)])
        let list = try store.insert("Checklist", ["text": "eggs"])
        let given = try store.insert("Note", id: .primaryKey(10), ["text": "tea"])
        let next = try store.insert("Note", ["text": "bread"])
        #expect(home.id == .primaryKey(1) && first.id == .primaryKey(1))
        // Checklist shares Note's tree (one Z_PK sequence), so it does not start again at 1.
        #expect(list.id == .primaryKey(2) && given.id == .primaryKey(10) && next.id == .primaryKey(11))
        #expect(store.records(of: "Note").map(\.values[2]) == ["milk", "tea", "bread"])
        #expect(store.records(of: "Note").first?.relationships == [.toOne(home)])
        #expect(throws: DecantError.self) { try store.insert("Note", ["colour": "red"]) }
        #expect(store.counts == ["Folder": 1, "Note": 3, "Checklist": 1])
    }
}
