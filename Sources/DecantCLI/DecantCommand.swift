import ArgumentParser

@main
struct DecantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decant")
}
