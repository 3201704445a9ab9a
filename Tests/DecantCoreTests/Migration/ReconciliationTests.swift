@testable import DecantCore
import Testing

/// The record-stream engine's last check: a run whose counts do not add up ends with an internal error (exit 70),
/// never as a success. No input reaches it (every path of the transform counts what it does), so the check is given
/// counts that do not add up, as a transform or writer that lost an object would leave them.
@Suite("Reconciliation of a migration run")
struct ReconciliationTests {
    /// Two notes read, both written, one hop that read and wrote both.
    static func reconciled() -> (TransferReport, [MigrationLedger]) {
        var transfer = TransferReport()
        transfer.read = ["Note": 2]
        transfer.written = ["Note": 2]
        var ledger = MigrationLedger(hop: "Notes → Notes 2")
        ledger.rows["Note"] = MigrationLedger.Row(read: 2, written: 2)
        return (transfer, [ledger])
    }

    @Test func countsThatAddUpPass() throws {
        let (transfer, ledgers) = Self.reconciled()
        try RecordStreamEngine.requireReconciled(transfer, ledgers: ledgers)
        try RecordStreamEngine.requireReconciled(transfer, ledgers: [])
    }

    @Test func anObjectLostBetweenReadingAndWritingIsAnInternalError() {
        var (transfer, ledgers) = Self.reconciled()
        transfer.written["Note"] = 1
        let error = #expect(throws: DecantError.self) {
            try RecordStreamEngine.requireReconciled(transfer, ledgers: ledgers)
        }
        #expect(error?.code == .internalError)
        #expect(error?.code.exitCode == 70)
        #expect(error?.message.contains("read [\"Note\": 2], written [\"Note\": 1]") == true, "\(error?.message ?? "")")
    }

    @Test func anObjectLostInsideAHopIsAnInternalError() {
        var (transfer, ledgers) = Self.reconciled()
        ledgers[0].rows["Note"]?.written = 1
        let error = #expect(throws: DecantError.self) {
            try RecordStreamEngine.requireReconciled(transfer, ledgers: ledgers)
        }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("Notes → Notes 2") == true, "\(error?.message ?? "")")
    }
}
