import GroundTruth
import LockstepLocks
import LockstepTime

/// Ground truth for a wall test: a kernel-stamped receiver per node, each frame's code read from
/// its pixels (an 8x8 I420 sink), kept in order of arrival per node.
public final class FrameCodeCollector: Sendable {
    public typealias Frame = (code: Int, at: MediaTime)
    private final class Store: Sendable {
        let frames: Mutex<[[Frame]]>
        init(count: Int) { frames = Mutex([[Frame]](repeating: [], count: count)) }
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
                guard let index = receiver.ports.firstIndex(of: arrival.port),
                    let code = FrameCode.decode(i420: arrival.payload, width: 8, height: 8)
                else { continue }
                store.frames.withLock { $0[index].append((code, arrival.arrivedAt)) }
            }
        }
    }

    /// The port node `index`'s sink sends to.
    public var ports: [UInt16] { receiver.ports }

    /// Every node's frames so far.
    public var seen: [[Frame]] { store.frames.withLock { $0 } }

    /// Forgets what arrived so far.
    public func clear() { store.frames.withLock { $0 = $0.map { _ in [] } } }

    public func stop() {
        receiver.stop()
        collecting.cancel()
    }
}
