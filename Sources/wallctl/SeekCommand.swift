import ArgumentParser
import LockstepTime
import WallControl
import WallTimeline

/// `wallctl seek`: a timeline edit.
struct SeekCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Move every screen to an item time at one master time, playing on or paused as the wall was.",
        discussion: "The item time is in the entry given by --entry, or the one the wall is in at the edit's time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(help: "The playlist entry to seek in, counted from 0 (default: the one the wall is in).")
    var entry: Int?

    @Argument(help: "The item time, in seconds.")
    var seconds: Double

    func validate() throws {
        guard seconds.isFinite, seconds >= 0 else { throw ValidationError("the time must be zero or more seconds") }
        if let entry, entry < 0 { throw ValidationError("--entry counts from 0, got \(entry)") }
    }

    func run() async throws {
        let target = MediaTime(seconds: seconds, preferredTimescale: 1_000_000)
        let entry = self.entry
        try await options.withWall { wall in
            try await WallVerb.seek(entry: entry, itemTime: target).carryOut(
                on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
