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
            let snapshot = try await WallSnapshot.take(
                wall, scale: scale, lead: MediaTime(seconds: lead, preferredTimescale: 1_000_000_000))
            let data = try snapshot.image.encoded()
            do {
                try data.write(to: URL(fileURLWithPath: out))
            } catch {
                throw ControlError.config("cannot write \(out): \(error.localizedDescription)")
            }
            Output.line(snapshot.summary)
            Output.line(
                "snapshot: \(snapshot.tiles.count) tiles composed into \(snapshot.image.width)x\(snapshot.image.height), "
                    + "written to \(out)")
        }
    }
}
