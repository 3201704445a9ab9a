@testable import Decant
import Foundation
import Testing

/// A conversion's last check before it commits: counts that do not add up end with an internal error (exit 70) at
/// the output, never as a success. No input reaches it, so the check is given counts a lost object would leave.
@Suite("Reconciliation of a conversion")
struct ConversionReconciliationTests {
    @Test func countsThatAddUpPass() throws {
        var transfer = TransferReport()
        transfer.read = ["Note": 3]
        transfer.written = ["Note": 2]
        transfer.filteredOut = ["Note": 1]
        try StoreConversion.requireReconciled(transfer, output: URL(fileURLWithPath: "/out/Notes.sqlite"))
    }

    @Test func anObjectLostIsAnInternalErrorAtTheOutput() {
        var transfer = TransferReport()
        transfer.read = ["Note": 3]
        transfer.written = ["Note": 2]
        let error = #expect(throws: DecantError.self) {
            try StoreConversion.requireReconciled(transfer, output: URL(fileURLWithPath: "/out/Notes.sqlite"))
        }
        #expect(error?.code == .internalError)
        #expect(error?.code.exitCode == 70)
        #expect(error?.location?.path == "/out/Notes.sqlite")
    }
}
