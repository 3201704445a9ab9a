import ArgumentParser
import Decant
import Foundation

/// `--rejects` and `--no-validate` for `convert`: whether objects brought into a Core Data store from records are
/// checked against the model's rules, as Core Data's save checks them (``StoreConversion/Validation``).
struct RulesOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Writing records into a store: list objects that break a rule of the model in this NDJSON file, leave them out and go on (exit 1).",
            valueName: "file"))
    var rejects: String?

    @Flag(
        name: .long,
        help: "Writing records into a store: do not check the model's rules (a raw copy; `decant validate` checks later).")
    var noValidate = false

    func validate() throws {
        guard !(noValidate && rejects != nil) else { throw ValidationError("--rejects goes with validation, not with --no-validate") }
    }

    /// The settings these options ask for.
    var settings: StoreConversion.Validation {
        StoreConversion.Validation(checksRules: !noValidate, rejects: rejects.map { URL(fileURLWithPath: $0) })
    }
}
