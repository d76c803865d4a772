import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl stop`: a timeline edit.
struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the show at one master time: every screen shows its still (the config's still) or black.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.stop.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
