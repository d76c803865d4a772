import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl rate`: a timeline edit.
struct RateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate", abstract: "Change every screen's playback rate at one master time.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Argument(help: "The rate as a fraction or whole number: 1, 1/2, 2, -1 (1/16 to 16 in magnitude).")
    var rate: String

    func validate() throws {
        guard PlaybackRate(parsing: rate) != nil else {
            throw ValidationError("the rate must be a whole number or a fraction such as 1/2, got \(rate)")
        }
    }

    func run() async throws {
        guard let parsed = PlaybackRate(parsing: rate) else { return }
        try await options.withWall { wall in
            try await TimelineControl(wall: wall).carryOut("rate", lead: edit.leadTime) { _, _ in .rate(parsed) }
        }
    }
}
