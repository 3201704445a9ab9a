import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lock a model's versions against drift, or check them against the lock.",
            discussion: """
                A version that has shipped must never change: an edit that changes an entity's version hash makes \
                every store of that version unopenable (Core Data error 134130), and is easy to miss in review. \
                decant lock MODEL writes, per version, its identifiers, its entities' and their properties' version \
                hashes and its checksum to a lock file: by default MODEL.decant-lock.json beside the model \
                (Notes.decant-lock.json for Notes.xcdatamodeld), a file to commit to git with the model.

                With --check, nothing is written: each locked version whose hashes changed (with the entities and \
                properties that changed) and each locked version no longer in the model is named, and the exit \
                code is 1; a version not locked yet is a warning on standard error (exit 0 when that is all). Run \
                decant lock again to lock a new version once it ships.
                """
        )

        @Argument(help: "The model bundle (.xcdatamodeld or .momd).")
        var model: String

        @Flag(help: "Compare the model with the lock file instead of writing it.")
        var check = false

        @Option(name: .long, help: ArgumentHelp("The lock file (default: MODEL.decant-lock.json beside the model).", valueName: "path"))
        var lockFile: String?

        @Flag(name: .shortAndLong, help: "Show the causes of errors.")
        var verbose: Int

        @Flag(help: "Print one JSON document on standard output instead of text.")
        var json = false

        func run() throws {
            try reportingErrors(verbose: verbose, json: json) {
                let modelURL = URL(fileURLWithPath: model)
                let lock = ModelLock(bundle: try ModelBundle.load(modelOrSource: modelURL))
                let fileURL = lockFile.map { URL(fileURLWithPath: $0) } ?? ModelLock.defaultURL(for: modelURL)
                let shown = lockFile ?? Self.shownPath(of: fileURL, besideTyped: model)
                guard check else {
                    try lock.write(to: fileURL)
                    if json {
                        printOut(String(decoding: try ModelLock.Document(lockFile: shown, lock: lock).jsonDocument(), as: UTF8.self))
                    } else {
                        printOut("\(shown): \(lock.versions.count) versions of \(lock.model) locked")
                    }
                    return
                }
                let locked = try ModelLock.read(from: fileURL)
                let findings = locked.check(lock)
                for line in findings.lines {
                    if line.hasPrefix("warning:") {
                        FileHandle.standardError.write(Data("\(line)\n".utf8))
                    } else if !json {
                        printOut("\(shown): \(line)")
                    }
                }
                if json {
                    let document = ModelLock.Document(lockFile: shown, lock: locked, check: findings)
                    printOut(String(decoding: try document.jsonDocument(), as: UTF8.self))
                }
                if findings.hasProblems { throw ExitCode(1) }
                if !json { printOut("\(shown): \(locked.versions.count) locked versions unchanged") }
            }
        }

        /// The lock file's path as the user would type it: beside the model path they typed.
        static func shownPath(of url: URL, besideTyped model: String) -> String {
            var folder = (model.hasSuffix("/") ? String(model.dropLast()) : model)
            folder = (folder as NSString).deletingLastPathComponent
            return folder.isEmpty ? url.lastPathComponent : folder + "/" + url.lastPathComponent
        }
    }
}
