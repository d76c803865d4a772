import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl previous`: a timeline edit.
struct PreviousCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "previous",
        abstract: "Move every screen to the start of the previous playlist entry at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.previous.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
