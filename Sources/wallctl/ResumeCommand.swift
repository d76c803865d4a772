import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl resume`: a timeline edit.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Play on from where the wall is paused or stopped, every screen at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            try await WallVerb.resume.carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
