import DecantCore
import Foundation
import Testing

/// Values decoded from cells never trap, whatever a file stored in them.
@Suite("Record batch values")
struct RecordBatchValueTests {
    @Test("a decimal stored as a real outside Decimal's range reads as a double", arguments: [
        Double.infinity, -Double.infinity, Double.nan, 1e300, -1.7976931348623157e308,
    ])
    func decimalOutOfRange(_ real: Double) throws {
        var entity = Entity(name: "Price")
        entity.attributes = [Attribute(name: "amount", type: .decimal, isOptional: true)]
        let model = ObjectModel(versionName: "P", entities: [entity], versionIdentifiers: ["1"])
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Price", in: model)))
        batch.beginRecord(primaryKey: 1)
        batch.appendReal(real)
        batch.endRecord()
        let value = batch.value(row: 0, attribute: 0)
        if case .double(let read) = value {
            #expect(read.bitPattern == real.bitPattern)
        } else {
            Issue.record("expected a double, got \(value)")
        }
    }
}
