import ArgumentParser
import Foundation
import WallControl
import WallProtocol

/// `wallctl snapshot --out wall.png`: what every screen shows, composed in its tile's place.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save each node's current frame, composed in its tile's place on the canvas, as a PNG.")

    @OptionGroup var options: WallOptions

    @Option(help: "The PNG file to write.")
    var out: String

    @Option(help: "Scale of the picture relative to the canvas (0.25 makes a 4K canvas 960 px wide).")
    var scale: Double = 0.5

    func validate() throws {
        guard scale.isFinite, scale > 0, scale <= 4 else {
            throw ValidationError("--scale must be in (0, 4], got \(scale)")
        }
    }

    func run() async throws {
        try await options.withWall { wall in
            let canvas = wall.config.canvas
            let scale = self.scale
            @Sendable func scaled(_ value: Int) -> Int { max(1, Int((Double(value) * scale).rounded())) }
            let tiles = try await wall.everyNode { client throws(ControlError) in
                let tile = wall.config.node(client.id)!.tile
                return try await client.snapshot(width: scaled(tile.width), height: scaled(tile.height))
            }
            var image = PNGImage(width: scaled(canvas.width), height: scaled(canvas.height))
            for (id, frame) in tiles {
                let tile = wall.config.node(id)!.tile
                image.paste(frame.rgb, width: frame.width, height: frame.height, at: scaled(tile.x), y: scaled(tile.y))
            }
            let data = try image.encoded()
            do {
                try data.write(to: URL(fileURLWithPath: out))
            } catch {
                throw ControlError.config("cannot write \(out): \(error.localizedDescription)")
            }
            Output.line(
                "snapshot: \(tiles.count) tiles composed into \(image.width)x\(image.height), written to \(out)")
        }
    }
}
