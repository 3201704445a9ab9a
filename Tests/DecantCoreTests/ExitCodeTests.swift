import DecantCore
import Testing

/// DESIGN.md's exit statuses, written out by hand: every error code maps to the sysexits status the CLI exits with
/// (0 ok, 64 usage, 65 bad data, 66 missing input, 70 internal error, 73 cannot create output, 74 I/O error, 1 ran
/// but found problems).
@Suite("Exit codes")
struct ExitCodeTests {
    @Test func everyErrorCodeMapsToItsDocumentedStatus() {
        let table: [(DecantError.Code, Int32)] = [
            (.usage, 64),
            (.malformedInput, 65), (.unsupportedFormat, 65), (.modelMismatch, 65),
            (.fileNotFound, 66),
            (.internalError, 70),
            (.cannotCreateOutput, 73),
            (.ioError, 74),
            (.planNotExecutable, 1), (.validationFailed, 1),
        ]
        for (code, status) in table {
            #expect(code.exitCode == status, "\(code)")
        }
        // Every code there is is in the table, once (a new code must be given its status here).
        #expect(table.count == DecantError.Code.allCases.count)
        for code in DecantError.Code.allCases {
            #expect(table.filter { $0.0 == code }.count == 1, "\(code) is not in the table once")
        }
        // And each code has a name of its own.
        #expect(Set(DecantError.Code.allCases.map(\.description)).count == DecantError.Code.allCases.count)
    }
}
