import ArgumentParser

/// `wallctl clock`: the master clock's commands.
struct ClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Run or probe a master clock server (Lockstep's and GStreamer's net time formats).",
        subcommands: [ClockServeCommand.self, ClockProbeCommand.self]
    )
}
