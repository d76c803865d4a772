import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl goto`: a timeline edit.
struct GoToCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goto", abstract: "Move every screen to the start of a playlist entry at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Argument(help: "The entry, counted from 0.")
    var entry: Int

    func run() async throws {
        let entry = self.entry
        try await options.withWall { wall in
            try await TimelineControl(wall: wall).carryOut("goto", lead: edit.leadTime) { _, _ in .goTo(entry: entry) }
        }
    }
}
