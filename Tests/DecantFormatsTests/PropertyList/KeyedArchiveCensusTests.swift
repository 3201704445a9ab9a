import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// ``KeyedArchive/classCensus(maximumDepth:)``: every object reachable from `$top` counted once under its class,
/// Foundation's classless entries under the class they stand for, and hostile graphs (cycles, deep nesting) refused
/// with the object named, in time and memory that follow the archive's size.
@Suite("Keyed archive class census")
struct KeyedArchiveCensusTests {
    @Test("a nested dictionary: each object once, strings and numbers as NSString and NSNumber, nil not counted")
    func nestedDictionary() throws {
        var writer = KeyedArchiveWriter()
        let shared = writer.addString("shared")
        let inner = writer.addDictionary(
            keys: [writer.addString("n").uid, writer.addString("gone").uid],
            values: [writer.addValue(.integer(3)).uid, KeyedArchiveWriter.null], className: "NSMutableDictionary")
        let list = writer.addArray([shared.uid, shared.uid, inner.uid])
        let root = writer.addDictionary(keys: [writer.addString("list").uid], values: [list.uid])
        let census = try KeyedArchive(data: writer.encodedData(root: root)).classCensus()
        #expect(census.counts == ["NSDictionary": 1, "NSMutableDictionary": 1, "NSArray": 1, "NSString": 4, "NSNumber": 1])
        #expect(census.chains["NSMutableDictionary"] == ["NSMutableDictionary", "NSDictionary", "NSObject"])
        #expect(census.chains["NSString"] == ["NSString", "NSObject"])
    }

    @Test("an app class and the objects its fields hold; a nil root counts nothing")
    func appClass() throws {
        var writer = KeyedArchiveWriter()
        let text = writer.addString("default cover")
        let cover = writer.addObject(className: "MyApp.Cover", fields: ["text": text.uid, "size": .integer(4)])
        let census = try KeyedArchive(data: writer.encodedData(root: cover)).classCensus()
        #expect(census.counts == ["MyApp.Cover": 1, "NSString": 1])
        #expect(census.chains["MyApp.Cover"] == ["MyApp.Cover", "NSObject"])

        let empty = try KeyedArchive(data: KeyedArchiveWriter().encodedData(root: nil)).classCensus()
        #expect(empty.counts.isEmpty)
    }

    @Test("an object that contains itself is refused, naming it; a shared object is not a cycle")
    func cycle() throws {
        var writer = KeyedArchiveWriter()
        let node = writer.reserveObject()
        let list = writer.addArray([node.uid], className: "NSMutableArray")
        writer.setObject(node, className: "MyApp.Node", fields: ["children": list.uid])
        let error = try #require(throws: DecantError.self) {
            _ = try KeyedArchive(data: writer.encodedData(root: node)).classCensus()
        }
        #expect(error.message.contains("cycle"))
        #expect(error.location?.object == "$objects[\(node.index)]")
    }

    @Test("nesting deeper than the limit is refused; at the limit it is counted", arguments: [63, 64, 200])
    func depth(levels: Int) throws {
        var writer = KeyedArchiveWriter()
        var current = writer.addString("leaf")
        for _ in 0..<levels { current = writer.addArray([current.uid]) }
        let archive = try KeyedArchive(data: writer.encodedData(root: current))
        if levels < 64 {
            #expect(try archive.classCensus().counts == ["NSArray": levels, "NSString": 1])
        } else {
            let error = try #require(throws: DecantError.self) { _ = try archive.classCensus() }
            #expect(error.message.contains("deeper than 64"))
        }
    }

    @Test("a wide graph of shared objects is walked once per object")
    func sharedObjectsAreCountedOnce() throws {
        // Each level points at the next one twice: a tree walk would visit 2^40 objects.
        var writer = KeyedArchiveWriter()
        var current = writer.addString("leaf")
        for _ in 0..<40 { current = writer.addArray([current.uid, current.uid]) }
        let census = try KeyedArchive(data: writer.encodedData(root: current)).classCensus()
        #expect(census.counts == ["NSArray": 40, "NSString": 1])
    }
}
