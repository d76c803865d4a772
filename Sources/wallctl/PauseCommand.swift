import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl pause`: a timeline edit.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause every screen at one master time, all on the same frame (a timeline edit the nodes keep).")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.pause.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
