import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl start`: the simplest timeline, the config's media.
struct StartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the config's media on every node at one master time, as a timeline they keep.",
        discussion: """
            The simplest timeline: the config's media (once, or looping as the config's loop says), from --at \
            seconds into it, at --rate. Like every command it is a new version of the wall's timeline: every \
            node stores it, and one that restarts comes back to it where the wall is. Waits (up to --timeout) \
            for every node's clock and media first; exits 0 once every screen is in step.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(help: "Item time to start at, in seconds.")
    var at: Double = 0

    @Option(help: "Playback rate, a whole number or a fraction: 1, 1/2, 2 (1/16 to 16).")
    var rate: String = "1"

    func validate() throws {
        guard at.isFinite, at >= 0 else { throw ValidationError("--at must be zero or more seconds, got \(at)") }
        guard PlaybackRate(parsing: rate) != nil else {
            throw ValidationError("--rate must be a whole number or a fraction such as 1/2, got \(rate)")
        }
    }

    func run() async throws {
        guard let rate = PlaybackRate(parsing: rate) else { return }
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            let media: String
            switch wall.config.media {
            case .shared(let path): media = path
            case .perNode(let template): media = template
            }
            let entries = try await control.entries([PlaylistItemConfig(media: media)])
            let entry = entries[0]
            let offset = MediaTime(seconds: at, preferredTimescale: 1_000_000)
            guard offset < entry.duration else {
                throw ValidationError(
                    "--at \(at) s is past the end of \(media), which plays for \(entry.duration.seconds) s")
            }
            try await control.play(
                "start", playlist: Playlist(entries: entries, loops: wall.config.loop),
                origin: PlaylistPoint(entry: 0, offset: offset), rate: rate,
                lead: edit.leadTime)
        }
    }
}

extension PlaybackRate {
    /// "1", "-1", "1/2": a whole number or a fraction with a positive denominator.
    init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let numerator = Int32(parts[0]) else { return nil }
        let denominator = parts.count == 2 ? Int32(parts[1]) : 1
        guard let denominator, denominator > 0 else { return nil }
        self.init(numerator, denominator)
    }
}
