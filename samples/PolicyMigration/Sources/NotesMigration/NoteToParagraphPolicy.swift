import Decant

/// Moves each Note's text into a new Paragraph that points back at the migrated Note: an excerpt as its title, the
/// text as its body, position 0. The Xcode mapping model names this class as `NotesMigration.NoteToParagraphPolicy`.
struct NoteToParagraphPolicy: EntityMigrationPolicy {
    /// How many characters of the text the title keeps.
    static let excerptLength = 24

    func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        // What Core Data's `super.createDestinationInstances` makes: the Note with its mapped attributes.
        let note = try manager.createDefaultDestinationInstance()
        let text = try manager.sourceValue("text").text
        let paragraph = manager.insertObject(entity: "Paragraph")
        paragraph["title"] = text.map { .string(String($0.prefix(Self.excerptLength))) } ?? .null
        paragraph["body"] = .string(text ?? "")
        paragraph["position"] = .integer(0)
        paragraph.setRelationship("note", to: [note.reference])
    }
}
