import ArgumentParser
import LockstepTime
import WallControl
import WallTimeline

/// `wallctl identify`: every screen shows which node it is, for a while.
struct IdentifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identify",
        abstract:
            "Show a test card on every screen: its node id, screen number and tile, an outline in its own colour, "
            + "the wall's alignment grid and colour bars.",
        discussion: """
            The grid, the two diagonals of the whole wall and the circle around its centre run on from \
            one screen into the next when the screens are placed as configured: a break in a line \
            shows a screen in the wrong place. A timeline edit like every command: the card shows from one \
            master time for --seconds, then what was on before comes back from where it was (a show held \
            meanwhile); a node restarted during it shows it too.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(help: "How long the card stays up, in seconds (1 to 600).")
    var seconds: Double = 10

    func validate() throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 600 else {
            throw ValidationError("--seconds must be 1 to 600, got \(seconds)")
        }
    }

    func run() async throws {
        let duration = MediaTime(seconds: seconds, preferredTimescale: 1000)
        try await options.withWall { wall in
            try await WallVerb.identify(duration: duration).carryOut(
                on: TimelineControl(wall: wall), lead: edit.leadTime)
            let count = wall.config.nodes.count
            for (index, node) in wall.config.nodes.enumerated() where wall.clients.contains(where: { $0.id == node.id })
            {
                Output.line("  \(node.id): screen \(index + 1) of \(count), tile \(node.tile.geometry)")
            }
        }
    }
}
