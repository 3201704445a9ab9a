// Writes samples/LegacyNotes.archive: the notes of the Notes story as an app saved them before Core Data, with
// Foundation's own NSKeyedArchiver (swift-corelibs-foundation on Linux writes the same format as Apple's).
//
// Run from the package root:
//
//     SWIFT_DETERMINISTIC_HASHING=1 swift samples/LegacyNotes/NotesApp.swift samples/LegacyNotes.archive
//
// The script's module is NotesApp (its file name), so the class is archived as `NotesApp.LegacyNote`, as a Swift
// app without `@objc(LegacyNote)` writes it. Fixed dates, and deterministic hashing for the order in which each
// object's keys are written, make the output the same on every run.
import Foundation

/// The app's note class before it moved to Core Data: a title-less text with a date.
final class LegacyNote: NSObject, NSCoding {
    let content: String?
    let date: Date

    init(content: String?, date: Date) {
        self.content = content
        self.date = date
    }

    func encode(with coder: NSCoder) {
        coder.encode(content, forKey: "content")
        coder.encode(date, forKey: "date")
    }

    init?(coder: NSCoder) {
        content = coder.decodeObject(forKey: "content") as? String
        guard let date = coder.decodeObject(forKey: "date") as? Date else { return nil }
        self.date = date
    }
}

let arguments = CommandLine.arguments
let output = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "LegacyNotes.archive")

// Seconds since 2001-01-01 UTC, so the archive is the same on every run.
let notes = [
    LegacyNote(content: "Buy milk", date: Date(timeIntervalSinceReferenceDate: 700_000_000)),
    LegacyNote(content: "Call the plumber", date: Date(timeIntervalSinceReferenceDate: 700_086_400)),
    LegacyNote(
        content: "Ideas:\n- a garden\n- a bigger desk", date: Date(timeIntervalSinceReferenceDate: 700_172_800.5)),
    LegacyNote(content: "Café à 15 h avec Zoë 🎉", date: Date(timeIntervalSinceReferenceDate: 700_259_200)),
    LegacyNote(content: nil, date: Date(timeIntervalSinceReferenceDate: 700_345_600)),
]

let data = try NSKeyedArchiver.archivedData(withRootObject: notes as NSArray, requiringSecureCoding: false)
try data.write(to: output)

// Read it back with Foundation's unarchiver, to be sure the file is what an app would have read.
let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
unarchiver.requiresSecureCoding = false
let back = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? [LegacyNote] ?? []
precondition(
    back.count == notes.count && zip(back, notes).allSatisfy { $0.content == $1.content && $0.date == $1.date })
print("\(output.path): \(notes.count) notes, \(data.count) bytes")
