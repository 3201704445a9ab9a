import DecantCore
import DecantCodecs
import DecantFormats
import Foundation
import Testing

/// Each archived `NSExpression` shape of coredata-formats.md 3.2 and 3.4.3, decoded from a hand-built archive.
@Suite("XcodeMapping NSExpression decoding")
struct XcodeMappingExpressionTests {
    /// A keyed archive whose `$objects` are `objects` after the `$null` entry (so the first is UID 1) and whose
    /// classes follow them; `class(name)` gives the UID of a class dictionary.
    struct Builder {
        var objects: [PropertyListValue] = [.string("$null")]
        var classes: [String: UInt64] = [:]

        mutating func add(_ value: PropertyListValue) -> PropertyListValue {
            objects.append(value)
            return .uid(UInt64(objects.count - 1))
        }

        mutating func expression(
            _ className: String, type: Int64, _ fields: [(String, PropertyListValue)] = []
        ) -> PropertyListValue {
            let classUID: UInt64
            if let known = classes[className] {
                classUID = known
            } else {
                objects.append(
                    .dictionary(["$classname": .string(className), "$classes": .array([.string(className)])]))
                classUID = UInt64(objects.count - 1)
                classes[className] = classUID
            }
            var dictionary = PropertyListDictionary(fields)
            dictionary["$class"] = .uid(classUID)
            dictionary["NSExpressionType"] = .integer(type)
            return add(.dictionary(dictionary))
        }

        mutating func array(_ elements: [PropertyListValue]) -> PropertyListValue {
            let classUID: UInt64
            if let known = classes["NSArray"] {
                classUID = known
            } else {
                objects.append(.dictionary(["$classname": "NSArray", "$classes": .array(["NSArray", "NSObject"])]))
                classUID = UInt64(objects.count - 1)
                classes["NSArray"] = classUID
            }
            return add(.dictionary(["NS.objects": .array(elements), "$class": .uid(classUID)]))
        }

        func archive(root: PropertyListValue) throws -> KeyedArchive {
            let plist = PropertyListValue.dictionary([
                "$archiver": "NSKeyedArchiver", "$version": .integer(100_000), "$top": .dictionary(["root": root]),
                "$objects": .array(objects),
            ])
            return try KeyedArchive(propertyList: plist, path: "built.archive")
        }
    }

    func decode(_ build: (inout Builder) -> PropertyListValue) throws -> NSExpressionNode? {
        var builder = Builder()
        let root = build(&builder)
        let archive = try builder.archive(root: root)
        return try NSExpressionNode.decode(archive.topValue(forKey: "root"), in: archive)
    }

    @Test("constants: string, integer, Boolean, missing value, class")
    func constants() throws {
        #expect(
            try decode { b in
                let text = b.add("Helpers")
                return b.expression("NSConstantValueExpression", type: 0, [("NSConstantValue", text)])
            } == .constant(.string("Helpers")))
        #expect(
            try decode { b in b.expression("NSConstantValueExpression", type: 0, [("NSConstantValue", .integer(42))]) }
                == .constant(.integer(42)))
        #expect(
            try decode { b in
                let flag = b.add(.bool(true))
                return b.expression("NSConstantValueExpression", type: 0, [("NSConstantValue", flag)])
            }?.description == "YES")
        #expect(try decode { b in b.expression("NSConstantValueExpression", type: 0) } == .constant(.null))
        #expect(
            try decode { b in
                let name = b.add("_NSPredicateUtilities")
                return b.expression("NSConstantValueExpression", type: 0, [("NSConstantValueClassName", name)])
            } == .classConstant("_NSPredicateUtilities"))
    }

    @Test("SELF, variables and both key path forms")
    func simpleShapes() throws {
        #expect(try decode { b in b.expression("NSSelfExpression", type: 1) } == .evaluatedObject)
        #expect(
            try decode { b in
                let name = b.add("source")
                return b.expression("NSVariableExpression", type: 2, [("NSVariable", name)])
            } == .variable("source"))
        for type: Int64 in [3, 10] {
            #expect(
                try decode { b in
                    let path = b.add("owner.garage")
                    return b.expression("NSKeyPathSpecifierExpression", type: type, [("NSKeyPath", path)])
                } == .keyPath("owner.garage"))
        }
        #expect(try decode { _ in .uid(0) } == nil)
    }

    @Test("functions, CAST and FETCH print as NSExpression does")
    func functionsAndFetch() throws {
        let node = try decode { b in
            let utilities = b.add("_NSPredicateUtilities")
            let receiver = b.expression("NSConstantValueExpression", type: 0, [("NSConstantValueClassName", utilities)])
            let helpers = b.expression("NSConstantValueExpression", type: 0, [("NSConstantValue", b.add("Helpers"))])
            let kind = b.expression("NSConstantValueExpression", type: 0, [("NSConstantValue", b.add("Class"))])
            let cast = b.expression(
                "NSFunctionExpression", type: 4,
                [
                    ("NSOperand", receiver), ("NSSelectorName", b.add("castObject:toType:")),
                    ("NSArguments", b.array([helpers, kind])),
                ])
            let source = b.expression("NSVariableExpression", type: 2, [("NSVariable", b.add("source"))])
            let path = b.expression("NSKeyPathSpecifierExpression", type: 10, [("NSKeyPath", b.add("numberPlate"))])
            let plate = b.expression(
                "NSKeyPathExpression", type: 4,
                [
                    ("NSOperand", source), ("NSSelectorName", b.add("valueForKeyPath:")),
                    ("NSArguments", b.array([path])),
                ])
            return b.expression(
                "NSFunctionExpression", type: 4,
                [
                    ("NSOperand", cast), ("NSSelectorName", b.add("normalizedPlate:")),
                    ("NSArguments", b.array([plate])),
                ])
        }
        #expect(node?.description == #"FUNCTION(CAST("Helpers", "Class"), "normalizedPlate:", $source.numberPlate)"#)

        let fetch = try decode { b in
            let manager = b.expression("NSVariableExpression", type: 2, [("NSVariable", b.add("manager"))])
            let context = b.expression("NSKeyPathSpecifierExpression", type: 10, [("NSKeyPath", b.add("sourceContext"))])
            let moc = b.expression(
                "NSKeyPathExpression", type: 4,
                [
                    ("NSOperand", manager), ("NSSelectorName", b.add("valueForKeyPath:")),
                    ("NSArguments", b.array([context])),
                ])
            let request = b.expression("NSVariableExpression", type: 2, [("NSVariable", b.add("request"))])
            return b.expression(
                "NSFetchRequestExpression", type: 50,
                [("NSFRExpression", request), ("NSMOCExpression", moc), ("NSCountOnlyFlag", .bool(true))])
        }
        #expect(fetch?.description == "FETCH($request, $manager.sourceContext, YES)")
    }

    @Test("unknown types, missing fields and self-containing graphs are malformed input naming the object")
    func malformed() throws {
        func failure(_ build: (inout Builder) -> PropertyListValue) throws -> DecantError? {
            do {
                _ = try decode(build)
                return nil
            } catch let error as DecantError {
                return error
            }
        }
        let unknown = try failure { b in b.expression("NSSubqueryExpression", type: 13) }
        #expect(unknown?.code == .malformedInput)
        #expect(unknown?.location?.object == "$objects[2]")
        let noVariable = try failure { b in b.expression("NSVariableExpression", type: 2) }
        #expect(noVariable?.code == .malformedInput)
        let noSelector = try failure { b in b.expression("NSFunctionExpression", type: 4) }
        #expect(noSelector?.code == .malformedInput)
        let inline = try failure { _ in .integer(3) }
        #expect(inline?.code == .malformedInput)
        // An operand that is the function itself: bounded by the depth limit.
        let cycle = try failure { b in
            b.objects.append(
                .dictionary(["$classname": "NSFunctionExpression", "$classes": .array(["NSFunctionExpression"])]))
            let classUID = UInt64(b.objects.count - 1)
            let selector = b.add("self:")
            let index = UInt64(b.objects.count)
            return b.add(
                .dictionary([
                    "$class": .uid(classUID), "NSExpressionType": .integer(4), "NSSelectorName": selector,
                    "NSOperand": .uid(index),
                ]))
        }
        #expect(cycle?.code == .malformedInput)
    }
}
