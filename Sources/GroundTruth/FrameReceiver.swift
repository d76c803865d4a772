import LockstepLocks
import LockstepNet
import LockstepTime

/// One datagram from a node's video sink: a tiny frame, with when it arrived.
public struct FrameArrival: Sendable, Hashable {
    /// The UDP port it arrived on: one port per node.
    public let port: UInt16
    /// The payload: a small raw I420 picture.
    public let payload: [UInt8]
    /// Arrival on CLOCK_MONOTONIC, from the kernel's receive timestamp: the moment the sender's
    /// `sendto` handed it to loopback, free of any receiving thread's wake-up delay.
    public let arrivedAt: MediaTime
}

/// Receives the frames that nodes' video sinks send at the moment they render
/// (`... ! udpsink sync=true`), on one loopback port per node, and timestamps each in the kernel.
///
/// All nodes on one machine share CLOCK_MONOTONIC, so arrival times of the same frame from two
/// nodes differ exactly by how far apart the nodes presented it: ground truth that does not
/// trust what the nodes say about themselves.
public final class FrameReceiver: Sendable {
    /// The ports receiving, in the order asked for.
    public let ports: [UInt16]
    private let sockets: [UDPSocket]
    private let poller: Poller
    private let thread = Mutex<DedicatedThread?>(nil)
    private let continuation: AsyncStream<FrameArrival>.Continuation
    /// Every frame received, in arrival order, until `stop()`.
    public let arrivals: AsyncStream<FrameArrival>

    /// Binds `count` UDP sockets on `address` (127.0.0.1 by default; its port is ignored), on the
    /// given ports or ports the kernel chooses.
    public init(count: Int, ports requested: [UInt16]? = nil, address: SocketAddress = .ipv4Loopback(port: 0))
        throws(NetworkError)
    {
        var sockets: [UDPSocket] = []
        var bound: [UInt16] = []
        for index in 0..<count {
            let socket = try UDPSocket.bound(to: address.withPort(requested.map { $0[index] } ?? 0))
            try socket.enableReceiveTimestamps()
            sockets.append(socket)
            bound.append(socket.localAddress?.port ?? 0)
        }
        self.sockets = sockets
        self.ports = bound
        poller = try Poller()
        (arrivals, continuation) = AsyncStream<FrameArrival>.makeStream(bufferingPolicy: .unbounded)
        let receiving = try DedicatedThread(name: "frame-receiver") { [sockets, bound, poller, continuation] in
            Self.receive(sockets: sockets, ports: bound, poller: poller, into: continuation)
        }
        thread.withLock { $0 = receiving }
    }

    deinit {
        stop()
    }

    /// Stops receiving and finishes `arrivals`.
    public func stop() {
        guard
            let running = thread.withLock({ state -> DedicatedThread? in
                defer { state = nil }
                return state
            })
        else { return }
        poller.wake()
        running.join()
        continuation.finish()
    }

    private static func receive(
        sockets: [UDPSocket], ports: [UInt16], poller: Poller, into continuation: AsyncStream<FrameArrival>.Continuation
    ) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let descriptors = sockets.map(\.descriptor)
        while true {
            guard let readiness = try? poller.wait(for: descriptors, timeoutNanoseconds: nil), !readiness.woken else {
                return
            }
            for (index, socket) in sockets.enumerated() where readiness.readable[index] {
                while let datagram = buffer.withUnsafeMutableBytes({ try? socket.receive(into: $0) }) ?? nil {
                    continuation.yield(
                        FrameArrival(
                            port: ports[index], payload: Array(buffer[0..<datagram.count]),
                            arrivedAt: MediaTime(nanoseconds: datagram.monotonicNanoseconds)))
                }
            }
        }
    }
}
