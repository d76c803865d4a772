import LockstepTime
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

/// Why a receiver could not start.
public enum GroundTruthError: Error, Hashable, CustomStringConvertible {
    case socket(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .socket(let operation, let code):
            return "frame receiver cannot \(operation): \(String(cString: strerror(code)))"
        }
    }
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
    private let descriptors: [Int32]
    private let stopPipe: (read: Int32, write: Int32)
    private let thread = Mutex<pthread_t?>(nil)
    private let continuation: AsyncStream<FrameArrival>.Continuation
    /// Every frame received, in arrival order, until `stop()`.
    public let arrivals: AsyncStream<FrameArrival>

    /// Binds `count` UDP sockets on 127.0.0.1 (ports chosen by the kernel when `ports` is nil).
    public init(count: Int, ports requested: [UInt16]? = nil) throws(GroundTruthError) {
        var descriptors: [Int32] = []
        var bound: [UInt16] = []
        do {
            for index in 0..<count {
                let (fd, port) = try Self.bind(port: requested.map { $0[index] } ?? 0)
                descriptors.append(fd)
                bound.append(port)
            }
        } catch {
            descriptors.forEach { close($0) }
            throw error
        }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            descriptors.forEach { close($0) }
            throw .socket(operation: "create its stop pipe", errno: errno)
        }
        self.descriptors = descriptors
        self.ports = bound
        stopPipe = (pipeFDs[0], pipeFDs[1])
        (arrivals, continuation) = AsyncStream<FrameArrival>.makeStream(bufferingPolicy: .unbounded)
        start()
    }

    deinit {
        stop()
        descriptors.forEach { close($0) }
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Stops receiving and finishes `arrivals`.
    public func stop() {
        guard
            let running = thread.withLock({ state -> pthread_t? in
                defer { state = nil }
                return state
            })
        else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        pthread_join(running, nil)
        continuation.finish()
    }

    private static func bind(port: UInt16) throws(GroundTruthError) -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw .socket(operation: "open a UDP socket", errno: errno) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, socklen_t(MemoryLayout<Int32>.size))
        var buffer: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .socket(operation: "bind 127.0.0.1:\(port)", errno: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let created = pthread_create(
            &handle, nil,
            { context in
                let receiver = Unmanaged<FrameReceiver>.fromOpaque(context!).takeRetainedValue()
                receiver.receiveLoop()
                return nil
            }, box)
        if created == 0 {
            thread.withLock { $0 = handle }
        } else {
            Unmanaged<FrameReceiver>.fromOpaque(box).release()
            continuation.finish()
        }
    }

    private func receiveLoop() {
        var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        polls.append(pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var control = [UInt8](repeating: 0, count: 256)
        while true {
            guard poll(&polls, nfds_t(polls.count), -1) >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if polls.last!.revents != 0 { return }
            for index in descriptors.indices where polls[index].revents & Int16(POLLIN) != 0 {
                while let arrival = receive(on: index, buffer: &buffer, control: &control) {
                    continuation.yield(arrival)
                }
            }
        }
    }

    /// One datagram from socket `index`, without blocking; nil when none is waiting.
    private func receive(on index: Int, buffer: inout [UInt8], control: inout [UInt8]) -> FrameArrival? {
        var kernelTime: timespec?
        let count = buffer.withUnsafeMutableBytes { data -> Int in
            control.withUnsafeMutableBytes { controlBytes -> Int in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let received = recvmsg(descriptors[index], &message, Int32(MSG_DONTWAIT))
                    guard received >= 0 else { return -1 }
                    kernelTime = Self.timestamp(in: &message)
                    return received
                }
            }
        }
        guard count >= 0 else { return nil }
        let arrivedAt = kernelTime.map(Self.monotonic(fromRealtime:)) ?? LocalClock.monotonicNanoseconds()
        return FrameArrival(
            port: ports[index], payload: Array(buffer[0..<count]), arrivedAt: MediaTime(nanoseconds: arrivedAt))
    }

    private static func timestamp(in message: inout msghdr) -> timespec? {
        guard message.msg_controllen >= MemoryLayout<cmsghdr>.size, let control = message.msg_control else {
            return nil
        }
        var offset = 0
        while offset + MemoryLayout<cmsghdr>.size <= message.msg_controllen {
            let header = control.load(fromByteOffset: offset, as: cmsghdr.self)
            if header.cmsg_level == SOL_SOCKET, header.cmsg_type == SO_TIMESTAMPNS {
                let dataOffset = offset + ((MemoryLayout<cmsghdr>.size + 7) & ~7)
                return control.loadUnaligned(fromByteOffset: dataOffset, as: timespec.self)
            }
            let step = (Int(header.cmsg_len) + 7) & ~7
            guard step > 0 else { break }
            offset += step
        }
        return nil
    }

    /// A CLOCK_REALTIME kernel stamp on CLOCK_MONOTONIC, through the clocks' offset read now: the
    /// offset moves only as fast as NTP slews, nanoseconds over the microseconds since arrival.
    private static func monotonic(fromRealtime stamp: timespec) -> Int64 {
        var real = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        let monotonic = LocalClock.monotonicNanoseconds()
        let realNow = Int64(real.tv_sec) * 1_000_000_000 + Int64(real.tv_nsec)
        let stampNs = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
        return stampNs - (realNow - monotonic)
    }
}
