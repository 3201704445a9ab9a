import DecantCore
import DecantCodecs
import DecantFormats
import Foundation
import Testing

/// A binary keyed archive is read lazily (entries decoded from the bytes on demand); it must answer exactly as the
/// same archive decoded whole, damaged or not.
@Suite("Lazy binary keyed archives")
struct LazyKeyedArchiveTests {
    /// An archive with shared objects, a cycle, Foundation values and an inline array.
    static func sampleArchive() throws -> Data {
        var writer = KeyedArchiveWriter()
        let folder = writer.reserveObject()
        let date = writer.addObject(className: "NSDate", fields: ["NS.time": .real(700_000_000)])
        var notes: [PropertyListValue] = []
        for index in 0..<5 {
            let text = writer.addString(index == 3 ? "shared" : "note \(index) — ünïcödé")
            let note = writer.addObject(
                className: "NotesApp.LegacyNote",
                fields: [
                    "content": text.uid, "date": date.uid, "folder": folder.uid,
                    "pinned": .bool(index.isMultiple(of: 2)), "wordCount": .integer(Int64(index)),
                ])
            notes.append(note.uid)
        }
        let array = writer.addArray(notes)
        let name = writer.addString("shared")
        writer.setObject(folder, className: "LegacyFolder", fields: ["name": name.uid, "notes": array.uid])
        return try writer.encodedData(root: folder)
    }

    /// The same archive decoded whole first (the reference behaviour).
    static func eager(_ data: Data) throws -> KeyedArchive {
        try KeyedArchive(propertyList: BinaryPropertyListReader().read(data), path: "t.archive")
    }

    /// Every object of `archive`, or the error the first failing one throws.
    static func walk(_ archive: KeyedArchive) -> Result<[ArchivedObject], DecantError> {
        do {
            return .success(try (0..<archive.objectCount).map { try archive.object(at: $0) })
        } catch let error as DecantError {
            return .failure(error)
        } catch {
            Issue.record("not a DecantError: \(error)")
            return .success([])
        }
    }

    @Test func answersLikeTheDecodedArchive() throws {
        let data = try Self.sampleArchive()
        let lazy = try KeyedArchive(data: data, path: "t.archive")
        let eager = try Self.eager(data)
        #expect(lazy.objectCount == eager.objectCount)
        #expect(lazy.objects == eager.objects)
        #expect(lazy.top == eager.top)
        #expect(try Self.walk(lazy).get() == Self.walk(eager).get())
        for index in 0..<lazy.objectCount {
            #expect(lazy.isNull(at: index) == eager.isNull(at: index))
            #expect(try lazy.entry(at: index) == eager.entry(at: index))
        }
        let root = try #require(try lazy.rootObject())
        #expect(root.className == "LegacyFolder")
        let notes = try #require(try lazy.elements(forKey: "notes", in: root))
        let first = try #require(try lazy.object(for: notes[0]))
        #expect(try lazy.object(forKey: "folder", in: first)?.index == root.index)  // the cycle
        #expect(try lazy.date(forKey: "date", in: first) == 700_000_000)
        #expect(try lazy.decodeTree(first["content"]) == .string("note 0 — ünïcödé"))
    }

    @Test func theListDecodesLikeTheReader() throws {
        let data = try Self.sampleArchive()
        let list = try BinaryPropertyList(data: data, path: "t.archive")
        #expect(try list.value(at: list.topObject) == BinaryPropertyListReader().read(data))
        // A slice of a larger buffer reads the same.
        let padded = Data([1, 2, 3]) + data
        let sliced = try BinaryPropertyList(data: padded.dropFirst(3))
        #expect(try sliced.value(at: list.topObject) == list.value(at: list.topObject))
    }

    @Test func xmlArchivesStillRead() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>$archiver</key><string>NSKeyedArchiver</string>
            <key>$version</key><integer>100000</integer>
            <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>1</integer></dict></dict>
            <key>$objects</key><array>
              <string>$null</string>
              <dict><key>$class</key><dict><key>CF$UID</key><integer>2</integer></dict>
                <key>name</key><string>Inbox</string></dict>
              <dict><key>$classname</key><string>LegacyFolder</string>
                <key>$classes</key><array><string>LegacyFolder</string><string>NSObject</string></array></dict>
            </array>
            </dict></plist>
            """
        let archive = try KeyedArchive(data: Data(xml.utf8), path: "t.archive")
        #expect(archive.objectCount == 3)
        let root = try #require(try archive.rootObject())
        #expect(root.className == "LegacyFolder")
        #expect(try archive.string(forKey: "name", in: root) == "Inbox")
    }

    @Test func damagedArchivesFailLikeTheDecodedArchive() throws {
        let original = [UInt8](try Self.sampleArchive())
        var generator = SplitMix64(seed: 7)
        for _ in 0..<1_500 {
            var bytes = original
            for _ in 0..<2 {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            let data = Data(bytes)
            let eager: KeyedArchive
            do {
                eager = try Self.eager(data)
            } catch is DecantError {
                #expect(throws: DecantError.self) { _ = try KeyedArchive(data: data, path: "t.archive") }
                continue
            }
            let lazy = try KeyedArchive(data: data, path: "t.archive")
            switch (Self.walk(lazy), Self.walk(eager)) {
            case (.success(let ours), .success(let theirs)):
                #expect(ours == theirs)
            case (.failure(let ours), .failure(let theirs)):
                #expect(ours.message == theirs.message)
                #expect(ours.location == theirs.location)
            case (let ours, let theirs):
                Issue.record("lazy \(ours) but decoded \(theirs)")
            }
        }
    }

    @Test func aFileReadsLikeItsBytes() throws {
        // Enough notes that every walk reads the file's blocks again several times on the way.
        var writer = KeyedArchiveWriter()
        var notes: [PropertyListValue] = []
        for index in 0..<20_000 {
            let text = writer.addString("note \(index)")
            notes.append(writer.addObject(className: "LegacyNote", fields: ["content": text.uid]).uid)
        }
        let root = writer.addArray(notes)
        let data = try writer.encodedData(root: root)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lazy-\(UUID().uuidString).archive")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var options = FormatOptions(bundle: ArchiveTesting.bundle(ArchiveTesting.shapeModel([("content", .string)])))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        var mapped = try ArchiveReader(contentsOf: url, options: options)
        let fromFile = try ArchiveTesting.readAll(&mapped)
        #expect(fromFile == (try ArchiveTesting.records(data, options: options)))
        #expect(fromFile["Shape"]?.count == 20_000)
        #expect(fromFile["Shape"]?.last?.values == [.string("note 19999")])
    }
}

/// Objects the top does not reach were never checked; decoding one must still throw rather than loop.
@Suite("Binary property list objects off the top's tree")
struct UnreachableObjectTests {
    @Test func aLoopTheTopDoesNotReachThrows() throws {
        // Objects: 0 = "a" (top), 1 = array [1] (contains itself, unreachable).
        var bytes = Array("bplist00".utf8)
        let offsets = [bytes.count, bytes.count + 2]
        bytes += [0x51, UInt8(ascii: "a")]
        bytes += [0xA1, 0x01]
        let table = bytes.count
        bytes += offsets.map { UInt8($0) }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be(2) + be(0) + be(UInt64(table))
        let list = try BinaryPropertyList(data: Data(bytes))
        #expect(try list.value(at: 0) == "a")
        let error = #expect(throws: DecantError.self) { try list.value(at: 1) }
        #expect(error?.code == .malformedInput)
    }
}
