import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol

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
            shows a screen in the wrong place. Only between shows: a node that shows media refuses \
            (wallctl stop first). Loading or playing ends the card early.
            """)

    @OptionGroup var options: WallOptions

    @Option(help: "How long the card stays up, in seconds (1 to 600).")
    var seconds: Double = 10

    func validate() throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 600 else {
            throw ValidationError("--seconds must be 1 to 600, got \(seconds)")
        }
    }

    func run() async throws {
        let duration = MediaTime(seconds: seconds, preferredTimescale: 1000).convertScale(MediaTime.nanosecondTimescale)
        try await options.withWall { wall in
            _ = try await wall.everyNode { client throws(ControlError) in
                try await client.command(ControlPath.identify, IdentifyRequest(duration: duration))
            }
            let count = wall.config.nodes.count
            Output.line(
                "test card on \(wall.clients.count) screen\(wall.clients.count == 1 ? "" : "s") for \(seconds) s:")
            for (index, node) in wall.config.nodes.enumerated() where wall.clients.contains(where: { $0.id == node.id })
            {
                Output.line(
                    "  \(node.id): screen \(index + 1) of \(count), tile \(node.tile.geometry)"
                )
            }
        }
    }
}
