import ArgumentParser
@testable import DecantCLI
import Testing

/// Expects `arguments` to be refused as a usage error: parsing (with each command's `validate()`) throws, and the
/// error's exit status is 64, not some other failure; `mentioning`, when given, is in the message ArgumentParser
/// prints.
func expectUsageError(
    _ arguments: [String], mentioning: String? = nil, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let command = try DecantCommand.parseAsRoot(arguments)
        Issue.record("\(arguments) parsed as \(type(of: command)) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
    } catch {
        let message = DecantCommand.message(for: error)
        #expect(
            DecantCommand.exitCode(for: error).rawValue == 64, "\(arguments): \(message) \(comment.map { "(\($0))" } ?? "")",
            sourceLocation: sourceLocation)
        if let mentioning {
            #expect(message.contains(mentioning), "\(arguments): \(message)", sourceLocation: sourceLocation)
        }
    }
}
