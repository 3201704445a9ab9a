import DecantCore
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// The map the owed links of a migration live in: past its bound its entries move to a temporary file, every one
/// still found, the first value set for a key kept, and the file gone with the map.
@Suite("Spilling reference map")
struct SpillingReferenceMapTests {
    static func track(_ number: Int64) -> ObjectReference { ObjectReference(entity: "Track", id: .primaryKey(number)) }

    @Test func entriesPastTheBoundSpillAndAreAllFoundTheFirstValueKept() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var spilled: URL?
        do {
            let map = SpillingReferenceMap(bound: 100, in: folder)
            for number in 0..<1_000 as Range<Int64> {
                let location = ObjectReference(entity: "GeoLocation", id: .primaryKey(number))
                try map.setIfAbsent(Self.track(number / 10), for: location, in: "track")
                // A second owner listing the same member later does not replace the first, spilled or not.
                try map.setIfAbsent(Self.track(-1), for: location, in: "track")
            }
            let named = ObjectReference(entity: "GeoLocation", id: .external("z-ünï\u{301}"))
            try map.setIfAbsent(ObjectReference(entity: "Track", id: .external("t/1")), for: named, in: "route")
            #expect(map.count == 1_001)
            #expect(map.spilledCount >= 900)
            #expect(map.scopes == ["track", "route"])
            spilled = map.spillFolder
            #expect(spilled.map { FileManager.default.fileExists(atPath: $0.path) } == true)
            for number in 0..<1_000 as Range<Int64> {
                let location = ObjectReference(entity: "GeoLocation", id: .primaryKey(number))
                #expect(try map.value(for: location, in: "track") == Self.track(number / 10), "\(number)")
            }
            #expect(try map.value(for: named, in: "route") == ObjectReference(entity: "Track", id: .external("t/1")))
            #expect(try map.value(for: named, in: "track") == nil)
            #expect(try map.value(for: ObjectReference(entity: "GeoLocation", id: .primaryKey(5_000)), in: "track") == nil)
        }
        #expect(spilled.map { !FileManager.default.fileExists(atPath: $0.path) } == true, "the spill file goes with the map")
    }

    /// A walk gives every entry once, spilled or in memory; a removal forgets one in memory, while a spilled one stays
    /// for the walker to check again.
    @Test func aWalkSeesEveryEntryOnceAndRemovalsInMemory() throws {
        let map = SpillingReferenceMap(bound: 10)
        let locations = (0..<25 as Range<Int64>).map { ObjectReference(entity: "GeoLocation", id: .primaryKey($0)) }
        for location in locations { try map.setIfAbsent(Self.track(1), for: location, in: "track") }
        map.removeValue(for: locations[24], in: "track")  // in memory: gone
        map.removeValue(for: locations[0], in: "track")  // spilled: stays
        var walked: [ObjectReference] = []
        try map.forEach { scope, key, value in
            #expect(scope == "track" && value == Self.track(1))
            walked.append(key)
        }
        #expect(walked.count == 24 && Set(walked) == Set(locations.dropLast()))
    }

    @Test func theSpillingFactoryMakesSpillingMaps() {
        #expect(KeySetFactory.spilling(bound: 10).makeReferenceMap() is SpillingReferenceMap)
        #expect(KeySetFactory.inMemory.makeReferenceMap() is InMemoryReferenceMap)
    }
}
