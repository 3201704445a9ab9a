import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import Foundation
import Testing

/// A binary archive opened on a file is read a few blocks at a time (`FileBlocks`); it must answer exactly as the
/// same bytes in memory, damaged or not, and a file truncated while it is read must make an error, not a crash.
@Suite("Archives read from a file a block at a time")
struct FileBlocksTests {
    /// A temporary file holding `data`, removed by `body`'s end.
    static func withFile<T>(_ data: Data, _ body: (URL) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("blocks-\(UUID().uuidString).archive")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// An archive of `count` notes, with texts long and short (some across blocks of any size used here).
    static func notesArchive(count: Int) throws -> Data {
        var writer = KeyedArchiveWriter()
        var notes: [PropertyListValue] = []
        for index in 0..<count {
            let long = index % 97 == 0 ? String(repeating: "long text ", count: 40) : ""
            let text = writer.addString("note \(index) \(long)")
            let date = writer.addObject(className: "NSDate", fields: ["NS.time": .real(700_000_000 + Double(index))])
            notes.append(
                writer.addObject(
                    className: "LegacyNote", fields: ["content": text.uid, "date": date.uid, "n": .integer(Int64(index))]
                ).uid)
        }
        let root = writer.addArray(notes)
        return try writer.encodedData(root: root)
    }

    /// Opens `url` with blocks of `1 << shift` bytes, `slots` of them.
    static func open(_ url: URL, shift: Int, slots: Int) throws -> KeyedArchive {
        let file = try #require(try FileBlocks(opening: url, path: "t.archive", blockShift: shift, slotCount: slots))
        let (archive, check) = try KeyedArchive.opening(file: file)
        try check?.finish()
        return archive
    }

    @Test(arguments: [(4, 2), (6, 3), (16, 8)])
    func aFileReadsLikeItsBytes(shift: Int, slots: Int) throws {
        for data in [try LazyKeyedArchiveTests.sampleArchive(), try Self.notesArchive(count: 600)] {
            let inMemory = try KeyedArchive(data: data, path: "t.archive")
            let fromFile = try Self.withFile(data) { try Self.open($0, shift: shift, slots: slots) }
            #expect(fromFile.objectCount == inMemory.objectCount)
            #expect(fromFile.top == inMemory.top)
            #expect(try LazyKeyedArchiveTests.walk(fromFile).get() == LazyKeyedArchiveTests.walk(inMemory).get())
            for index in 0..<inMemory.objectCount {
                #expect(try fromFile.entry(at: index) == inMemory.entry(at: index))
            }
        }
    }

    @Test func damagedFilesFailLikeTheirBytes() throws {
        let original = [UInt8](try LazyKeyedArchiveTests.sampleArchive())
        var generator = SplitMix64(seed: 11)
        for round in 0..<400 {
            var bytes = original
            for _ in 0..<2 {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            if round % 4 == 0 { bytes.removeLast(Int(generator.next() % UInt64(bytes.count))) }
            let data = Data(bytes)
            let inMemory = Result { try KeyedArchive(data: data, path: "t.archive") }
            let fromFile = Result { try Self.withFile(data) { try Self.open($0, shift: 5, slots: 2) } }
            switch (fromFile, inMemory) {
            case (.success(let ours), .success(let theirs)):
                switch (LazyKeyedArchiveTests.walk(ours), LazyKeyedArchiveTests.walk(theirs)) {
                case (.success(let a), .success(let b)): #expect(a == b)
                case (.failure(let a), .failure(let b)):
                    #expect(a.message == b.message)
                    #expect(a.location == b.location)
                case (let a, let b): Issue.record("file \(a) but memory \(b)")
                }
            case (.failure(let ours as DecantError), .failure(let theirs as DecantError)):
                #expect(ours.code == theirs.code)
                #expect(ours.message == theirs.message)
                #expect(ours.location == theirs.location)
            case (let ours, let theirs):
                Issue.record("file \(ours) but memory \(theirs)")
            }
        }
    }

    /// A reader on a file checks the archive's structure on another thread while it plans its records, and reads
    /// objects of one shape by position: damaged or not, it answers exactly as a reader of the same bytes in memory
    /// (checked on opening, each object decoded the full way first).
    @Test func aDamagedArchiveReaderOnAFileFailsLikeOneOnItsBytes() throws {
        let original = [UInt8](try Self.notesArchive(count: 120))
        let model = ArchiveTesting.shapeModel([("content", .string), ("date", .date), ("n", .integer64)])
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        var generator = SplitMix64(seed: 29)
        var failures = 0
        for round in 0..<300 {
            var bytes = original
            for _ in 0..<3 {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            let data = Data(bytes)
            let fromFile = Result {
                try Self.withFile(data) { url in
                    var reader = try ArchiveReader(contentsOf: url, options: options)
                    return try ArchiveTesting.readAll(&reader)
                }
            }
            let inMemory = Result { try ArchiveTesting.records(data, options: options) }
            switch (fromFile, inMemory) {
            case (.success(let ours), .success(let theirs)):
                #expect(ours == theirs, "round \(round)")
            case (.failure(let ours as DecantError), .failure(let theirs as DecantError)):
                failures += 1
                #expect(ours.code == theirs.code, "round \(round)")
                #expect(ours.message == theirs.message, "round \(round)")
                #expect(ours.location?.object == theirs.location?.object, "round \(round)")
                #expect(ours.location?.keyPath == theirs.location?.keyPath, "round \(round)")
            case (let ours, let theirs):
                Issue.record("round \(round): file \(ours) but memory \(theirs)")
            }
        }
        #expect(failures > 30, "most damage is found (\(failures) of 300)")
    }

    @Test func aFileTruncatedBeforeOpeningIsMalformed() throws {
        let data = try Self.notesArchive(count: 50)
        var options = FormatOptions(bundle: ArchiveTesting.bundle(ArchiveTesting.shapeModel([("content", .string)])))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        for length in [8, 40, data.count / 2, data.count - 1] {
            let error = #expect(throws: DecantError.self) {
                try Self.withFile(data.prefix(length)) { url in
                    var reader = try ArchiveReader(contentsOf: url, options: options)
                    _ = try ArchiveTesting.readAll(&reader)
                }
            }
            #expect(error?.code == .malformedInput, "\(length) bytes: \(String(describing: error))")
        }
    }

    @Test func aFileTruncatedWhileReadIsMalformedNotACrash() throws {
        let data = try Self.notesArchive(count: 2_000)
        try Self.withFile(data) { url in
            let archive = try Self.open(url, shift: 6, slots: 2)
            // The opening check has read the file; now it shrinks under the reader.
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(data.count / 3))
            try handle.close()
            let error = #expect(throws: DecantError.self) {
                for index in 0..<archive.objectCount { _ = try archive.object(at: index) }
            }
            #expect(error?.code == .malformedInput)
            #expect(error?.message.contains("truncated") == true, "\(String(describing: error))")
            #expect(error?.location?.path == "t.archive")
        }
    }

    /// A large archive is read in large blocks: its structure check, then every object looked up one cursor at a
    /// time, walk the file twice with about 96 KiB a call or more (issue 38: a 48 MB archive took 391,295 calls).
    @Test func aLargeArchiveIsReadWithFewCalls() throws {
        let data = try Self.notesArchive(count: 40_000)
        try #require(data.count > 2 << 20, "\(data.count) bytes")
        try Self.withFile(data) { url in
            let file = try #require(try FileBlocks(opening: url, path: "t.archive"))
            let (archive, check) = try KeyedArchive.opening(file: file)
            try check?.finish()
            for index in 0..<archive.objectCount { _ = try archive.object(at: index) }
            #expect(file.reads <= 2 * data.count / (96 << 10) + 16, "\(file.reads) reads of \(data.count) bytes")
        }
    }

    /// A walk that starts while two other cursors are open (the structure check starting while the reader looks an
    /// object up in its walk) gets as many blocks as they do: with two, it read a block anew for nearly every object.
    /// One walk, at least 64 KiB a call.
    @Test func aThirdCursorWalksTheFileWithAWholeCache() throws {
        let data = try Self.notesArchive(count: 20_000)
        try Self.withFile(data) { url in
            let file = try #require(try FileBlocks(opening: url, path: "t.archive"))
            let list = try BinaryPropertyList(file: file, checksStructure: false)
            let before = file.reads
            try file.withBlocks { walk in
                _ = walk.byte(at: 0)
                try file.withBlocks { lookUp in
                    _ = lookUp.byte(at: data.count - 1)
                    try list.checkStructure()
                }
            }
            #expect(file.reads - before <= data.count / (64 << 10) + 16, "\(file.reads - before) reads")
        }
    }

    /// Once no cursor reads the file, one cache keeps its blocks for the next cursor, and the others give their
    /// memory back: a structure check's blocks are not held while the records are written.
    @Test func idleCachesGiveTheirBlocksBack() throws {
        let data = try Self.notesArchive(count: 200)
        try Self.withFile(data) { url in
            let file = try #require(try FileBlocks(opening: url, path: "t.archive", blockShift: 6, slotCount: 4))
            try file.withBlocks { outer in
                _ = outer.byte(at: 0)
                try file.withBlocks { inner in _ = inner.byte(at: data.count - 1) }
                #expect(file.freeCachesHoldingBlocks == 1)
            }
            #expect(file.freeCachesHoldingBlocks == 1)
            // The cache kept is the one given back last, and its blocks are still there.
            let reads = file.reads
            try file.withBlocks { cursor in _ = cursor.byte(at: 0) }
            #expect(file.reads == reads)
        }
    }

    @Test func anArchiveReaderOnAFileReadsLikeOneOnItsBytes() throws {
        let data = try Self.notesArchive(count: 3_000)
        let model = ArchiveTesting.shapeModel([("content", .string), ("date", .date), ("n", .integer64)])
        var options = FormatOptions(bundle: ArchiveTesting.bundle(model))
        options.archive.classEntities = ["LegacyNote": "Shape"]
        let fromFile = try Self.withFile(data) { url in
            var reader = try ArchiveReader(contentsOf: url, options: options)
            return try ArchiveTesting.readAll(&reader)
        }
        #expect(fromFile == (try ArchiveTesting.records(data, options: options)))
        #expect(fromFile["Shape"]?.count == 3_000)
    }
}
