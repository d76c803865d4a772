import LockstepLocks
public import LockstepNet
public import LockstepTime
public import Logging

/// A master clock server: answers time requests in Lockstep's and GStreamer's formats on any number
/// of addresses, for any number of clients. Its only per-client state is the rate limit's token
/// bucket per source address (`ReplyRateLimit`), in a table of bounded size.
///
/// Each listening socket has a dedicated thread. Receive times are the kernel's stamps
/// (`SO_TIMESTAMPNS`) converted to the master clock, and the send time is read just before `sendto`,
/// so the server's own scheduling latency falls between the two stamps, where Lockstep clients take it
/// out of the round trip.
///
/// ```swift
/// let server = SyncClockServer(configuration: .init(listen: [Endpoint(host: "0.0.0.0", port: 5637)]))
/// try await server.run()   // until the task is cancelled
/// ```
public final class SyncClockServer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// GStreamer's `GstNetTimeProvider` port, the default for both formats.
        public static let defaultPort: UInt16 = 5637

        /// The addresses to listen on. Port 0 picks a free port (see `boundAddresses`).
        public var listen: [Endpoint]
        /// The time scale served.
        public var timescale: MasterTimescale
        /// The identity in replies; random when nil. Fixed values are for tests.
        public var identity: UInt64?
        /// The timeline epoch in replies; derived from the time scale when nil (see
        /// `MasterTimescale`). A fixed value lets tests simulate a master on a new timeline.
        public var epoch: UInt64?
        /// Replies per source address; nil answers every valid request.
        public var rateLimit: ReplyRateLimit?
        /// With a key, Lockstep requests without a valid authentication code get no reply, and
        /// replies are signed.
        public var key: ClockKey?
        /// Whether GStreamer's 16-byte format is answered (it has no room for authentication).
        public var answersGStreamer: Bool
        /// Test option: a real-time master serves UTC this far ahead (negative: behind), so that a
        /// schedule's dates can be tried today. It names its own epoch and flags itself simulated.
        public var realtimeShift: MediaTime = .zero

        /// - Parameter listen: defaults to every IPv4 and IPv6 interface on port 5637.
        public init(
            listen: [Endpoint] = [
                Endpoint(host: "0.0.0.0", port: defaultPort), Endpoint(host: "::", port: defaultPort),
            ],
            timescale: MasterTimescale = .localClock, identity: UInt64? = nil, epoch: UInt64? = nil,
            rateLimit: ReplyRateLimit? = .default, key: ClockKey? = nil, answersGStreamer: Bool = true
        ) {
            self.key = key
            self.answersGStreamer = answersGStreamer
            self.listen = listen
            self.timescale = timescale
            self.identity = identity
            self.epoch = epoch
            self.rateLimit = rateLimit
        }
    }

    public let configuration: Configuration
    /// The identity this server puts in its replies.
    public let identity: UInt64
    /// The timeline epoch this server puts in its replies.
    public let epoch: UInt64
    private let clock: MasterClock
    /// For a boundary clock: the timeline it serves instead of its own clock's.
    private let relay: ClockRelay?
    private let logger: Logger
    private let state = Mutex(RunState())
    private let counters = Mutex(ServerStatistics())
    private let limiter: Mutex<LimiterState>
    private let stopSignal = StopSignal()

    private struct RunState {
        var started = false
        var stopping = false
        var listeners: [Listener] = []
        /// Receive loops that ended on an error: their address is no longer answered.
        var failedListeners = 0
    }

    /// The rate limiter, and what it dropped since the server last logged about it.
    private struct LimiterState: Sendable {
        /// Nil without a rate limit.
        var limiter: SourceRateLimiter?
        var droppedSinceReport = 0
        var lastReport: Int64 = .min
    }

    /// The server logs rate-limited replies at most this often, ns: a flood must not flood the log.
    private static let rateLimitReportInterval: Int64 = 10_000_000_000

    private struct Listener: Sendable {
        let socket: UDPSocket
        let address: SocketAddress
        let poller: Poller
        let thread: DedicatedThread
    }

    /// - Parameters:
    ///   - clock: the local clock a `.localClock` master serves (the process clock by default), and
    ///     the one a relay's mapping starts from.
    ///   - relay: makes this server a boundary clock: it serves the timeline the relay holds, on
    ///     `clock`, with the master's identity and epoch (the time scale, identity and epoch of the
    ///     configuration are then not used).
    public init(
        configuration: Configuration = Configuration(), clock: LocalClock = .process, relaying relay: ClockRelay? = nil,
        logger: Logger = Logger(label: "lockstep.syncclock.server")
    ) {
        self.relay = relay
        self.configuration = configuration
        self.clock = MasterClock(
            timescale: relay == nil ? configuration.timescale : .localClock, local: clock,
            realtimeShift: configuration.realtimeShift.nanoseconds ?? 0)
        self.identity = configuration.identity ?? UInt64.random(in: 1 ... .max)
        self.epoch = configuration.epoch ?? self.clock.epoch
        self.limiter = Mutex(
            LimiterState(
                limiter: configuration.rateLimit.map {
                    SourceRateLimiter(perSecond: $0.repliesPerSecond, burst: $0.burst, tableCapacity: $0.tableCapacity)
                }))
        self.logger = logger
    }

    /// The server as its replies describe it to clients.
    public var masterIdentity: MasterIdentity {
        MasterIdentity(
            identity: identity, epoch: epoch, isRealtime: clock.flags.contains(.realtimeTimescale),
            isSimulated: clock.flags.contains(.simulatedClock))
    }

    /// What the server has received and answered so far.
    public var statistics: ServerStatistics { counters.withLock { $0 } }

    /// Whether every address the server bound is still answered: false before start, after stop,
    /// and once a receive loop has ended on an error (a supervisor's watchdog asks this).
    public var isServing: Bool {
        state.withLock { $0.started && !$0.stopping && !$0.listeners.isEmpty && $0.failedListeners == 0 }
    }

    /// The addresses the server listens on, with the ports actually bound.
    public var boundAddresses: [SocketAddress] { state.withLock { $0.listeners.map(\.address) } }

    /// Binds every listen address and starts answering. Returns the bound addresses.
    ///
    /// A default wildcard address of a family this machine lacks (IPv6 disabled) is skipped; any
    /// other address that cannot be bound is an error, and nothing is left running.
    @discardableResult
    public func start() throws(SyncClockError) -> [SocketAddress] {
        try state.withLock { state throws(SyncClockError) in
            guard !state.started else { throw .alreadyRunning(what: "the clock server") }
            state.started = true
        }
        let authenticator = try configuration.key.map { key throws(SyncClockError) in try PacketAuthenticator(key: key)
        }
        let sockets = try openSockets()
        let ports = Set(sockets.compactMap { $0.localAddress?.port }).union([Configuration.defaultPort])
        let responder = TimeResponder(
            identity: identity, epoch: epoch, flags: clock.flags, serverPorts: ports, authenticator: authenticator,
            answersGStreamer: configuration.answersGStreamer)
        var listeners: [Listener] = []
        for socket in sockets {
            let address = socket.localAddress ?? .ipv4Any(port: 0)
            do {
                let poller = try Poller()
                let thread = try DedicatedThread(name: "clock-server") { [self] in
                    serve(socket: socket, poller: poller, responder: responder)
                }
                listeners.append(Listener(socket: socket, address: address, poller: poller, thread: thread))
            } catch {
                stop(listeners)
                throw .socketFailed(context: "the clock server cannot start its receive thread", underlying: error)
            }
        }
        state.withLock { $0.listeners = listeners }
        logger.info(
            "clock server listening",
            metadata: [
                "clock.addresses": "\(listeners.map(\.address.description).joined(separator: " "))",
                "clock.timescale": "\(relay == nil ? configuration.timescale.description : "relayed")",
                "clock.master": "\(relay == nil ? masterIdentity.description : "the master followed")",
                "clock.relay": "\(hex(identity))",
                "clock.rate_limit": "\(configuration.rateLimit?.description ?? "none")",
                "clock.authenticated": .value(configuration.key != nil),
                "clock.gstreamer": .value(configuration.answersGStreamer),
            ])
        return listeners.map(\.address)
    }

    private func openSockets() throws(SyncClockError) -> [UDPSocket] {
        guard !configuration.listen.isEmpty else { throw .nothingToListenOn }
        let defaults = Configuration().listen
        var sockets: [UDPSocket] = []
        for endpoint in configuration.listen {
            let addresses: [SocketAddress]
            do {
                addresses = try endpoint.resolve(passive: true)
            } catch {
                throw .cannotListen(endpoint: endpoint.description, underlying: error)
            }
            // A name may stand for addresses of other machines too (or of a family this one lacks):
            // those are skipped as long as one of its addresses is this machine's.
            var notHere: [(SocketAddress, NetworkError)] = []
            for address in addresses {
                do {
                    let socket = try UDPSocket.bound(to: address)
                    try socket.enableReceiveTimestamps()
                    // Replies ahead of bulk transfers (content) on a shared uplink; where the
                    // system refuses the mark, they go unmarked.
                    do {
                        try socket.mark(.expedited)
                    } catch {
                        logger.notice("clock replies go unmarked", metadata: ["error": "\(error)"])
                    }
                    sockets.append(socket)
                } catch {
                    if error.isAddressFamilyUnavailable, address.family == .ipv6, defaults.contains(endpoint) {
                        logger.info(
                            "IPv6 unavailable, listening on IPv4 only", metadata: ["clock.address": "\(address)"])
                    } else if error.isAddressFamilyUnavailable, addresses.count > 1 {
                        notHere.append((address, error))
                    } else {
                        throw .cannotListen(endpoint: Self.naming(endpoint, address), underlying: error)
                    }
                }
            }
            if notHere.count == addresses.count, let (address, error) = notHere.first {
                throw .cannotListen(endpoint: Self.naming(endpoint, address), underlying: error)
            }
            for (address, _) in notHere {
                logger.info(
                    "not listening on an address that is not this machine's",
                    metadata: ["clock.listen": "\(endpoint)", "clock.address": "\(address)"])
            }
        }
        return sockets
    }

    /// The address, with the name it was resolved from when that differs.
    private static func naming(_ endpoint: Endpoint, _ address: SocketAddress) -> String {
        address.description == endpoint.description ? endpoint.description : "\(endpoint) (\(address))"
    }

    /// Stops answering and joins the receive threads. Safe to call more than once.
    public func stop() {
        let listeners = state.withLock { state -> [Listener] in
            guard !state.stopping else { return [] }
            state.stopping = true
            return state.listeners
        }
        stop(listeners)
    }

    private func stop(_ listeners: [Listener]) {
        state.withLock { $0.stopping = true }
        stopSignal.fire()
        for listener in listeners { listener.poller.wake() }
        for listener in listeners { listener.thread.join() }
    }

    /// Serves until the calling task is cancelled or `stop()` is called.
    public func run() async throws(SyncClockError) {
        try start()
        await stopSignal.wait()
        stop()
        logger.info("clock server stopped", metadata: ["clock.statistics": "\(statistics)"])
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    /// The receive loop of one socket: drain every waiting datagram, answer, wait again.
    private func serve(socket: UDPSocket, poller: Poller, responder: TimeResponder) {
        ThreadTuning.minimizeTimerSlack()
        let request = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        let reply = UnsafeMutableRawBufferPointer.allocate(byteCount: LockstepTimePacket.size, alignment: 8)
        defer {
            request.deallocate()
            reply.deallocate()
        }
        while !isStopping {
            do {
                _ = try poller.wait(for: [socket.descriptor], timeoutNanoseconds: nil)
                while let datagram = try socket.receive(into: request) {
                    answer(datagram, request: request, reply: reply, socket: socket, responder: responder)
                }
            } catch {
                logger.error("clock server receive failed", metadata: ["clock.error": "\(error)"])
                state.withLock { $0.failedListeners += 1 }
                return
            }
        }
    }

    private func answer(
        _ datagram: UDPSocket.Datagram, request: UnsafeMutableRawBufferPointer, reply: UnsafeMutableRawBufferPointer,
        socket: UDPSocket, responder: TimeResponder
    ) {
        var receiveTime = clock.receiveTime(of: datagram)
        var served: ServedTimeline?
        // A relay reads the timeline once per request: the receive and send times are on one mapping.
        let relayed = relay?.timeline
        if let relayed {
            served = relayed.served(atLocal: receiveTime)
            receiveTime = relayed.mapping.masterNanoseconds(atLocalNanoseconds: receiveTime)
        }
        var outcome = responder.respond(
            to: UnsafeRawBufferPointer(rebasing: request[..<datagram.count]), length: datagram.length,
            sourcePort: datagram.source?.port ?? 0, receiveTime: receiveTime, kernelStamped: datagram.isKernelTimestamp,
            serving: served, into: reply)
        if case .reply = outcome, relay != nil, relayed == nil { outcome = .notFollowing }
        var sendFailed = false
        if case .reply = outcome, let source = datagram.source, !allowsReply(to: source, at: datagram) {
            outcome = .rateLimited
        }
        if case .reply(let format, let count) = outcome, let source = datagram.source {
            let now = clock.now()
            let sendTime = relayed.map { $0.mapping.masterNanoseconds(atLocalNanoseconds: now) } ?? now
            if responder.stamp(reply, format: format, receiveTime: receiveTime, sendTime: sendTime) {
                sendFailed = (try? socket.send(UnsafeRawBufferPointer(rebasing: reply[..<count]), to: source)) != true
            } else {
                outcome = .unrepresentableMasterTime
            }
        }
        counters.withLock { statistics in
            statistics.record(outcome)
            if sendFailed { statistics.sendFailures += 1 }
            if !datagram.isKernelTimestamp { statistics.userSpaceReceiveTimes += 1 }
        }
    }
}

extension SyncClockServer {
    /// Whether the rate limit lets a reply go to `source`; logs what it dropped, at most every 10 s.
    private func allowsReply(to source: SocketAddress, at datagram: UDPSocket.Datagram) -> Bool {
        let now = datagram.monotonicNanoseconds
        let (allowed, report) = limiter.withLock { state -> (Bool, Int?) in
            // In place: a copy of the table per datagram would cost its size every time.
            guard state.limiter?.allows(source, at: now) == false else { return (true, nil) }
            state.droppedSinceReport += 1
            guard state.lastReport == .min || now - state.lastReport >= Self.rateLimitReportInterval else {
                return (false, nil)
            }
            defer { state.droppedSinceReport = 0 }
            state.lastReport = now
            return (false, state.droppedSinceReport)
        }
        if let report {
            logger.info(
                "clock server dropping replies over its rate limit",
                metadata: [
                    "clock.dropped": .value(report), "clock.source": "\(source.host)",
                    "clock.rate_limit": "\(configuration.rateLimit?.description ?? "none")",
                ])
        }
        return allowed
    }
}

func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
