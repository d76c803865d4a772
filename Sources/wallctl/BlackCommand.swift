import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl black`: a timeline edit.
struct BlackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "black", abstract: "Every screen black at one master time, until the next command.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.black.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
