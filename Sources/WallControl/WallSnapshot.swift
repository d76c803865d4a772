import Foundation
import LockstepTime
import WallProtocol

/// What every screen shows at one master time, composed in each tile's place: `wallctl snapshot`.
public struct WallSnapshot: Sendable {
    /// The master time every node copied its frame at.
    public let at: MediaTime
    /// Each node's frame, by node id.
    public let tiles: [String: NodeClient.Snapshot]
    /// The canvas at the snapshot's scale, every tile pasted in its place; its text chunks name
    /// the master time and each node's frame.
    public let image: PNGImage

    /// Asks every node for the frame on its screen at one master time `lead` ahead of the latest of
    /// their master times (each corrected by half its round trip), and composes the tiles on the
    /// canvas at `scale`.
    public static func take(_ wall: Wall, scale: Double, lead: MediaTime) async throws -> WallSnapshot {
        let canvas = wall.config.canvas
        // A position scales to 0 and up; a size to at least one pixel. (Clamping positions too put
        // every tile at x, y = 1 for a tile at 0: a black top row and left column.)
        @Sendable func position(_ value: Int) -> Int { Int((Double(value) * scale).rounded()) }
        @Sendable func scaled(_ value: Int) -> Int { max(1, position(value)) }
        let statuses = try await wall.everyNode { client throws(ControlError) in try await client.status() }
        let now = statuses.values.compactMap { reply -> MediaTime? in
            reply.status.masterTime.map { $0 + MediaTime(nanoseconds: (reply.roundTrip.nanoseconds ?? 0) / 2) }
        }.max()
        guard let now else { throw ControlError.config("no node knows the master clock's time yet") }
        let at = now + lead
        let tiles = try await wall.everyNode { client throws(ControlError) in
            guard let tile = wall.config.node(client.id)?.tile else { throw .unknownNodes([client.id]) }
            return try await client.snapshot(width: scaled(tile.width), height: scaled(tile.height), at: at)
        }
        var image = PNGImage(width: scaled(canvas.width), height: scaled(canvas.height))
        image.text.append(("Lockstep master time ns", "\(at.nanoseconds ?? 0)"))
        for (id, frame) in tiles.sorted(by: { $0.key < $1.key }) {
            guard let tile = wall.config.node(id)?.tile else { continue }
            image.paste(frame.rgb, width: frame.width, height: frame.height, at: position(tile.x), y: position(tile.y))
            image.text.append(("Lockstep frame \(id) ns", "\(frame.presentationTimestamp?.nanoseconds ?? -1)"))
        }
        return WallSnapshot(at: at, tiles: tiles, image: image)
    }

    /// Which frame each node showed at the snapshot's time, and whether they agree.
    public var summary: String {
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
