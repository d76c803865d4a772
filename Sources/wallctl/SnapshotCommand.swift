import ArgumentParser
import Foundation
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl snapshot --out wall.png`: what every screen shows at one master time, composed in each
/// tile's place.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save the frame every node shows at one master time, composed on the canvas, as a PNG.",
        discussion: """
            Every node is asked for the frame on its screen at the same master-clock time, a little \
            ahead (--lead), and waits for it: the tiles show one moment of the wall, not frames fetched \
            one after another. The PNG's text chunks and the output name that time and each node's frame \
            (its time in the item); a wall in lockstep shows one frame time on every node.
            """)

    @OptionGroup var options: WallOptions

    @Option(help: "The PNG file to write.")
    var out: String

    @Option(help: "Scale of the picture relative to the canvas (0.25 makes a 4K canvas 960 px wide).")
    var scale: Double = 0.5

    @Option(help: "Seconds ahead of the master clock's now that the nodes copy their frames.")
    var lead: Double = 0.5

    func validate() throws {
        guard scale.isFinite, scale > 0, scale <= 4 else {
            throw ValidationError("--scale must be in (0, 4], got \(scale)")
        }
        guard lead.isFinite, lead >= 0.05, lead <= 5 else {
            throw ValidationError("--lead must be 0.05 to 5 seconds, got \(lead)")
        }
    }

    func run() async throws {
        try await options.withWall { wall in
            let canvas = wall.config.canvas
            let scale = self.scale
            // A position scales to 0 and up; a size to at least one pixel. (Clamping positions too put
            // every tile at x, y = 1 for a tile at 0: a black top row and left column.)
            @Sendable func position(_ value: Int) -> Int { Int((Double(value) * scale).rounded()) }
            @Sendable func scaled(_ value: Int) -> Int { max(1, position(value)) }
            // The moment: the latest of the nodes' master times (each corrected by half its round
            // trip), plus the lead.
            let statuses = try await wall.everyNode { client throws(ControlError) in try await client.status() }
            let now = statuses.values.compactMap { reply -> MediaTime? in
                reply.status.masterTime.map { $0 + MediaTime(nanoseconds: (reply.roundTrip.nanoseconds ?? 0) / 2) }
            }.max()
            guard let now else { throw ControlError.config("no node knows the master clock's time yet") }
            let at = now + MediaTime(seconds: lead, preferredTimescale: 1_000_000_000)
            let tiles = try await wall.everyNode { client throws(ControlError) in
                let tile = wall.config.node(client.id)!.tile
                return try await client.snapshot(width: scaled(tile.width), height: scaled(tile.height), at: at)
            }
            var image = PNGImage(width: scaled(canvas.width), height: scaled(canvas.height))
            image.text.append(("Lockstep master time ns", "\(at.nanoseconds ?? 0)"))
            for (id, frame) in tiles.sorted(by: { $0.key < $1.key }) {
                let tile = wall.config.node(id)!.tile
                image.paste(
                    frame.rgb, width: frame.width, height: frame.height, at: position(tile.x), y: position(tile.y))
                image.text.append(("Lockstep frame \(id) ns", "\(frame.presentationTimestamp?.nanoseconds ?? -1)"))
            }
            let data = try image.encoded()
            do {
                try data.write(to: URL(fileURLWithPath: out))
            } catch {
                throw ControlError.config("cannot write \(out): \(error.localizedDescription)")
            }
            Output.line(Self.summary(tiles, at: at))
            Output.line(
                "snapshot: \(tiles.count) tiles composed into \(image.width)x\(image.height), written to \(out)")
        }
    }

    /// Which frame each node showed at `at`, and whether they agree.
    private static func summary(_ tiles: [String: NodeClient.Snapshot], at: MediaTime) -> String {
        func seconds(_ time: MediaTime?) -> String { time.map { String(format: "%.3f s", $0.seconds) } ?? "-" }
        let frames = Set(tiles.values.map(\.presentationTimestamp))
        var lines = ["snapshot at master time \(String(format: "%.6f", at.seconds)) s:"]
        for (id, frame) in tiles.sorted(by: { $0.key < $1.key }) {
            let late = frame.copiedAt.map { String(format: ", copied %.1f ms after", ($0 - at).seconds * 1e3) } ?? ""
            lines.append("  \(id): frame at \(seconds(frame.presentationTimestamp)) in its item\(late)")
        }
        lines.append(
            frames.count == 1
                ? "  one frame time on all \(tiles.count) nodes"
                : "  \(frames.count) different frame times across \(tiles.count) nodes")
        return lines.joined(separator: "\n")
    }
}
