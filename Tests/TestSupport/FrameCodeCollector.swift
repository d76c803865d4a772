import GroundTruth
import LockstepLocks
import LockstepTime

/// Ground truth for a wall test: a kernel-stamped receiver per node, each frame's code read from
/// its pixels (an 8x8 I420 sink), kept in order of arrival per node; and every frame that carries
/// no code (black, a still, the test card), by the mean of each plane.
public final class FrameCodeCollector: Sendable {
    public typealias Frame = (code: Int, at: MediaTime)

    /// A frame that carries no code: its planes' means, and whether each plane is one flat level.
    public struct Picture: Sendable {
        public var y: Double
        public var u: Double
        public var v: Double
        public var flat: Bool
        public var at: MediaTime

        /// Black as a sink gets it: luma at the foot of video range, no colour.
        public var isBlack: Bool { flat && y < 20 && abs(u - 128) < 4 && abs(v - 128) < 4 }
    }

    private final class Store: Sendable {
        let frames: Mutex<[[Frame]]>
        let pictures: Mutex<[[Picture]]>
        init(count: Int) {
            frames = Mutex([[Frame]](repeating: [], count: count))
            pictures = Mutex([[Picture]](repeating: [], count: count))
        }
    }
    private let receiver: FrameReceiver
    private let store: Store
    private let collecting: Task<Void, Never>

    public init(count: Int) throws {
        let receiver = try FrameReceiver(count: count)
        let store = Store(count: count)
        self.receiver = receiver
        self.store = store
        collecting = Task {
            for await arrival in receiver.arrivals {
                guard let index = receiver.ports.firstIndex(of: arrival.port) else { continue }
                if let code = FrameCode.decode(i420: arrival.payload, width: 8, height: 8) {
                    store.frames.withLock { $0[index].append((code, arrival.arrivedAt)) }
                } else if let picture = Self.picture(i420: Array(arrival.payload), at: arrival.arrivedAt) {
                    store.pictures.withLock { $0[index].append(picture) }
                }
            }
        }
    }

    /// The port node `index`'s sink sends to.
    public var ports: [UInt16] { receiver.ports }

    /// Every node's frames so far.
    public var seen: [[Frame]] { store.frames.withLock { $0 } }

    /// Every node's frames with no code so far.
    public var pictures: [[Picture]] { store.pictures.withLock { $0 } }

    /// Forgets what arrived so far.
    public func clear() {
        store.frames.withLock { $0 = $0.map { _ in [] } }
        store.pictures.withLock { $0 = $0.map { _ in [] } }
    }

    /// An 8x8 I420 frame's planes, or nil when it is not one.
    private static func picture(i420 bytes: [UInt8], at: MediaTime) -> Picture? {
        guard bytes.count == 64 + 16 + 16 else { return nil }
        let planes = [bytes[0..<64], bytes[64..<80], bytes[80..<96]]
        let means = planes.map { Double($0.reduce(0) { $0 + Int($1) }) / Double($0.count) }
        let flat = zip(planes, means).allSatisfy { plane, mean in plane.allSatisfy { abs(Double($0) - mean) <= 3 } }
        return Picture(y: means[0], u: means[1], v: means[2], flat: flat, at: at)
    }

    public func stop() {
        receiver.stop()
        collecting.cancel()
    }
}
