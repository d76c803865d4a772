import ArgumentParser
import LockstepCLI

/// `wallnode`: one screen of a Lockstep video wall.
@main
struct WallNode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallnode",
        abstract: "Plays one screen of a Lockstep video wall.",
        version: LockstepVersion.current,
        subcommands: [Run.self, Probe.self, Play.self, Thumbnails.self])
}
