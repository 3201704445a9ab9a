import DecantCore
import DecantSwiftData
import DecantTestSupport
import Foundation
import Testing

/// Small SwiftData sources of the tests' own, written to a temporary folder and read back.
enum SwiftSource {
    /// Writes each file (name → text) into a fresh folder and returns it.
    static func folder(_ files: [String: String]) throws -> URL {
        try Fixtures.temporaryDirectory { folder in
            for (name, text) in files {
                try Data(text.utf8).write(to: folder.appendingPathComponent(name))
            }
        }
    }

    /// Reads one file of source as a model.
    static func load(_ text: String) throws -> ModelBundle {
        try SwiftSourceModelReader.load(from: folder(["Model.swift": text]))
    }

    /// The current version of one file of source.
    static func model(_ text: String) throws -> ObjectModel {
        try #require(try load(text).currentVersion)
    }

    /// The error reading `files` throws; fails the test when it reads.
    static func refusal(_ files: [String: String]) throws -> DecantError {
        let folder = try folder(files)
        do {
            let bundle = try SwiftSourceModelReader.load(from: folder)
            Issue.record("read without refusal: \(bundle.versions.map(\.entities).map { $0.map(\.name) })")
            throw DecantError(.internalError, "no refusal")
        } catch let error as DecantError {
            return error
        }
    }

    static func refusal(_ text: String) throws -> DecantError {
        try refusal(["Model.swift": text])
    }
}
