import ArgumentParser
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
        guard parsed != nil else { throw ValidationError("the rate must be a whole number or a fraction such as 1/2, got \(rate)") }
    }

    private var parsed: PlaybackRate? {
        let parts = rate.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let numerator = Int32(parts[0]) else { return nil }
        let denominator = parts.count == 2 ? Int32(parts[1]) : 1
        guard let denominator, denominator > 0 else { return nil }
        return PlaybackRate(numerator, denominator)
    }

    func run() async throws {
        guard let parsed else { return }
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            try await control.carryOut("rate", lead: edit.leadTime) { _, _ in .rate(parsed) }
        }
    }
}
