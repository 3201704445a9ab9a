import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Damaged and hostile property lists fail with `.malformedInput` naming the file and the place (byte offset, line,
/// value), in the survey and in the reader alike: never a crash, a hang or unbounded memory.
@Suite("Malformed plain property lists")
struct PropertyListMalformedTests {
    static var options: FormatOptions {
        var options = PropertyListTesting.folderOptions
        options.entity = "Folder"
        return options
    }

    /// Both readers of a property list: the survey and the record reader.
    static func readBothWays(_ data: Data) throws {
        _ = try PropertyListSurvey(data: data, path: "bad.plist")
        _ = try PropertyListTesting.records(data, options: options, path: "bad.plist")
    }

    /// The error both ways, which must be a located `.malformedInput` (or `.unsupportedFormat` for bytes that are
    /// no property list at all).
    static func expectLocatedFailure(_ data: Data, _ comment: Comment? = nil) {
        let survey = #expect(throws: DecantError.self, comment) {
            _ = try PropertyListSurvey(data: data, path: "bad.plist")
        }
        let reader = #expect(throws: DecantError.self, comment) {
            _ = try PropertyListTesting.records(data, options: options, path: "bad.plist")
        }
        for error in [survey, reader].compactMap({ $0 }) {
            #expect([.malformedInput, .unsupportedFormat].contains(error.code), comment)
            #expect(error.location?.path == "bad.plist", comment)
            let place = error.location.map { $0.offset != nil || $0.line != nil || $0.keyPath != nil } ?? false
            #expect(place, "\(error) names no place")
        }
    }

    @Test func everyTruncationFailsWithItsPlace() {
        let data = PropertyListTesting.pythonBinary
        for length in stride(from: 0, to: data.count, by: 7) {
            Self.expectLocatedFailure(data.prefix(length), "cut at \(length)")
        }
    }

    @Test func flippedBytesReadOrFailWithItsPlace() {
        // Every byte of the trailer and offset table, and every fifth one before them, with three different flips.
        let data = PropertyListTesting.pythonBinary
        let positions = Array(stride(from: 8, to: data.count - 80, by: 5)) + Array((data.count - 80)..<data.count)
        for position in positions {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var mutated = data
                mutated[position] ^= flip
                do {
                    try Self.readBothWays(mutated)
                } catch let error as DecantError {
                    // A damaged value can also be a value that no longer fits its attribute, or a key path gone.
                    #expect([.malformedInput, .unsupportedFormat, .usage].contains(error.code), "\(error)")
                    #expect(error.location?.path == "bad.plist", "\(error)")
                } catch {
                    Issue.record("byte \(position) ^ \(flip): \(error)")
                }
            }
        }
    }

    @Test func aReferenceCycleIsRefused() {
        // bplist00, object 0 an array holding object 0, offset table, trailer (1-byte offsets and references).
        var bytes = Array("bplist00".utf8) + [0xA1, 0x00] + [0x08]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
        bytes += [0, 0, 0, 0, 0, 0, 0, 10]
        Self.expectLocatedFailure(Data(bytes))
    }

    @Test func sharedArraysThatWouldExplodeAreRefused() {
        // A binary "billion laughs": array i holds array i + 1 twice, 40 levels, so 2^40 values from 41 objects.
        let levels = 40
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for level in 0..<levels {
            offsets.append(UInt8(bytes.count))
            bytes += [0xA2, UInt8(level + 1), UInt8(level + 1)]
        }
        offsets.append(UInt8(bytes.count))
        bytes += [0x10, 0x01]
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(levels + 1)] + [0, 0, 0, 0, 0, 0, 0, 0]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        Self.expectLocatedFailure(Data(bytes))
    }

    @Test func nestingTooDeepIsRefused() {
        let depth = 2000
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n"
            + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "\n</plist>\n"
        Self.expectLocatedFailure(Data(xml.utf8))
    }

    @Test func invalidUTF8IsRefusedAtItsOffset() throws {
        var data = PropertyListTesting.appleXML
        let title = try #require(data.range(of: Data("Apple</string>".utf8)))
        data[title.lowerBound + 1] = 0xC3
        data[title.lowerBound + 2] = 0x28
        Self.expectLocatedFailure(data)
        let error = try #require(throws: DecantError.self) { try PropertyListSurvey(data: data, path: "bad.plist") }
        #expect(error.location?.offset == title.lowerBound + 1)
    }

    @Test func aListOfSomethingElseSaysWhatItFound() throws {
        let strings = BinaryPropertyListWriter().write(["a", "b"])
        let error = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(strings, options: Self.options, path: "bad.plist")
        }
        #expect(error.code == .malformedInput)
        #expect(error.location?.object == "[0]")
        #expect(error.message.contains("expected a dictionary of Folder, found string"))
        let scalar = BinaryPropertyListWriter().write(["Version": 1])
        let none = try #require(throws: DecantError.self) {
            try PropertyListTesting.records(scalar, options: Self.options, path: "bad.plist")
        }
        #expect(none.message.contains("holds no array of dictionaries"))
    }
}
