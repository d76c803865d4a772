internal import CLockstepNetShims

#if canImport(Glibc)
    import Glibc
#endif

/// A UDP socket: a file descriptor closed when the last reference goes.
///
/// Receiving never blocks (threads wait for readiness with `Poller`), so one thread can serve several
/// sockets and be woken to stop. Sending and receiving are single system calls, safe from any thread.
public final class UDPSocket: Sendable {
    /// The file descriptor, for `Poller`.
    public let descriptor: Int32
    public let family: SocketAddress.Family

    /// A datagram as it was received.
    public struct Datagram: Sendable {
        /// The bytes stored: at most the buffer's capacity.
        public let count: Int
        /// The datagram's real length; larger than `count` when it did not fit the buffer.
        public let length: Int
        public let source: SocketAddress?
        /// When it arrived, on `CLOCK_MONOTONIC`: the kernel's receive stamp when there is one,
        /// otherwise the time `receive` returned.
        public let monotonicNanoseconds: Int64
        /// Whether `monotonicNanoseconds` is the kernel's stamp (free of scheduling latency).
        public let isKernelTimestamp: Bool
        /// The kernel's receive stamp on `CLOCK_REALTIME`, if there is one.
        public let realtimeNanoseconds: Int64?

        public var isTruncated: Bool { length > count }
    }

    /// A socket of `family`, not yet bound.
    public init(family: SocketAddress.Family) throws(NetworkError) {
        let descriptor = socket(family.systemValue, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw .systemCall(call: "socket", target: "a UDP socket (\(family))", errno: errno)
        }
        self.descriptor = descriptor
        self.family = family
        if family == .ipv6 {
            // IPv4 and IPv6 sockets on the same port must not collide: each family gets its own.
            var on: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// A socket bound to `address` (port 0 picks a free port).
    public static func bound(to address: SocketAddress) throws(NetworkError) -> UDPSocket {
        let socket = try UDPSocket(family: address.family)
        try socket.bind(to: address)
        return socket
    }

    deinit {
        close(descriptor)
    }

    public func bind(to address: SocketAddress) throws(NetworkError) {
        let result = address.withSockAddr { Glibc.bind(descriptor, $0, $1) }
        guard result == 0 else { throw .systemCall(call: "bind", target: address.description, errno: errno) }
    }

    /// Restricts the socket to one peer: the kernel then drops datagrams from anyone else.
    public func connect(to address: SocketAddress) throws(NetworkError) {
        let result = address.withSockAddr { Glibc.connect(descriptor, $0, $1) }
        guard result == 0 else { throw .systemCall(call: "connect", target: address.description, errno: errno) }
    }

    /// Has the kernel stamp each received datagram (`SO_TIMESTAMPNS`), so receive times exclude the
    /// time the receiving thread took to wake up.
    public func enableReceiveTimestamps() throws(NetworkError) {
        guard lockstep_net_enable_receive_timestamps(descriptor) == 0 else {
            throw .systemCall(call: "setsockopt(SO_TIMESTAMPNS)", target: localDescription, errno: errno)
        }
    }

    /// Marks every datagram the socket sends with `trafficClass` (`IP_TOS`, or `IPV6_TCLASS`) and
    /// queues them at its priority (`SO_PRIORITY`).
    public func mark(_ trafficClass: TrafficClass) throws(NetworkError) {
        var value = Int32(trafficClass.codePoint) << 2
        let size = socklen_t(MemoryLayout<Int32>.size)
        let marked =
            family == .ipv6
            ? setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_TCLASS, &value, size)
            : setsockopt(descriptor, Int32(IPPROTO_IP), IP_TOS, &value, size)
        guard marked == 0 else {
            throw .systemCall(
                call: "setsockopt(\(family == .ipv6 ? "IPV6_TCLASS" : "IP_TOS"))", target: localDescription,
                errno: errno)
        }
        var priority = trafficClass.socketPriority
        guard setsockopt(descriptor, SOL_SOCKET, SO_PRIORITY, &priority, size) == 0 else {
            throw .systemCall(call: "setsockopt(SO_PRIORITY)", target: localDescription, errno: errno)
        }
    }

    /// The DiffServ code point the socket marks its datagrams with.
    public var codePoint: UInt8? {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        let read =
            family == .ipv6
            ? getsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_TCLASS, &value, &size)
            : getsockopt(descriptor, Int32(IPPROTO_IP), IP_TOS, &value, &size)
        return read == 0 ? UInt8(truncatingIfNeeded: value >> 2) : nil
    }

    /// The address the socket is bound to.
    public var localAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage) : nil
    }

    private var localDescription: String { localAddress?.description ?? "UDP socket \(descriptor)" }

    /// Sends `bytes` to `address`, or to the connected peer when `address` is nil.
    ///
    /// - Returns: false when the kernel refused the datagram for a passing reason (buffer full, peer
    ///   port closed); such a datagram is lost as on any network.
    /// - Throws: for errors that will not pass (bad address family, socket closed).
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress? = nil) throws(NetworkError) -> Bool {
        let sent: Int
        if let address {
            sent = address.withSockAddr {
                sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, $1)
            }
        } else {
            sent = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        }
        if sent >= 0 { return true }
        let error = errno
        switch error {
        case EAGAIN, EWOULDBLOCK, ENOBUFS, ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EINTR, EPERM:
            return false
        default:
            throw .systemCall(call: "sendto", target: address?.description ?? localDescription, errno: error)
        }
    }

    /// Receives one waiting datagram into `buffer`, or returns nil when none is waiting.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> Datagram? {
        var storage = sockaddr_storage()
        var storageLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var kernelRealtime: Int64 = -1
        let length = lockstep_net_receive(
            descriptor, buffer.baseAddress, buffer.count, &storage, &storageLength, &kernelRealtime)
        guard length >= 0 else {
            let error = errno
            // A refused earlier send surfaces here on a connected socket; it is not this datagram's fault.
            if error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == ECONNREFUSED { return nil }
            throw .systemCall(call: "recvmsg", target: localDescription, errno: error)
        }
        let stamp = KernelTimestamp.monotonic(fromRealtime: kernelRealtime)
        return Datagram(
            count: min(length, buffer.count), length: length,
            source: storageLength > 0 ? SocketAddress(storage: storage) : nil,
            monotonicNanoseconds: stamp.monotonic, isKernelTimestamp: stamp.isKernel,
            realtimeNanoseconds: kernelRealtime >= 0 ? Int64(kernelRealtime) : nil)
    }
}

/// Converts kernel receive stamps, which Linux takes on `CLOCK_REALTIME`, to `CLOCK_MONOTONIC`.
enum KernelTimestamp {
    /// The largest age a converted stamp may have; an older one means the realtime clock was set
    /// between the datagram's arrival and now, so it is replaced by the user-space time.
    static let maximumAgeNanoseconds: Int64 = 2_000_000_000

    /// `realtime` on `CLOCK_MONOTONIC`, or the current monotonic time when there is no usable stamp.
    ///
    /// Reads monotonic, realtime, monotonic and pairs the realtime reading with the middle of the
    /// two monotonic ones, so the conversion is off by at most half a clock read (tens of ns), plus
    /// whatever NTP slewed the realtime clock since the arrival (at most 500 ppm of the stamp's age).
    static func monotonic(fromRealtime realtime: Int64) -> (monotonic: Int64, isKernel: Bool) {
        guard realtime >= 0 else { return (lockstep_net_monotonic_ns(), false) }
        let now = ClockPair.read()
        let after = now.monotonic + now.halfSpan
        let converted = realtime - (now.realtime - now.monotonic)
        guard converted <= after, after - converted <= maximumAgeNanoseconds else { return (after, false) }
        return (converted, true)
    }
}
