import DecantCore
import DecantSwiftData
import DecantTestSupport
import Foundation
import Testing

/// What Swift source cannot say is refused with the file, line, declaration and what to do (exit 65), and what the
/// files given do define is resolved.
@Suite struct SwiftSourceRefusalTests {
    static func expectLocated(_ error: DecantError, line: Int, saying words: [String]) {
        #expect(error.code.exitCode == 65, "\(error)")
        #expect(error.location?.path?.hasSuffix(".swift") == true, "\(error)")
        #expect(error.location?.line == line, "\(error)")
        for word in words { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
    }

    @Test func typeFromAnotherModuleIsRefusedUntilItsFileIsGiven() throws {
        let model = """
            import SwiftData
            import Shared
            @Model final class Note {
                var address: Address
                init(address: Address) { self.address = address }
            }
            """
        let error = try SwiftSource.refusal(model)
        Self.expectLocated(
            error, line: 4, saying: ["'Address'", "give the file that defines it", "var address: Address"])
        let read = try SwiftSourceModelReader.load(
            from: SwiftSource.folder([
                "Model.swift": model, "Address.swift": "struct Address: Codable { var street: String }",
            ]))
        #expect(read.currentVersion?.entity(named: "Note")?.attributes.first?.type == .composite)
    }

    @Test func typeAliasChainsResolveOrAreRefused() throws {
        let chain = try SwiftSource.model(
            """
            typealias A = B
            typealias B = C
            typealias C = String
            @Model final class Note { var title: A; init() { title = "" } }
            """)
        #expect(chain.entity(named: "Note")?.attributes.first?.type == .string)
        let loop = try SwiftSource.refusal(
            """
            typealias A = B
            typealias B = A
            @Model final class Note { var title: A; init() {} }
            """)
        Self.expectLocated(loop, line: 3, saying: ["alias chain"])
        // A member of an alias to itself: refused as undeclared, not followed for ever.
        let memberLoop = try SwiftSource.refusal(
            """
            typealias A = A
            @Model final class Note { var title: A.B; init() {} }
            """)
        Self.expectLocated(memberLoop, line: 2, saying: ["'A.B'", "not declared"])
        let member = try SwiftSource.model(
            """
            typealias Current = V2
            enum V2 { enum Kind: String, Codable { case a } }
            @Model final class Note { var kind: Current.Kind; init() {} }
            """)
        #expect(member.entity(named: "Note")?.attributes.first?.type == .composite)
        let foreign = try SwiftSource.refusal(
            """
            typealias Identifier = Tagged<Note, String>
            @Model final class Note { var id: Identifier; init() {} }
            """)
        Self.expectLocated(foreign, line: 2, saying: ["generic"])
    }

    @Test func conditionalCompilationIsRefused() throws {
        let member = try SwiftSource.refusal(
            """
            @Model final class Note {
                var title = ""
                #if DEBUG
                var debugInfo: String?
                #endif
                init() {}
            }
            """)
        Self.expectLocated(member, line: 3, saying: ["#if", "Note"])
        let type = try SwiftSource.refusal(
            """
            #if os(iOS)
            enum Kind: String, Codable { case a }
            #endif
            @Model final class Note { var kind: Kind; init() {} }
            """)
        Self.expectLocated(type, line: 4, saying: ["#if", "Kind"])
    }

    @Test func otherMacrosAreRefused() throws {
        let freestanding = try SwiftSource.refusal(
            """
            @Model final class Note {
                #Expression<Note, Bool> { _ in true }
                var title = ""
                init() {}
            }
            """)
        Self.expectLocated(freestanding, line: 2, saying: ["#Expression", "SwiftData"])
        let attached = try SwiftSource.refusal(
            """
            @Model final class Note {
                @Clamped(0...5) var stars: Int = 0
                init() {}
            }
            """)
        Self.expectLocated(attached, line: 2, saying: ["@Clamped"])
        let onClass = try SwiftSource.refusal(
            """
            @Model @Audited final class Note { var title = ""; init() {} }
            """)
        Self.expectLocated(onClass, line: 1, saying: ["@Audited"])
    }

    @Test func uncertainShapesAreRefused() throws {
        let cases: [(source: String, line: Int, words: [String])] = [
            ("@Model final class N {\n var counts: [Int]\n init() { counts = [] } }", 2, ["array of Int"]),
            (
                "struct P: Codable { var x = 0 }\n@Model final class N {\n var points: [P] = []\n init() {} }", 3,
                ["array of P"]
            ),
            (
                "struct In: Codable { var x = 0 }\nstruct Out: Codable {\n var inner: In\n}\n"
                    + "@Model final class N { var out: Out?; init() {} }", 3, ["inside a struct"]
            ),
            (
                "struct Out: Codable {\n var when: Date\n}\n@Model final class N { var out: Out?; init() {} }", 2,
                ["inside a struct"]
            ),
            (
                "enum E: Codable {\n case a(Int), b\n}\n@Model final class N { var e: E?; init() {} }", 2,
                ["associated values"]
            ),
            ("@Model final class N {\n var map: [String: Int] = [:]\n init() {} }", 2, ["dictionary"]),
            (
                "enum E: Double, Codable { case a = 1 }\n@Model final class N {\n var e: E?\n init() {} }", 1,
                ["raw type Double"]
            ),
            ("struct S { var x = 0 }\n@Model final class N {\n var s: S?\n init() {} }", 3, ["Codable"]),
            ("@Model final class N {\n var thing = makeThing()\n init() {} }", 2, ["type annotation"]),
            ("@Model final class Base { var x = 0; init() {} }\n@Model final class N: Base {\n}", 2, ["inherits"]),
        ]
        for item in cases {
            let error = try SwiftSource.refusal(item.source)
            Self.expectLocated(error, line: item.line, saying: item.words)
        }
    }

    @Test func ambiguousInverseIsRefused() throws {
        let error = try SwiftSource.refusal(
            """
            @Model final class Person {
                var home: Address?
                init() {}
            }
            @Model final class Address {
                var owner: Person?
                var tenant: Person?
                init() {}
            }
            """)
        Self.expectLocated(error, line: 2, saying: ["Address.owner", "Address.tenant", "inverse:"])
        let declared = try SwiftSource.model(
            """
            @Model final class Person {
                @Relationship(inverse: \\Address.owner) var home: Address?
                init() {}
            }
            @Model final class Address {
                var owner: Person?
                var tenant: Person?
                init() {}
            }
            """)
        #expect(declared.entity(named: "Address")?.relationships.map(\.inverseName) == ["home", nil])
    }

    @Test func wrongDeclaredInverseIsRefused() throws {
        let error = try SwiftSource.refusal(
            """
            @Model final class Folder {
                @Relationship(inverse: \\Note.nothing) var notes: [Note] = []
                init() {}
            }
            @Model final class Note { var folder: Folder?; init() {} }
            """)
        Self.expectLocated(error, line: 2, saying: ["Note.nothing"])
    }

    @Test func sourceThatDoesNotParseIsLocated() throws {
        let error = try SwiftSource.refusal(
            """
            @Model final class Note {
                var title: String
                var body: = 3
            }
            """)
        #expect(error.code == .malformedInput)
        #expect(error.location?.line == 3, "\(error)")
        let binary = try SwiftSource.refusal(["Model.swift": String(decoding: [0xFF, 0xFE, 0x00, 0x80], as: UTF8.self)])
        #expect(binary.code.exitCode == 65)
        let folder = try Fixtures.temporaryDirectory()
        try Data([0xC3, 0x28, 0xA0, 0xA1]).write(to: folder.appendingPathComponent("Bad.swift"))
        #expect(throws: DecantError.self) { try SwiftSourceModelReader.load(from: folder) }
        do {
            _ = try SwiftSourceModelReader.load(from: folder)
        } catch let error as DecantError {
            #expect(error.code == .malformedInput && error.location?.path?.hasSuffix("Bad.swift") == true)
        }
    }

    /// Brackets nested deeper than Swift's parser takes stop with the line, before swift-syntax's look-ahead (which
    /// recurses once per bracket) runs out of stack; brackets in strings and comments are not counted.
    @Test func deepNestingIsRefusedNotACrash() throws {
        let deep = 20_000
        for source in [
            "@Model final class N {\n var x: " + String(repeating: "[", count: deep) + "Int"
                + String(repeating: "]", count: deep) + "\n init() {} }",
            "@Model final class N {\n var x: " + String(repeating: "Optional<", count: deep) + "Int"
                + String(repeating: ">", count: deep) + "\n}",
            "let y =\n " + String(repeating: "(", count: deep) + "1" + String(repeating: ")", count: deep),
            "let z =\n \"\\(" + String(repeating: "[", count: deep) + "Int" + String(repeating: "]", count: deep)
                + ".self)\"",
            // No brackets, but a syntax tree 200,000 levels deep.
            "let w =\n a" + String(repeating: ".b", count: 200_000),
        ] {
            let error = try SwiftSource.refusal(source)
            #expect(error.code == .malformedInput && error.location?.line == 2, "\(error)")
            #expect(error.message.contains("nests"), "\(error)")
            #expect(error.message.count < 400)
        }
        // #if blocks nest for the parser as brackets do: the 257th stops it, at its line.
        let conditions =
            "let v = 1\n" + String(repeating: "#if A\n", count: 5_000)
            + String(repeating: "#endif\n", count: 5_000)
        for source in [conditions] {
            let error = try SwiftSource.refusal(source)
            #expect(error.code == .malformedInput && error.location?.line == 258, "\(error)")
            #expect(error.message.contains("nests"), "\(error)")
            #expect(error.message.count < 400)
        }
        let quoted = try SwiftSource.model(
            """
            // \(String(repeating: "(", count: 300))
            @Model final class N { var x = "\(String(repeating: "[", count: 300))"; init() {} }
            """)
        #expect(quoted.entity(named: "N")?.attributes.first?.defaultValue?.count == 300)
    }

    /// Every vector cut short at many points, and with bytes flipped, reads or is refused with exit 65 and a file:
    /// never a crash or a hang.
    @Test(arguments: ["Crafting", "CocktailsVersioned"])
    func mutatedVectorsAreRefusedCleanly(_ vector: String) throws {
        let text = try Data(contentsOf: Fixtures.corpus("swiftdata-vectors/\(vector)/Model.swift"))
        var inputs: [Data] = stride(from: 0, to: text.count, by: max(1, text.count / 60)).map { text.prefix($0) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<30 {
            var flipped = text
            for _ in 0..<4 {
                let position = Int.random(in: 0..<flipped.count, using: &generator)
                flipped[position] = UInt8.random(in: 0...255, using: &generator)
            }
            inputs.append(flipped)
        }
        var refused = 0
        for input in inputs {
            let folder = try Fixtures.temporaryDirectory()
            try input.write(to: folder.appendingPathComponent("Model.swift"))
            do {
                _ = try SwiftSourceModelReader.load(from: folder)
            } catch let error as DecantError {
                refused += 1
                #expect(error.code.exitCode == 65, "\(error)")
                #expect(error.location?.path?.hasSuffix("Model.swift") == true, "\(error)")
            }
        }
        #expect(refused > inputs.count / 2)
    }
}
