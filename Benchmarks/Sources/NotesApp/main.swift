// Writes the ArchiveBenchmark's Foundation-written input: `count` LegacyNote objects archived by Foundation's own
// NSKeyedArchiver (swift-corelibs-foundation on Linux), as `samples/LegacyNotes/NotesApp.swift` writes them.
//
//   NotesApp count notes.archive
//
// The target is named NotesApp, as the sample's script module is, so the class is archived as
// `NotesApp.LegacyNote`, as a Swift app without `@objc(LegacyNote)` writes it. The class is the sample's (an
// NSObject subclass with NSCoding, an optional content and a date) with the two primitive fields of the benchmarks'
// Notes model (a Bool and an Int, encoded with `encode(_:forKey:)`). Texts are UTF-8 with quotes, commas and
// multi-byte characters in one note of two; one note in fifty has a nil content. Nothing here uses Decant.
import Foundation

/// The app's note class before it moved to Core Data.
final class LegacyNote: NSObject, NSSecureCoding {
    static let supportsSecureCoding = true

    let content: String?
    let date: Date
    let pinned: Bool
    let wordCount: Int

    init(content: String?, date: Date, pinned: Bool, wordCount: Int) {
        self.content = content
        self.date = date
        self.pinned = pinned
        self.wordCount = wordCount
    }

    func encode(with coder: NSCoder) {
        coder.encode(content, forKey: "content")
        coder.encode(date, forKey: "date")
        coder.encode(pinned, forKey: "pinned")
        coder.encode(wordCount, forKey: "wordCount")
    }

    init?(coder: NSCoder) {
        content = coder.decodeObject(forKey: "content") as? String
        guard let date = coder.decodeObject(forKey: "date") as? Date else { return nil }
        self.date = date
        pinned = coder.decodeBool(forKey: "pinned")
        wordCount = coder.decodeInteger(forKey: "wordCount")
    }
}

/// The text of note `key` (the same on every run) and its word count: ~40 bytes of words, quoted and with a comma;
/// in one note of two, French with accents and an emoji (multi-byte UTF-8, so UTF-16 in the property list).
func noteText(_ key: Int) -> (text: String, wordCount: Int) {
    let plain = ["milk", "eggs", "bread", "call", "mum", "meeting", "at", "noon", "buy", "stamps", "and", "tea"]
    let accented = [
        "café", "à", "15 h", "avec", "Zoë", "crème", "brûlée", "déjà", "vu", "naïve", "🎉", "œuf",
    ]
    let words = key % 2 == 0 ? accented : plain
    var text = ""
    var wordCount = 0
    var seed = key &* 2_654_435_761
    while text.utf8.count < 36 {
        let word = words[seed % words.count]
        text += text.isEmpty ? "\"\(word)\"," : " \(word)"
        seed = seed / words.count + key
        wordCount += 1
    }
    return (text + " #\(key)", wordCount + 1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[1]), count > 0 else {
    FileHandle.standardError.write(Data("usage: NotesApp count notes.archive\n".utf8))
    exit(64)
}
var notes: [LegacyNote] = []
notes.reserveCapacity(count)
for key in 1...count {
    let (text, wordCount) = noteText(key)
    notes.append(
        LegacyNote(
            content: key % 50 == 0 ? nil : text,
            date: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(key) * 13.25),
            pinned: key % 7 == 0, wordCount: wordCount))
}
let data = try NSKeyedArchiver.archivedData(withRootObject: notes as NSArray, requiringSecureCoding: false)
try data.write(to: URL(fileURLWithPath: arguments[2]))
