import ArgumentParser
import Decant
import Foundation

/// The options of every command that plans a migration (`migrate`, `seed`, `plan`): the model and its version
/// order, the destination version, the mappings and how the run treats what breaks a rule.
struct MigrationOptions: ParsableArguments {
    @OptionGroup(title: "Model") var modelOptions: ModelOptions

    @Option(name: .customLong("to-version"), help: "The destination version's name (default: the current version).")
    var destinationVersion: String?

    @Option(
        name: .long,
        help: "A Decant mapping file (YAML or JSON), an Xcode .xcmappingmodel or .cdm, or a folder of them; repeat for several hops.")
    var mapping: [String] = []

    @Flag(name: .long, help: "Do not search the model's project for Xcode mapping models (use only --mapping).")
    var noMappingSearch = false

    @Option(name: .long, help: "List objects that break a rule in this NDJSON file and go on.")
    var rejects: String?

    @Option(
        name: .long,
        help: "What to do with externally stored values whose file is missing (default: keep the reference, as Core Data does, and warn once).")
    var missingExternalData: MissingExternalDataPolicy = .keep

    @Flag(
        name: .long,
        help: "Refuse objects that already broke a rule in the source too (default: carried over with a warning).")
    var strict = false

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "A value a mapping file reads as $param.NAME (a policy's value from the app's environment); repeat for several.",
            valueName: "NAME=VALUE"))
    var parameters: [String] = []

    /// The bundle, in the order `--version-order` gives; nil without `--model`.
    func bundle() throws -> ModelBundle? { try modelOptions.bundle() }

    /// The library's migration settings; `--model` is required. The project that holds `--model` is searched for
    /// Xcode mapping models unless `--no-mapping-search`.
    func settings() throws -> StoreMigration.Options {
        guard let model = modelOptions.model, let bundle = try bundle() else { throw ValidationError("give the model with --model") }
        var options = StoreMigration.Options(bundle: bundle, destinationVersion: destinationVersion)
        options.modelURL = URL(fileURLWithPath: model)
        try options.loadMappings(from: mapping.map { URL(fileURLWithPath: $0) })
        options.formatOptions.missingExternalData = missingExternalData
        options.rejects = rejects.map { URL(fileURLWithPath: $0) }
        options.strict = strict
        options.searchesForMappings = !noMappingSearch
        for parameter in parameters {
            guard let equals = parameter.firstIndex(of: "="), equals != parameter.startIndex else {
                throw ValidationError("--param takes NAME=VALUE, not '\(parameter)'")
            }
            options.functions.parameters[String(parameter[..<equals])] = String(parameter[parameter.index(after: equals)...])
        }
        return options
    }

    /// ``settings()`` reading the input with `input`'s format options and, when given, writing the output with
    /// `output`'s.
    func settings(input: InputFormatOptions, output: OutputFormatOptions? = nil) throws -> StoreMigration.Options {
        var options = try settings()
        options.inputFormat = input.from
        try input.apply(to: &options.formatOptions)
        if let output {
            options.outputFormat = output.to
            output.apply(to: &options.formatOptions)
        }
        return options
    }
}
