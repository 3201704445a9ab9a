import ArgumentParser

/// Flags every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Show the causes of errors. Repeat for more detail.")
    var verbose: Int

    @Flag(help: "Print one JSON document on standard output instead of text.")
    var json = false
}
