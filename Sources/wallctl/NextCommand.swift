import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl next`: a timeline edit.
struct NextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next", abstract: "Move every screen to the start of the next playlist entry at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.next.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
