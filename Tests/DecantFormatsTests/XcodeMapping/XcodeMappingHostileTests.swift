import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Damaged mapping models throw `.malformedInput` (exit 65) and never crash.
@Suite("XcodeMapping hostile input")
struct XcodeMappingHostileTests {
    static let cdmURL = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/V2toV3.cdm")
    static let xmlURL = Fixtures.corpus(
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel/xcmapping.xml")

    /// Reads `data` as a `.cdm`; returns the error code, or nil when it read.
    static func cdmOutcome(_ data: Data) -> DecantError.Code? {
        do {
            _ = try XcodeMappingModel(cdmData: data, path: "mutated.cdm")
            return nil
        } catch let error as DecantError {
            return error.code
        } catch {
            return .internalError
        }
    }

    @Test("a truncated .cdm is malformed input")
    func truncated() throws {
        let data = try Data(contentsOf: Self.cdmURL)
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 97)) {
            #expect(Self.cdmOutcome(data.prefix(length)) == .malformedInput, "length \(length)")
        }
    }

    @Test("flipped bytes in a .cdm read or throw malformed input")
    func flipped() throws {
        let data = try Data(contentsOf: Self.cdmURL)
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<400 {
            var bytes = [UInt8](data)
            let index = Int(generator.next() % UInt64(bytes.count))
            bytes[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            let outcome = Self.cdmOutcome(Data(bytes))
            #expect(outcome == nil || outcome == .malformedInput, "byte \(index)")
        }
    }

    @Test("an unknown expression type names its object")
    func unknownExpressionType() throws {
        var plist = try PropertyListValue.decode(from: Data(contentsOf: Self.cdmURL))
        guard case .dictionary(var archive) = plist, case .array(var objects)? = archive["$objects"],
            case .dictionary(var fetch) = objects[8]
        else {
            Issue.record("unexpected archive shape")
            return
        }
        fetch["NSExpressionType"] = .integer(77)
        objects[8] = .dictionary(fetch)
        archive["$objects"] = .array(objects)
        plist = .dictionary(archive)
        let keyed = try KeyedArchive(propertyList: plist, path: "mutated.cdm")
        do {
            _ = try NSExpressionNode.decode(.uid(8), in: keyed)
            Issue.record("type 77 decoded")
        } catch let error as DecantError {
            #expect(error.code == .malformedInput)
            #expect(error.location?.object == "$objects[8]")
        }
    }

    /// Writes `text` as an xcmapping.xml in a fresh folder and reads it.
    static func xmlOutcome(_ text: String) throws -> DecantError.Code? {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("xcmapping.xml")
        try Data(text.utf8).write(to: file)
        do {
            _ = try XcodeMappingModel.load(contentsOf: file, bundle: nil)
            return nil
        } catch let error as DecantError {
            return error.code
        }
    }

    @Test("an xcmapping.xml with a wrong type is malformed input")
    func wrongTypes() throws {
        let text = try String(contentsOf: Self.xmlURL, encoding: .utf8)
        let mutations: [(String, String)] = [
            (#"name="mappingnumber" type="int16">4"#, #"name="mappingnumber" type="string">4"#),
            (#"name="sourcename" type="string">Car<"#, #"name="sourcename" type="int32">7<"#),
            (#"<object type="XDDEVMAPPINGMODEL""#, #"<object type="XDDEVENTITYMAPPING""#),
            (#"idrefs="z115 z119 z111 z103 z104""#, #"idrefs="z115 z119 z111 z103 z102""#),
            (#"name="mappingnumber" type="int16">4"#, #"name="mappingnumber" type="int16">four"#),
            (#"name="sourcemodeldata" type="binary">YnBsaXN0MDDU"#, #"name="sourcemodeldata" type="binary">YnBsaXN0MDDA"#),
            ("<database>", "<dataset>"),
        ]
        for (original, replacement) in mutations {
            #expect(text.contains(original), "\(original)")
            let mutated = text.replacingOccurrences(of: original, with: replacement)
            #expect(try Self.xmlOutcome(mutated) == .malformedInput, "\(replacement)")
        }
    }

    @Test("a truncated xcmapping.xml is malformed input")
    func truncatedXML() throws {
        let text = try String(contentsOf: Self.xmlURL, encoding: .utf8)
        let utf8 = Array(text.utf8)
        for length in stride(from: 0, to: utf8.count - 20, by: max(1, utf8.count / 23)) {
            let prefix = String(decoding: utf8.prefix(length), as: UTF8.self)
            #expect(try Self.xmlOutcome(prefix) == .malformedInput, "length \(length)")
        }
    }

    @Test("a damaged model snapshot reads or throws malformed input")
    func damagedSnapshot() throws {
        let text = try String(contentsOf: Self.xmlURL, encoding: .utf8)
        let pattern = #"name="sourcemodeldata" type="binary">([^<]*)<"#
        let regex = try NSRegularExpression(pattern: pattern)
        let match = try #require(regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)))
        let range = try #require(Range(match.range(at: 1), in: text))
        let base64 = text[range].filter { !$0.isWhitespace }
        let snapshot = try #require(Data(base64Encoded: String(base64)))
        _ = try XDPMModelDecoder.decode(snapshot, path: "snapshot")
        var generator = SplitMix(seed: 0xD1CE)
        for _ in 0..<300 {
            var bytes = [UInt8](snapshot)
            for _ in 0..<3 {
                let index = Int(generator.next() % UInt64(bytes.count))
                bytes[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            do {
                _ = try XDPMModelDecoder.decode(Data(bytes), path: "snapshot")
            } catch let error as DecantError {
                #expect(error.code == .malformedInput, "\(error)")
            }
        }
        for length in stride(from: 0, to: snapshot.count, by: max(1, snapshot.count / 50)) {
            #expect(throws: DecantError.self) { try XDPMModelDecoder.decode(snapshot.prefix(length), path: "snapshot") }
        }
    }
}
