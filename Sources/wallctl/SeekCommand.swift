import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl seek`: every node moves to the same item time, paused and prerolled there.
struct SeekCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Pause every node and move it exactly to an item time, prerolled for `wallctl resume`.",
        discussion: """
            With a timeline (wallctl play), the seek is a timeline edit: every screen moves to that item time \
            of the entry (--entry, or the one playing) at one master time, and keeps playing or paused.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(help: "With a timeline: the playlist entry to seek in (default: the one the wall is in).")
    var entry: Int?

    @Argument(help: "The item time, in seconds.")
    var seconds: Double

    func validate() throws {
        guard seconds.isFinite, seconds >= 0 else { throw ValidationError("the time must be zero or more seconds") }
    }

    func run() async throws {
        try await options.withWall { wall in
            let target = MediaTime(seconds: seconds, preferredTimescale: 1_000_000)
            let control = TimelineControl(wall: wall)
            if try await control.hasTimeline() {
                return try await control.carryOut("seek", lead: edit.leadTime) { timeline, at in
                    .seek(entry: entry ?? timeline.position(at: at).entryIndex, itemTime: target)
                }
            }
            _ = try await wall.everyNode { client throws(ControlError) in
                try await client.command(ControlPath.seek, PositionRequest(itemTime: target))
            }
            Output.line("all \(wall.clients.count) nodes paused at \(target), prerolled")
        }
    }
}
