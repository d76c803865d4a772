import GroundTruth
import LockstepTime

/// One frame seen by the ground-truth receiver: which node's video sink sent it, the frame number
/// its pixels carry (mod 4096), and when it arrived on CLOCK_MONOTONIC.
public struct GroundTruthArrival: Sendable, Hashable {
    public var node: String
    /// The frame code, `round(PTS × fps) mod 4096` (`FrameCode`).
    public var code: Int
    /// Arrival on CLOCK_MONOTONIC: a clock the nodes' reports never touch.
    public var arrivedAt: MediaTime

    public init(node: String, code: Int, arrivedAt: MediaTime) {
        self.node = node
        self.code = code
        self.arrivedAt = arrivedAt
    }

    /// Decodes a `FrameReceiver` datagram, a `width` × `height` I420 picture, from `node`; nil when
    /// the picture carries no readable code (damaged, or not a frame-code clip).
    public init?(decoding arrival: FrameArrival, node: String, width: Int, height: Int) {
        guard let code = FrameCode.decode(i420: arrival.payload, width: width, height: height) else { return nil }
        self.init(node: node, code: code, arrivedAt: arrival.arrivedAt)
    }
}
