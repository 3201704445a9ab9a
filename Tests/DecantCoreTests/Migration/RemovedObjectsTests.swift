import DecantCore
import Testing

/// The removals a hop reads where it cannot throw: a failed lookup is kept and thrown by `checkLookups()`.
@Suite("Removed objects")
struct RemovedObjectsTests {
    /// A set whose lookups fail, as a spilled set's would when its temporary file does.
    final class FailingKeySet: KeySet {
        var count: Int { 1 }
        func insert(_ key: SetKey, in scope: String) throws -> Bool { true }
        func contains(_ key: SetKey, in scope: String) throws -> Bool {
            throw DecantError(.ioError, "the temporary file is gone")
        }
    }

    @Test func aFailedLookupIsThrownAfterTheRun() throws {
        let removed = RemovedObjects(FailingKeySet())
        let copy = removed
        #expect(!removed.contains(ObjectReference(entity: "Note", id: .primaryKey(1))))
        // Copies share what went wrong: the transform holds one, the caller checks another.
        let error = try #require(throws: DecantError.self) { try copy.checkLookups() }
        #expect(error.message == "the temporary file is gone")
    }

    @Test func aListIsHeldInMemory() throws {
        let removed: RemovedObjects = [ObjectReference(entity: "Folder", id: .primaryKey(2))]
        #expect(removed.count == 1)
        #expect(removed.contains(ObjectReference(entity: "Folder", id: .primaryKey(2))))
        #expect(!removed.contains(ObjectReference(entity: "Note", id: .primaryKey(2))))
        #expect(([] as RemovedObjects).isEmpty)
        try removed.checkLookups()
    }
}
