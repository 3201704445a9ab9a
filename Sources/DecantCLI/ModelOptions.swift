import ArgumentParser
import Decant
import Foundation

/// `--model` and `--version-order`: the model bundle a command reads, its versions in the order given (`inspect`,
/// `validate`, and through ``MigrationOptions`` `plan`, `migrate` and `seed`).
struct ModelOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "The model bundle (.xcdatamodeld, .momd, …) with its versions, or a Core Data store whose model to use.")
    var model: String?

    @Option(name: .long, help: versionOrderHelp)
    var versionOrder: String?

    /// The bundle, in the order `--version-order` gives; nil without `--model`.
    func bundle() throws -> ModelBundle? {
        try model.map { try loadBundle($0, versionOrder: versionOrder) }
    }
}

/// Loads the model bundle at `path`, its versions in the order `versionOrder` gives (names separated by commas, or
/// a file with one name a line) when given.
func loadBundle(_ path: String, versionOrder: String?) throws -> ModelBundle {
    let bundle = try ModelBundle.load(modelOrStore: URL(fileURLWithPath: path))
    guard let versionOrder else { return bundle }
    var list = versionOrder
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: versionOrder, isDirectory: &isDirectory), !isDirectory.boolValue {
        do {
            list = try String(contentsOfFile: versionOrder, encoding: .utf8)
        } catch {
            throw DecantError(
                .ioError, "cannot read the version order", at: Location(path: versionOrder), underlyingError: error)
        }
    }
    return try bundle.ordered(as: VersionOrder.names(inList: list))
}

/// `--version-order`'s help.
let versionOrderHelp = ArgumentHelp(
    "The versions' order, oldest first: names separated by commas, or a file with one name a line (default: Xcode's numbering).")

