import ArgumentParser
import LockstepTime
import WallProtocol

/// `wallctl seek`: every node moves to the same item time, paused and prerolled there.
struct SeekCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Pause every node and move it exactly to an item time, prerolled for `wallctl resume`.")

    @OptionGroup var options: WallOptions

    @Argument(help: "The item time, in seconds.")
    var seconds: Double

    func validate() throws {
        guard seconds.isFinite, seconds >= 0 else { throw ValidationError("the time must be zero or more seconds") }
    }

    func run() async throws {
        try await options.withWall { wall in
            let target = MediaTime(seconds: seconds, preferredTimescale: 1_000_000)
            _ = try await wall.everyNode { client throws(ControlError) in
                try await client.command(ControlPath.seek, PositionRequest(itemTime: target))
            }
            Output.line("all \(wall.clients.count) nodes paused at \(target), prerolled")
        }
    }
}
