import ArgumentParser
import WallTimeline

/// `wallctl next`: a timeline edit.
struct NextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "next", abstract: "Move every screen to the start of the next playlist entry at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            let (timeline, at) = try await control.apply(.next, lead: edit.leadTime)
            TimelineControl.describe(timeline, at: at, what: "next")
            try await control.confirm(timeline, at: at)
        }
    }
}
