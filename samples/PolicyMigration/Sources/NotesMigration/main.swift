import Decant
import Foundation

// Usage: NotesMigration STORE OUTPUT
// Migrates a Journal store to the bundle's current version through "Journal 1-Journal 2.xcmappingmodel", with the
// policy class it names registered as a Swift policy.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: NotesMigration STORE OUTPUT\n".utf8))
    exit(64)
}
let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
do {
    var options = StoreMigration.Options(
        bundle: try ModelBundle.load(from: here.appendingPathComponent("Journal.xcdatamodeld")))
    try options.loadMappings(from: [here.appendingPathComponent("Journal 1-Journal 2.xcmappingmodel")])
    options.functions.registerPolicy(NoteToParagraphPolicy(), as: "NotesMigration.NoteToParagraphPolicy")
    let report = try StoreMigration.migrate(
        store: URL(fileURLWithPath: arguments[1]), to: .file(URL(fileURLWithPath: arguments[2])), options: options)
    print("\(report.output): \(report.action) \(report.sourceVersion) → \(report.destinationVersion)")
    for (entity, count) in report.written.sorted(by: { $0.key < $1.key }) { print("  \(entity)  \(count)") }
} catch let error as DecantError {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(error.code.exitCode)
}
