@testable import Decant
import DecantTestSupport
import Foundation
import Testing

/// References by key land where they belong in a store: to-one columns holding `Entity/id` or the destination's
/// key, a to-many join file, and NDJSON with references, whether each reference comes before its object (resolved
/// set-wise inside SQLite when the store is complete) or after it (resolved at once); an id two objects share is
/// refused, and the errors about references are the readers' own, unchanged.
@Suite("Keyed references into a store")
struct KeyedReferenceImportTests {
    /// `Note{title, folder, tags} → Folder{name, unique}`, `Note.tags ⇄ Tag.notes` (many-to-many), with the
    /// entities in `order`: files are read in model order, so a note's references come before or after their
    /// objects.
    static func model(notesFirst: Bool) -> ObjectModel {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        folder.uniquenessConstraints = [["name"]]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        note.relationships = [
            Relationship(name: "folder", destination: "Folder", inverse: "notes"),
            Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true),
        ]
        return ObjectModel(
            versionName: "Keyed", entities: notesFirst ? [note, folder, tag] : [folder, tag, note],
            versionIdentifiers: ["1"])
    }

    static func options(_ model: ObjectModel) -> FormatOptions {
        FormatOptions(
            bundle: ModelBundle(
                name: "Keyed", versions: [model], currentVersionName: model.versionName, sourceKind: .xcdatamodeld))
    }

    /// Folders by their unique name (no `_id`), tags by the source's own ids, notes by theirs; `Folder/Home` and
    /// `Work` both name a folder; the join file lists notes' tags in the order of Note.csv.
    static let files = [
        "Folder.csv": "name\nWork\nHome\nEmpty\n",
        "Tag.csv": "_id,label\nt1,red\nt2,blue\n",
        "Note.csv": "_id,title,folder\nn1,A,Work\nn2,B,Folder/Home\nn3,C,\nn4,D,Work\n",
        "Note.tags.csv": "owner,member\nn1,t2\nn1,t1\nn2,Tag/t1\nn4,t2\n",
    ]

    static let expectedFolders = ["A|Work", "B|Home", "C|NULL", "D|Work"]
    static let expectedTags = ["A|blue", "A|red", "B|red", "D|blue"]

    static func folders(_ store: URL) -> [String] {
        query(
            store,
            "SELECT n.ZTITLE, f.ZNAME FROM ZNOTE n LEFT JOIN ZFOLDER f ON f.Z_PK = n.ZFOLDER ORDER BY n.ZTITLE")
    }

    /// Each note's tags, `title|label`, as a store reader reads the join table back.
    static func tags(_ store: URL, model: ObjectModel) throws -> [String] {
        let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: store), model: model)
        var labels: [RecordID: String] = [:]
        for tag in try reader.records(of: "Tag") {
            if case .string(let label)? = tag.values.first { labels[tag.id] = label }
        }
        var pairs: [String] = []
        for note in try reader.records(of: "Note") {
            guard case .string(let title)? = note.values.first else { continue }
            for relationship in note.relationships {
                guard case .toMany(let members) = relationship else { continue }
                pairs += members.map { "\(title)|\(labels[$0.id] ?? "\($0)")" }
            }
        }
        return pairs.sorted()
    }

    @Test(
        "CSV and NDJSON references by key land where they belong, before or after their objects",
        arguments: [true, false])
    func referencesLandWhereTheyBelong(notesFirst: Bool) throws {
        let model = Self.model(notesFirst: notesFirst)
        let options = Self.options(model)
        let input = try CSVTestFolder.make(Self.files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        let report = try StoreConversion.convert(from: input, to: store, options: options)
        #expect(report.written == ["Folder": 3, "Tag": 2, "Note": 4])
        #expect(Self.folders(store) == Self.expectedFolders)
        #expect(try Self.tags(store, model: model) == Self.expectedTags)
        // Every key is a row's: nothing points past the rows, and Z_MAX counts every row.
        #expect(Self.query(store, "SELECT COUNT(*) FROM ZNOTE WHERE ZFOLDER NOT IN (SELECT Z_PK FROM ZFOLDER)") == ["0"])
        #expect(Self.query(store, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_NAME") == ["Folder|3", "Note|4", "Tag|2"])

        // NDJSON with references (`"folder": "Folder/Work"`, `"tags": ["Tag/t2", …]`), back into a store.
        let ndjson = input.deletingLastPathComponent().appendingPathComponent("keyed.ndjson")
        _ = try StoreConversion.convert(from: input, to: ndjson, options: options)
        let text = try String(contentsOf: ndjson, encoding: .utf8)
        #expect(text.contains("\"folder\":\"Folder/Work\""), "\(text)")
        let back = input.deletingLastPathComponent().appendingPathComponent("Back.sqlite")
        let again = try StoreConversion.convert(from: ndjson, to: back, options: options)
        #expect(again.written == ["Folder": 3, "Tag": 2, "Note": 4])
        #expect(Self.folders(back) == Self.expectedFolders)
        #expect(try Self.tags(back, model: model) == Self.expectedTags)
    }

    @Test("the writer resolves staged and remembered references alike", arguments: [0, 1, 50_000])
    func writerResolvesReferencesWhateverItRemembers(bound: Int) throws {
        let model = Self.model(notesFirst: true)
        let input = try CSVTestFolder.make(Self.files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        var reader = try CSVReader(contentsOf: input, options: Self.options(model), batchSize: 2)
        var writer = try SQLiteStoreWriter(creating: store, model: model, identityMapBound: bound)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        #expect(Self.folders(store) == Self.expectedFolders)
        #expect(try Self.tags(store, model: model) == Self.expectedTags)
    }

    @Test("an id two objects share is refused, and no store is left", arguments: [true, false])
    func sharedIdsAreRefused(notesFirst: Bool) throws {
        // Two tags with the source's id t1: refused once every object is in, naming the entity and the id.
        var files = Self.files
        files["Tag.csv"] = "_id,label\nt1,red\nt2,blue\nt1,green\n"
        var error = try Self.convertError(files, notesFirst: notesFirst)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.entity == "Tag")
        #expect(error?.location?.object == "Tag/t1")
        #expect(error?.message.contains("two objects of Tag have the id \"t1\"") == true, "\(error?.message ?? "")")
        // Two folders with the key Work: the store's own uniqueness constraint refuses the second, as before.
        files = Self.files
        files["Folder.csv"] = "name\nWork\nHome\nWork\n"
        error = try Self.convertError(files, notesFirst: notesFirst)
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("UNIQUE constraint failed: ZFOLDER.ZNAME") == true, "\(error?.message ?? "")")
    }

    /// The error converting `files` into a store throws; no store is left behind.
    static func convertError(_ files: [String: String], notesFirst: Bool) throws -> DecantError? {
        let input = try CSVTestFolder.make(files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        let error = #expect(throws: DecantError.self) {
            try StoreConversion.convert(from: input, to: store, options: Self.options(Self.model(notesFirst: notesFirst)))
        }
        #expect(!FileManager.default.fileExists(atPath: store.path))
        return error
    }

    @Test("a join row naming a member no file has is located, as before")
    func missingMembersAreLocated() throws {
        var files = Self.files
        files["Note.tags.csv"] = "owner,member\nn1,t2\nn2,t9\n"
        let input = try CSVTestFolder.make(files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        let error = #expect(throws: DecantError.self) {
            try StoreConversion.convert(from: input, to: store, options: Self.options(Self.model(notesFirst: false)))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path?.hasSuffix("Note.tags.csv") == true)
        #expect(error?.location?.line == 3)
        #expect(error?.message.contains("member Tag/t9 is not an object of Tag.csv") == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }

    @Test("--entity naming a single file's entity selects nothing: no first pass remembers every id")
    func entityOfASingleFileSelectsNothing() throws {
        // The first pass (KeptObjects) held every object's id in memory, and copied its set once per batch: the
        // cliff of a single Note.csv converted with --entity Note.
        let model = Self.model(notesFirst: false)
        let input = try CSVTestFolder.make(["Note.csv": "title\nA\nB\n"])
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        var options = Self.options(model)
        options.entity = "Note"
        let reader = try CSVReader(contentsOf: input.appendingPathComponent("Note.csv"), options: options)
        let named = RecordSelection(entities: ["Note"])
        #expect(named.leavesObjectsOut)
        #expect(!StoreConversion.effective(named, of: reader).leavesObjectsOut)
        #expect(StoreConversion.effective(RecordSelection(entities: ["Folder"]), of: reader).leavesObjectsOut)
        let store = input.deletingLastPathComponent().appendingPathComponent("Notes.sqlite")
        let report = try StoreConversion.convert(
            from: input.appendingPathComponent("Note.csv"), to: store, options: options, selection: named)
        #expect(report.written == ["Note": 2])
    }

    @Test("rows nothing can refer to take keys of their own, however they are named")
    func anonymousRowsAreNotRemembered() throws {
        // Two anonymous records with the same name (a CSV row's id from its line) are two objects: their names are
        // for messages only, and the writer keeps none of them.
        let model = Self.model(notesFirst: false)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Anonymous.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: model)
        var batch = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        for title in ["A", "B"] {
            batch.beginRecord(anonymous: "Note:2")
            batch.appendText(title)
            batch.appendReference(nil)
            batch.appendReferenceList([])
            batch.endRecord()
        }
        #expect(batch.isAnonymous(at: 1))
        #expect(batch.id(at: 1) == .external("Note:2"))
        try writer.write(batch)
        try writer.finish()
        #expect(Self.query(store, "SELECT Z_PK, ZTITLE FROM ZNOTE ORDER BY Z_PK") == ["1|A", "2|B"])
    }

    @Test("a store's batch ends past its bound of to-many members, each record's members whole")
    func storeBatchesAreBoundedByMembers() throws {
        // Tags listing a third of four million notes each were one batch of four million members (96 MB).
        let model = Self.model(notesFirst: false)
        let input = try CSVTestFolder.make(Self.files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        _ = try StoreConversion.convert(from: input, to: store, options: Self.options(model))
        for (bound, expected) in [(1 << 16, [2]), (2, [1, 1]), (1, [1, 1])] {
            let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: store), model: model)
            reader.membersPerBatch = bound
            var batch = try #require(RecordLayout(entity: "Tag", in: model)).emptyBatch()
            var counts: [Int] = []
            var members: [Int] = []
            while try reader.nextBatch(into: &batch) {
                guard batch.layout.entityName == "Tag" else { continue }
                counts.append(batch.count)
                members.append(batch.references.count)
            }
            #expect(counts == expected, "bound \(bound)")
            #expect(members.reduce(0, +) == 4, "bound \(bound)")
        }
    }

    @Test("remembered and staged ids match alike: byte for byte, as SQLite compares them", arguments: [0, 50_000])
    func rememberedIdsMatchByTheirBytes(bound: Int) throws {
        // A folder named `Cafe` + combining accent and a reference to `Café` (one precomposed character): canonically
        // equal Strings, different bytes. The staged path (SQLite) never matched them; the remembered one (a String
        // key) did, so the result hung on whether the folder was among the first `bound` ids.
        let model = Self.numberedModel
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Bytes.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: model, identityMapBound: bound)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        folders.entityNames = model.entities.map(\.name)
        for name in ["Cafe\u{301}", "Home"] {
            folders.beginRecord(id: .external(name))
            folders.appendText(name)
            folders.appendViaInverse()
            folders.endRecord()
        }
        try writer.write(folders)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        notes.entityNames = model.entities.map(\.name)
        for (number, target) in [(1, "Caf\u{e9}"), (2, "Cafe\u{301}"), (3, "Home")] {
            notes.beginRecord(id: .external(String(number)))
            notes.appendInteger(Int64(number))
            notes.appendNull()
            notes.appendReference(ObjectReference(entity: "Folder", id: .external(target)))
            notes.endRecord()
        }
        try writer.write(notes)
        try writer.finish()
        // Note 1 names no folder's bytes: it points to no row, whatever the writer remembered.
        #expect(
            Self.query(
                store,
                "SELECT n.ZNUMBER, f.Z_PK IS NOT NULL FROM ZNOTE n LEFT JOIN ZFOLDER f ON f.Z_PK = n.ZFOLDER "
                    + "ORDER BY n.ZNUMBER") == ["1|0", "2|1", "3|1"])
    }

    /// Writes `Folder n` under each of `folderIDs` (in order, external ids), then note `i` (id `n<i>`, from 1) naming
    /// the folder `noteFolders[i - 1]`, into a store of ``numberedModel`` at `store`.
    static func writeNumbered(
        _ store: URL, bound: Int, folderIDs: [String], noteFolders: [String]
    ) throws {
        let model = Self.numberedModel
        let writer = try SQLiteStoreWriter(creating: store, model: model, identityMapBound: bound)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        folders.entityNames = model.entities.map(\.name)
        for (index, id) in folderIDs.enumerated() {
            folders.beginRecord(id: .external(id))
            folders.appendText("Folder \(index + 1)")
            folders.appendViaInverse()
            folders.endRecord()
        }
        try writer.write(folders)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        notes.entityNames = model.entities.map(\.name)
        for (index, target) in noteFolders.enumerated() {
            notes.beginRecord(id: .external("n\(index + 1)"))
            notes.appendInteger(Int64(index + 1))
            notes.appendNull()
            notes.appendReference(ObjectReference(entity: "Folder", id: .external(target)))
            notes.endRecord()
        }
        try writer.write(notes)
        try writer.finish()
    }

    @Test("ids staged many to a statement resolve, and clash, as ids staged one by one", arguments: [0, 70])
    func idsStagedInChunksResolveAndClash(bound: Int) throws {
        // 150 folders: two whole statements of 64 ids and a rest of 22, all staged (bound 0) or the first 70
        // remembered; each note names a folder from the other end, so references reach into every statement.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let noteFolders = (1...150).map { "f\(151 - $0)" }
        let store = folder.appendingPathComponent("Chunks.sqlite")
        try Self.writeNumbered(store, bound: bound, folderIDs: (1...150).map { "f\($0)" }, noteFolders: noteFolders)
        #expect(
            Self.query(store, "SELECT n.ZNUMBER, f.ZNAME FROM ZNOTE n JOIN ZFOLDER f ON f.Z_PK = n.ZFOLDER ORDER BY 1")
                == (1...150).map { "\($0)|Folder \(151 - $0)" })
        // The 140th folder (in the last statement's rest) repeats the 3rd's id: refused, naming it, no store left.
        let clash = folder.appendingPathComponent("Clash.sqlite")
        var ids = (1...150).map { "f\($0)" }
        ids[139] = "f3"
        let error = #expect(throws: DecantError.self) {
            try Self.writeNumbered(clash, bound: bound, folderIDs: ids, noteFolders: noteFolders)
        }
        #expect(error?.location?.object == "Folder/f3")
        #expect(error?.message.contains("two objects of Folder have the id \"f3\"") == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: clash.path))
    }

    @Test("an empty id is an id: staged as empty text, it is found and it clashes", arguments: [0, 50_000])
    func anEmptyIdIsAnId(bound: Int) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Empty.sqlite")
        try Self.writeNumbered(store, bound: bound, folderIDs: [""], noteFolders: [""])
        #expect(Self.query(store, "SELECT f.ZNAME FROM ZNOTE n JOIN ZFOLDER f ON f.Z_PK = n.ZFOLDER") == ["Folder 1"])
        let clash = folder.appendingPathComponent("EmptyClash.sqlite")
        let error = #expect(throws: DecantError.self) {
            try Self.writeNumbered(clash, bound: bound, folderIDs: ["", "f2", ""], noteFolders: [""])
        }
        #expect(error?.message.contains("two objects of Folder have the id \"\"") == true, "\(error?.message ?? "")")
    }

    /// `Folder{name, unique}` ← `Note{number (Integer 64, unique), title, folder}`: notes keyed by their number,
    /// which no file refers to.
    static let numberedModel: ObjectModel = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        folder.uniquenessConstraints = [["name"]]
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "number", type: .integer64, isOptional: true),
            Attribute(name: "title", type: .string, isOptional: true),
        ]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        note.uniquenessConstraints = [["number"]]
        return ObjectModel(versionName: "Numbered", entities: [folder, note], versionIdentifiers: ["1"])
    }()

    /// Per entity, whether each record `input` reads is anonymous.
    static func anonymity(_ input: URL, keys: [String: String] = [:]) throws -> [String: [Bool]] {
        var options = Self.options(Self.numberedModel)
        options.keys = keys
        let reader = try CSVReader(contentsOf: input, options: options)
        var batch = try #require(RecordLayout(entity: "Note", in: reader.model)).emptyBatch()
        var result: [String: [Bool]] = [:]
        while try reader.nextBatch(into: &batch) {
            result[batch.layout.entityName, default: []] += (0..<batch.count).map(batch.isAnonymous)
        }
        return result
    }

    @Test("objects no file refers to, keyed by a uniqueness constraint, are not remembered; a shared key is refused")
    func unreferencedStoreKeysAreNotRemembered() throws {
        // Notes keyed by their unique number, which nothing refers to: a writer need not remember 4M numbers (the
        // keyed benchmark's cost). Folders are referred to by name, so theirs are remembered.
        let files = [
            "Folder.csv": "name\nWork\nHome\n",
            "Note.csv": "number,title,folder\n1,A,Work\n2,B,Home\n3,C,\n",
        ]
        let input = try CSVTestFolder.make(files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        #expect(try Self.anonymity(input) == ["Folder": [false, false], "Note": [true, true, true]])
        // A key the store does not enforce (--key without a constraint) is remembered: the writer finds duplicates.
        #expect(
            try Self.anonymity(input, keys: ["Note": "title"])
                == ["Folder": [false, false], "Note": [false, false, false]])
        let store = input.deletingLastPathComponent().appendingPathComponent("Numbered.sqlite")
        let report = try StoreConversion.convert(from: input, to: store, options: Self.options(Self.numberedModel))
        #expect(report.written == ["Folder": 2, "Note": 3])
        #expect(
            Self.query(
                store,
                "SELECT n.ZNUMBER, n.ZTITLE, f.ZNAME FROM ZNOTE n LEFT JOIN ZFOLDER f ON f.Z_PK = n.ZFOLDER "
                    + "ORDER BY n.ZNUMBER") == ["1|A|Work", "2|B|Home", "3|C|NULL"])

        // Two notes numbered 2: the store's own uniqueness constraint refuses the second, and no store is left.
        let shared = try CSVTestFolder.make(files.merging(["Note.csv": "number,title\n1,A\n2,B\n2,C\n"]) { $1 })
        defer { try? FileManager.default.removeItem(at: shared.deletingLastPathComponent()) }
        let sharedStore = shared.deletingLastPathComponent().appendingPathComponent("Numbered.sqlite")
        let error = #expect(throws: DecantError.self) {
            try StoreConversion.convert(from: shared, to: sharedStore, options: Self.options(Self.numberedModel))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("UNIQUE constraint failed: ZNOTE.ZNUMBER") == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: sharedStore.path))
    }

    /// The entity of each batch `input` reads, in reading order (each once).
    static func readingOrder(_ input: URL, model: ObjectModel) throws -> [String] {
        let reader = try CSVReader(contentsOf: input, options: Self.options(model), batchSize: 1)
        var batch = try #require(RecordLayout(entity: model.entities[0].name, in: model)).emptyBatch()
        var order: [String] = []
        while try reader.nextBatch(into: &batch) {
            if order.last != batch.layout.entityName { order.append(batch.layout.entityName) }
        }
        return order
    }

    @Test("files other files refer to are read first, so their references resolve from memory; keys are unchanged")
    func referredFilesAreReadFirst() throws {
        // Note (first in the model) refers to Folder by a column and to Tag through its join file: both are read
        // before it. Model order when nothing refers forward.
        let input = try CSVTestFolder.make(Self.files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        #expect(try Self.readingOrder(input, model: Self.model(notesFirst: true)) == ["Folder", "Tag", "Note"])
        #expect(try Self.readingOrder(input, model: Self.model(notesFirst: false)) == ["Folder", "Tag", "Note"])
        // Keys follow each file's order whatever the reading order: notes 1-4, folders and tags as listed.
        let store = input.deletingLastPathComponent().appendingPathComponent("Keyed.sqlite")
        _ = try StoreConversion.convert(from: input, to: store, options: Self.options(Self.model(notesFirst: true)))
        #expect(Self.query(store, "SELECT Z_PK, ZTITLE FROM ZNOTE ORDER BY Z_PK") == ["1|A", "2|B", "3|C", "4|D"])
        #expect(Self.query(store, "SELECT Z_PK, ZNAME FROM ZFOLDER ORDER BY Z_PK") == ["1|Work", "2|Home", "3|Empty"])

        // One hierarchy shares a table, and so its keys: Page and Link (sub-entities of Item) keep their model order
        // though Page refers to Link; Site, which Page refers to, comes first; Item has no file.
        var item = Entity(name: "Item", isAbstract: true)
        item.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var page = Entity(name: "Page", parentName: "Item")
        page.relationships = [
            Relationship(name: "link", destination: "Link"), Relationship(name: "site", destination: "Site"),
        ]
        let link = Entity(name: "Link", parentName: "Item")
        var site = Entity(name: "Site")
        site.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        site.uniquenessConstraints = [["name"]]
        let hierarchy = ObjectModel(
            versionName: "Items", entities: [item, page, link, site], versionIdentifiers: ["1"])
        let items = try CSVTestFolder.make([
            "Page.csv": "_id,title,link,site\nq1,Home,Link/l1,Main\nq2,About,,Main\n",
            "Link.csv": "_id,title\nl1,Docs\n",
            "Site.csv": "name\nMain\n",
        ])
        defer { try? FileManager.default.removeItem(at: items.deletingLastPathComponent()) }
        #expect(try Self.readingOrder(items, model: hierarchy) == ["Site", "Page", "Link"])
        let itemStore = items.deletingLastPathComponent().appendingPathComponent("Items.sqlite")
        _ = try StoreConversion.convert(from: items, to: itemStore, options: Self.options(hierarchy))
        #expect(
            Self.query(
                itemStore,
                "SELECT i.Z_PK, i.ZTITLE, l.ZTITLE, s.ZNAME FROM ZITEM i LEFT JOIN ZITEM l ON l.Z_PK = i.ZLINK "
                    + "LEFT JOIN ZSITE s ON s.Z_PK = i.ZSITE ORDER BY i.Z_PK")
                == ["1|Home|Docs|Main", "2|About|NULL|Main", "3|Docs|NULL|NULL"])
    }

    /// `Note{number (Integer 64, unique), folder, tags (ordered)}`, `Folder{name, unique}`, `Tag{name, unique}`,
    /// Note first in the model: the benchmark's shape, with the tags in order.
    static let orderedTagsModel: ObjectModel = {
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "number", type: .integer64, isOptional: true)]
        var tags = Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true)
        tags.isOrdered = true
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes"), tags]
        note.uniquenessConstraints = [["number"]]
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        folder.uniquenessConstraints = [["name"]]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
        tag.uniquenessConstraints = [["name"]]
        return ObjectModel(versionName: "Tagged", entities: [note, folder, tag], versionIdentifiers: ["1"])
    }()

    @Test("hundreds of links by key land in order, remembered or staged", arguments: [0, 50_000])
    func manyLinksByKeyLandInOrder(bound: Int) throws {
        // 300 notes with 0-3 tags each, listed in reverse of their position, some owners spelled `Note/13` or `014`,
        // tags and folders repeated row after row: more rows than one insert takes at once.
        func field(_ text: String) -> String {
            guard text.contains(",") || text.contains("\"") else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        let tagNames = ["red", "grün", "a,b", "say \"hi\""]
        var notes = "number,folder\n"
        var links = "owner,member,position\n"
        var expected: [String] = []
        for number in 1...300 {
            let folder = number % 5 == 0 ? nil : "F\(number % 7)"
            notes += "\(number),\(folder ?? "")\n"
            let owner = number % 10 == 3 ? "Note/\(number)" : number % 10 == 4 ? "0\(number)" : "\(number)"
            for position in stride(from: number % 4, through: 1, by: -1) {
                links += "\(owner),\(field(tagNames[(number + position) % 4])),\(position)\n"
            }
            let tags = (0..<number % 4).map { tagNames[(number + $0 + 1) % 4] }
            expected.append("\(number)|\(folder ?? "-")|\(tags.joined(separator: "+"))")
        }
        let files = [
            "Note.csv": notes, "Note.tags.csv": links,
            "Folder.csv": "name\n" + (0..<7).map { "F\($0)\n" }.joined(),
            "Tag.csv": "name\n" + tagNames.map { field($0) + "\n" }.joined(),
        ]
        let input = try CSVTestFolder.make(files)
        defer { try? FileManager.default.removeItem(at: input.deletingLastPathComponent()) }
        let model = Self.orderedTagsModel
        let store = input.deletingLastPathComponent().appendingPathComponent("Tagged.sqlite")
        var reader = try CSVReader(contentsOf: input, options: Self.options(model), batchSize: 50)
        var writer = try SQLiteStoreWriter(creating: store, model: model, identityMapBound: bound)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)

        let stored = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: store), model: model)
        func names(_ entity: String) throws -> [RecordID: String] {
            var names: [RecordID: String] = [:]
            for object in try stored.records(of: entity) {
                if case .string(let name)? = object.values.first { names[object.id] = name }
            }
            return names
        }
        let folders = try names("Folder")
        let tags = try names("Tag")
        var found: [String] = []
        for note in try stored.records(of: "Note") {
            var number = "?"
            if case .integer(let value)? = note.values.first { number = String(value) }
            var folder = "?"
            var members = "?"
            if case .toOne(let reference) = note.relationships[0] {
                folder = reference.map { folders[$0.id] ?? "?" } ?? "-"
            }
            if case .toMany(let list) = note.relationships[1] {
                members = list.map { tags[$0.id] ?? "?" }.joined(separator: "+")
            }
            found.append("\(number)|\(folder)|\(members)")
        }
        #expect(found == expected)
        #expect(Self.query(store, "SELECT COUNT(*) FROM Z_2TAGS") == ["\((1...300).map { $0 % 4 }.reduce(0, +))"])
        #expect(
            Self.query(store, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_NAME")
                == ["Folder|7", "Note|300", "Tag|4"])
    }

    /// Runs `sql` on `url` and returns each row as `|`-joined text (``StoreFeatureQuery/rows(_:_:)``).
    static func query(_ url: URL, _ sql: String) -> [String] {
        (try? StoreFeatureQuery.rows(url, sql)) ?? ["error: cannot query \(url.path)"]
    }
}

/// A CSV input folder written by hand.
enum CSVTestFolder {
    /// A new folder `input` in a new temporary folder, holding `files` (name → text).
    static func make(_ files: [String: String]) throws -> URL {
        let folder = try Fixtures.temporaryDirectory().appendingPathComponent("input", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }
}
