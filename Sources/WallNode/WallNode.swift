import ArgumentParser
import LockstepCLI
import WallPlayer

/// `wallnode`: one screen of a Lockstep video wall.
@main
struct WallNode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallnode",
        abstract: "Plays one screen of a Lockstep video wall.",
        version: LockstepVersion.current,
        subcommands: [Run.self, Probe.self, Play.self, Thumbnails.self])

    /// ArgumentParser's `main`, then a wait for the pipelines still stopping on their own threads
    /// (`PipelineTeardowns`), so that `exit` does not unload what they use.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            PipelineTeardowns.wait()
        } catch {
            PipelineTeardowns.wait()
            exit(withError: error)
        }
    }
}
