import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Decant's NDJSON lines read straight into batches give exactly the batches, and the errors, of the tree path.
@Suite("NDJSON line decoder")
struct NDJSONLineDecoderTests {
    static let model = JSONRoundTripTests.edgeModel
    static let options = FormatOptions(bundle: JSONTesting.bundle(model))
    static let header = "{\"decant\": "
        + String(decoding: JSONDocumentHeader(model: model).encoded(), as: UTF8.self) + "}\n"

    /// What reading `data` gives: every batch, cell by cell and byte by byte, or the error; and how many lines went
    /// straight into batches.
    static func read(_ data: Data, direct: Bool, batchSize: Int = 3, file: URL? = nil) -> (String, Int) {
        do {
            let reader: JSONRecordReader
            if let file {
                reader = try JSONRecordReader(contentsOf: file, style: .lines, options: options, batchSize: batchSize)
            } else {
                reader = try JSONRecordReader(
                    data: data, path: "in.ndjson", style: .lines, options: options, batchSize: batchSize)
            }
            reader.readsLinesDirectly = direct
            return (try JSONTesting.dump(reader, entity: "Thing"), reader.linesReadDirectly)
        } catch {
            return ("error \(error)", 0)
        }
    }

    /// Checks that `lines` (after the header) read the same both ways; returns how many went straight in.
    @discardableResult
    static func same(_ lines: String, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        same(Data((header + lines).utf8), sourceLocation: sourceLocation)
    }

    @discardableResult
    static func same(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let (tree, _) = read(data, direct: false)
        let (direct, count) = read(data, direct: true)
        #expect(
            direct == tree, "\(String(decoding: data, as: UTF8.self).suffix(300))", sourceLocation: sourceLocation)
        return count
    }

    @Test func theWritersLinesGoStraightInAndMatch() throws {
        let data = try JSONTesting.write(try JSONRoundTripTests.edgeStore(), style: .lines)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").count - 1
        // Lines with escapes or external data references take the tree path; the rest go straight in.
        let direct = Self.same(data)
        #expect(direct > lines / 2)
        for batchSize in [1, 2, 1000] {
            let direct = Self.read(data, direct: true, batchSize: batchSize).0
            #expect(direct == Self.read(data, direct: false, batchSize: batchSize).0)
        }
    }

    @Test func linesOfEveryKindMatch() {
        let good = [
            #"{"@id":"Thing/p1","i16":5,"text":"milk"}"#,
            #"{ "@id" : "Thing/p1" , "i16" : 5 ,"text" :"milk" }  "#,
            "{\"@id\":\"Thing/p1\",\"i16\":5}\r",
            "\t{\"@id\":\"Thing/p1\"}",
            #"{"@id":"Thing/p1","i16":null,"i64":null,"real":null,"single":null,"amount":null,"text":null,"#
                + #""flag":null,"when":null,"bytes":null,"uuid":null,"link":null,"archive":null,"#
                + #""next":null,"parts":[]}"#,
            #"{"@id":"Thing/p1","i64":-9223372036854775808,"real":-0.0,"single":1e-320}"#,
            #"{"@id":"Thing/p1","i64":9223372036854775807,"real":0.1,"single":-1.5E+3}"#,
            #"{"@id":"Thing/p1","i64":-0,"real":"NaN","single":"-Infinity"}"#,
            #"{"@id":"Thing/p1","real":1e400,"single":123456789012345678901234567890}"#,
            #"{"@id":"Thing/p1","amount":"10.50"}"#,
            #"{"@id":"Thing/p1","amount":1E+3}"#,
            #"{"@id":"Thing/p1","amount":"3.14159265358979323846264338327950288"}"#,
            #"{"@id":"Thing/p1","amount":"-0","flag":false}"#,
            #"{"@id":"Thing/p1","amount":42,"flag":true}"#,
            #"{"@id":"Thing/p1","when":"2024-05-19T18:14:06.84Z"}"#,
            #"{"@id":"Thing/p1","when":"0001-01-01T00:00:00Z"}"#,
            #"{"@id":"Thing/p1","when":737057646.84}"#,
            #"{"@id":"Thing/p1","when":"Infinity"}"#,
            #"{"@id":"Thing/p1","when":"NaN"}"#,
            #"{"@id":"Thing/p1","when":"2024-05-19T20:14:06+02:00"}"#,
            #"{"@id":"Thing/p1","uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#,
            #"{"@id":"Thing/p1","bytes":"AAEC","archive":""}"#,
            #"{"@id":"Thing/p1","text":"ünïcødé ✓ 🎉","link":"https://example.com/?q=a%20b"}"#,
            #"{"@id":"Thing/p1","next":"Thing/p2","parts":["Thing/p3","Thing/ext","Thing/p-1"]}"#,
            #"{"@id":"Thing/p1","next":"Thing/x/y","parts":[ "Thing/p3" , "Thing/p4" ]}"#,
            #"{"@id":"Thing/p01"}"#,
            #"{"@id":"Thing/p-5"}"#,
            #"{"@id":"Thing/p0"}"#,
            #"{"@id":"Thing/a/b"}"#,
            #"{"@id":"Thing/p123456789012345678"}"#,
            #"{"@id":"Thing/p1234567890123456789"}"#,
            #"{"@id":"Thing/p99999999999999999999"}"#,
        ]
        for line in good {
            let direct = Self.same(line + "\n" + #"{"@id":"Thing/p9","text":"after"}"# + "\n")
            #expect(direct >= 1, "\(line)")
        }
        // Lines the decoder leaves to the tree path, which reads them or names what is wrong.
        let others = [
            #"{"@id":"Thing/p1","text":"a\nb"}"#,
            #"{"@id":"Thing/p1","text":"a","i16":5}"#,
            #"{"i16":5,"@id":"Thing/p1"}"#,
            #"{"@id":"Thing/p1","i16":5,"i16":6}"#,
            #"{"@id":"Thing/p1","@id":"Thing/p2"}"#,
            #"{"@id":"Thing/p1","nope":1}"#,
            #"{"@id":"Thing/p1","bytes":{"externalDataReference":"x"}}"#,
            #"{"@id":"Thing/p1","i64":9223372036854775808}"#,
            #"{"@id":"Thing/p1","i64":-9223372036854775809}"#,
            #"{"@id":"Thing/p1","i64":1.5}"#,
            #"{"@id":"Thing/p1","i64":01}"#,
            #"{"@id":"Thing/p1","i64":-}"#,
            #"{"@id":"Thing/p1","i64":1.}"#,
            #"{"@id":"Thing/p1","i64":1e}"#,
            #"{"@id":"Thing/p1","i64":"5"}"#,
            #"{"@id":"Thing/p1","i16":5"#,
            #"{"@id":"Thing/p1","i16":"#,
            #"{"@id":"Thing/p1","text":"abc"#,
            #"{"@id":"Thing/p1","real":"nan"}"#,
            #"{"@id":"Thing/p1","real":true}"#,
            #"{"@id":"Thing/p1","amount":"x"}"#,
            #"{"@id":"Thing/p1","amount":true}"#,
            #"{"@id":"Thing/p1","when":"2024-13-01T00:00:00Z"}"#,
            #"{"@id":"Thing/p1","when":"yesterday"}"#,
            #"{"@id":"Thing/p1","when":true}"#,
            #"{"@id":"Thing/p1","flag":1}"#,
            #"{"@id":"Thing/p1","flag":"true"}"#,
            #"{"@id":"Thing/p1","flag":tru}"#,
            #"{"@id":"Thing/p1","text":nul}"#,
            #"{"@id":"Thing/p1","text":5}"#,
            #"{"@id":"Thing/p1","text":["a"]}"#,
            #"{"@id":"Thing/p1","uuid":"not-a-uuid"}"#,
            #"{"@id":"Thing/p1","bytes":"!!"}"#,
            #"{"@id":"Thing/p1","next":"Other/p1"}"#,
            #"{"@id":"Thing/p1","next":["Thing/p1"]}"#,
            #"{"@id":"Thing/p1","next":5}"#,
            #"{"@id":"Thing/p1","parts":"Thing/p1"}"#,
            #"{"@id":"Thing/p1","parts":null}"#,
            #"{"@id":"Thing/p1","parts":["Thing/p1",]}"#,
            #"{"@id":"Thing/p1","parts":["Thing"]}"#,
            #"{"@id":"Thing/p1","parts":[5]}"#,
            #"{"@id":"Nope/p1"}"#,
            #"{"@id":"Thing"}"#,
            #"{"@id":"Thing/"}"#,
            #"{"@id":"/p1"}"#,
            #"{"@id":5}"#,
            #"{"@id":"Th\u0069ng/p1"}"#,
            #"{"@id":"Thing/p1"} x"#,
            #"{"@id":"Thing/p1"}{"@id":"Thing/p2"}"#,
            #"{"@id":"Thing/p1",}"#,
            #"{"@id":"Thing/p1" "i16":5}"#,
            #"{"@id":"Thing/p1","i16" 5}"#,
            #"{"@id":"Thing/p1","te\u0078t":"a"}"#,
            "{\"@id\":\"Thing/p1\",\"text\":\"a\tb\"}",
            "{\"@id\":\"Thing/p1\",\"text\":\"a\u{7F}b\"}",
            "[1]",
            "5",
            "{}",
            "{\"@id\":\"Thing/p1\",",
        ]
        for line in others {
            Self.same(line + "\n" + #"{"@id":"Thing/p9","text":"after"}"# + "\n")
            Self.same(#"{"@id":"Thing/p8"}"# + "\n\n" + line)
        }
    }

    @Test func bytesThatAreNotUTF8Match() {
        let prefix = Array((Self.header + #"{"@id":"Thing/p1","text":""#).utf8)
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]] {
            Self.same(Data(prefix + bad + Array("\"}\n".utf8)))
            Self.same(Data(prefix + [0xE2, 0x82, 0xAC] + bad + Array("x\"}\n".utf8)))
        }
    }

    @Test func linesAcrossChunksMatch() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var text = Self.header
        for index in 0..<3000 {
            let umlauts = String(repeating: "ä", count: index % 41)
            text += #"{"@id":"Thing/p\#(index)","i64":\#(index * 7919),"text":"\#(umlauts)","#
            text += #""when":"2024-05-19T18:14:06.84Z"}"# + "\n"
            if index == 1000 {
                text += #"{"@id":"Thing/p1","text":""# + String(repeating: "y", count: 200_000) + "\"}\n"
            }
            if index == 2000 {
                text += #"{"@id":"Thing/p2","text":""# + String(repeating: "z", count: 1_100_000) + "\"}\n"
            }
        }
        text += #"{"@id":"Thing/p3","text":"last"}"#
        let url = folder.appendingPathComponent("lines.ndjson")
        try Data(text.utf8).write(to: url)
        let tree = Self.read(Data(), direct: false, batchSize: 100, file: url)
        let direct = Self.read(Data(), direct: true, batchSize: 100, file: url)
        #expect(tree.0 == direct.0)
        #expect(!tree.0.hasPrefix("error"))
        // All but the line longer than the decoder gathers.
        #expect(direct.1 == 3002)
        let memory = Self.read(Data(text.utf8), direct: true, batchSize: 100)
        #expect(memory.0 == direct.0)
    }
}
