import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

@Suite("XML property lists")
struct XMLPropertyListTests {
    @Test func readsEveryElement() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>s</key><string>héllo &amp; &lt;bye&gt;</string>
                <key>i</key><integer>-42</integer>
                <key>r</key><real>2.5</real>
                <key>t</key><true/>
                <key>f</key><false/>
                <key>d</key><date>2001-01-02T00:00:00Z</date>
                <key>b</key><data>
                AAEC
                /w==
                </data>
                <key>a</key><array><string>x</string><integer>1</integer></array>
                <key>u</key><dict><key>CF$UID</key><integer>7</integer></dict>
                <key>empty</key><string></string>
            </dict>
            </plist>
            """
        let value = try PropertyListValue.decode(from: Data(xml.utf8), path: "x.plist")
        let expected: PropertyListValue = [
            "s": "héllo & <bye>", "i": -42, "r": 2.5, "t": true, "f": false, "d": .date(86_400),
            "b": .data(Data([0, 1, 2, 0xFF])), "a": ["x", 1], "u": .uid(7), "empty": "",
        ]
        #expect(value == expected)
        #expect(value.dictionaryValue?.keys.first == "s")
    }

    @Test func matchesPlistlibXMLOutput() throws {
        let script = """
            import plistlib, sys, datetime
            v = {'name': 'Note ✓', 'n': 12345678901, 'neg': -3, 'x': 0.125, 'flag': False, 'blob': b'\\x00\\x10' * 50,
                 'when': datetime.datetime(2020, 2, 29, 12, 30, 15), 'list': [1, [2, {'k': 'v'}]]}
            sys.stdout.buffer.write(plistlib.dumps(v, fmt=plistlib.FMT_XML, sort_keys=False))
            """
        let xml = try PythonOracle.run(script)
        let value = try PropertyListValue.decode(from: xml)
        let expected: PropertyListValue = [
            "name": "Note ✓", "n": 12_345_678_901, "neg": -3, "x": 0.125, "flag": false,
            "blob": .data(Data(Array(repeating: [UInt8(0), 0x10], count: 50).joined())),
            "when": .date(604_672_215), "list": [1, [2, ["k": "v"]]],
        ]
        #expect(value == expected)
    }

    @Test(
        "Malformed XML throws with a line",
        arguments: [
            "<plist><dict><key>a</key></dict></plist>",
            "<plist><integer>abc</integer></plist>",
            "<plist><dict><string>x</string></dict></plist>",
            "<plist><array><string>x</string></plist>",
            "<plist><frob/></plist>",
            "<plist><date>yesterday</date></plist>",
            "<plist></plist>",
        ]
    )
    func malformed(xml: String) throws {
        let error = #expect(throws: DecantError.self) {
            try PropertyListValue.decode(from: Data(xml.utf8), path: "bad.plist")
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "bad.plist")
        #expect(error?.location?.line != nil)
    }

    @Test func sniffing() throws {
        #expect(throws: DecantError.self) { try PropertyListValue.decode(from: Data()) }
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: Data("{ a = b; }".utf8)) }
        #expect(error?.code == .unsupportedFormat)
    }
}
