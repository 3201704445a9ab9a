import DecantCore
import Testing

/// A byte-string table finds each key by its bytes, after any number of insertions, and tells apart keys that are
/// equal only as Strings.
@Suite("Byte-string table")
struct ByteStringTableTests {
    static func value(_ table: ByteStringTable<Int>, _ key: String) -> Int? {
        Array(key.utf8).withUnsafeBytes { table.value(for: $0) }
    }

    static func insert(_ value: Int, _ key: String, into table: inout ByteStringTable<Int>) {
        Array(key.utf8).withUnsafeBytes { table.insert(value, for: $0) }
    }

    @Test("every key is found after the table grows, others are not, and a key inserted again takes the new value")
    func findsEveryKey() {
        var table = ByteStringTable<Int>()
        #expect(table.isEmpty)
        #expect(Self.value(table, "a") == nil)
        for number in 0..<5_000 { Self.insert(number, "key \(number)", into: &table) }
        #expect(table.count == 5_000)
        let missed = (0..<5_000).filter { (number: Int) -> Bool in
            Self.value(table, "key " + String(number)) != number
        }
        #expect(missed.isEmpty)
        #expect(Self.value(table, "key 5000") == nil)
        #expect(Self.value(table, "key") == nil)
        Self.insert(-1, "key 17", into: &table)
        #expect(table.count == 5_000)
        #expect(Self.value(table, "key 17") == -1)
        // The empty key is a key like any other.
        Self.insert(7, "", into: &table)
        #expect(Self.value(table, "") == 7)
        table.removeAll()
        #expect(table.isEmpty && table.keyBytes == 0)
        #expect(Self.value(table, "key 1") == nil)
    }

    @Test("keys compare byte for byte: a precomposed and a decomposed é are two keys")
    func keysCompareByteForByte() {
        var table = ByteStringTable<Int>()
        Self.insert(1, "Caf\u{e9}", into: &table)
        #expect("Caf\u{e9}" == "Cafe\u{301}")  // equal Strings…
        #expect(Self.value(table, "Cafe\u{301}") == nil)  // …different bytes
        Self.insert(2, "Cafe\u{301}", into: &table)
        #expect(Self.value(table, "Caf\u{e9}") == 1)
        #expect(Self.value(table, "Cafe\u{301}") == 2)
        #expect(table.keyBytes == "Caf\u{e9}".utf8.count + "Cafe\u{301}".utf8.count)
    }
}
