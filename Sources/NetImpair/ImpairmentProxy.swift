import LockstepLocks
public import LockstepNet
import LockstepTime
public import Logging

/// A user-space UDP proxy that impairs traffic in both directions: clients send to `listen`, the
/// proxy forwards to `forward` and relays replies back, each datagram delayed, dropped, reordered or
/// duplicated per `Impairment`.
///
/// Each client source address gets its own upstream socket, so the server sees one peer per client
/// and its replies find their way back to the right client. One dedicated thread does everything: it
/// waits on the sockets and on a timer armed at the next departure's absolute deadline
/// (`CLOCK_MONOTONIC`, `TFD_TIMER_ABSTIME`, no timer slack), so held datagrams leave on time and the
/// proxy measures how late they actually left (`ImpairmentStatistics.lateness`). Holds count from the
/// kernel's receive stamp, and the thread asks for real-time scheduling (`SCHED_FIFO`, granted to
/// root or with `CAP_SYS_NICE`) so other work on the machine delays departures less.
public final class ImpairmentProxy: Sendable {
    public let listen: Endpoint
    public let forward: Endpoint
    public let impairment: Impairment
    public let seed: UInt64
    private let logger: Logger
    private let shared = Mutex(Shared())
    private let stopSignal = StopSignal()

    /// A client unheard from for this long loses its upstream socket.
    static let idleTimeout: Int64 = 120_000_000_000
    /// Clients served at once; datagrams from more are dropped (and counted).
    static let maximumClients = 1024

    private struct Shared {
        var started = false
        var stopping = false
        var statistics = ImpairmentStatistics()
        var poller: Poller?
        var thread: DedicatedThread?
        var boundAddress: SocketAddress?
        var failure: ImpairmentError?
    }

    public init(
        listen: Endpoint, forward: Endpoint, impairment: Impairment, seed: UInt64 = 1,
        logger: Logger = Logger(label: "lockstep.netimpair")
    ) {
        self.listen = listen
        self.forward = forward
        self.impairment = impairment
        self.seed = seed
        self.logger = logger
    }

    /// What the proxy has done so far.
    public var statistics: ImpairmentStatistics { shared.withLock { $0.statistics } }

    /// The address the proxy listens on, once started (port 0 in `listen` picks one).
    public var boundAddress: SocketAddress? { shared.withLock { $0.boundAddress } }

    /// Binds, resolves the forward address and starts the proxy thread. Returns the bound address.
    @discardableResult
    public func start() throws(ImpairmentError) -> SocketAddress {
        try impairment.validate()
        try shared.withLock { shared throws(ImpairmentError) in
            guard !shared.started else { throw .alreadyRunning }
            shared.started = true
        }
        let target: SocketAddress
        do throws(NetworkError) {
            guard forward.port != 0 else { throw NetworkError.portZero(endpoint: forward.description) }
            target = try forward.resolve()[0]
        } catch {
            throw .cannotForward(endpoint: forward.description, underlying: error)
        }
        let socket: UDPSocket
        do {
            let address = try listen.resolve(passive: true)[0]
            socket = try UDPSocket.bound(to: address)
            // Holds count from the kernel's arrival stamp in both directions; without it the
            // proxy thread's wake-up latency would lengthen the client-to-server leg only.
            try socket.enableReceiveTimestamps()
        } catch {
            throw .cannotListen(endpoint: listen.description, underlying: error)
        }
        let bound = socket.localAddress ?? .ipv4Any(port: 0)
        do {
            let poller = try Poller()
            let timer = try DeadlineTimer()
            let model = ImpairmentModel(impairment: impairment, seed: seed)
            let thread = try DedicatedThread(name: "net-impair") { [self] in
                var relay = Relay(listening: socket, target: target, timer: timer, model: model)
                relay.run(proxy: self, poller: poller)
            }
            shared.withLock {
                $0.poller = poller
                $0.thread = thread
                $0.boundAddress = bound
            }
        } catch {
            throw .socketFailed(context: "the impairment proxy cannot start", underlying: error)
        }
        logger.info(
            "impairment proxy running",
            metadata: ["impair.listen": "\(bound)", "impair.forward": "\(target)", "impair.model": "\(impairment)"])
        return bound
    }

    /// Stops the proxy thread and closes its sockets. Safe to call more than once.
    public func stop() {
        let (poller, thread) = shared.withLock { shared in
            shared.stopping = true
            defer { shared.thread = nil }
            return (shared.poller, shared.thread)
        }
        poller?.wake()
        thread?.join()
        stopSignal.fire()
    }

    /// Runs until the calling task is cancelled.
    public func run() async throws(ImpairmentError) {
        try start()
        await stopSignal.wait()
        stop()
        if let failure = shared.withLock({ $0.failure }) { throw failure }
    }

    fileprivate var isStopping: Bool { shared.withLock { $0.stopping } }

    fileprivate func update(_ body: (inout ImpairmentStatistics) -> Void) {
        shared.withLock { body(&$0.statistics) }
    }

    fileprivate func fail(_ error: NetworkError) {
        logger.error("impairment proxy failed", metadata: ["impair.error": "\(error)"])
        shared.withLock { shared in
            shared.failure = .socketFailed(context: "the impairment proxy stopped", underlying: error)
        }
        stopSignal.fire()
    }
}

/// The proxy thread's state: sockets, the queue of held datagrams, the model. Owned by that thread.
private struct Relay {
    private struct Upstream {
        let socket: UDPSocket
        var lastUsed: Int64
    }

    private struct Held {
        var deadline: Int64
        var bytes: [UInt8]
        var direction: ImpairmentStatistics.Direction
        /// The client for replies, the client whose upstream socket sends requests.
        var client: SocketAddress
    }

    let listening: UDPSocket
    let target: SocketAddress
    let timer: DeadlineTimer
    var model: ImpairmentModel
    private var upstreams: [SocketAddress: Upstream] = [:]
    /// Held datagrams, latest deadline first, so the next to leave is popped from the end.
    private var held: [Held] = []
    private var lastSweep: Int64 = 0

    init(listening: UDPSocket, target: SocketAddress, timer: DeadlineTimer, model: ImpairmentModel) {
        self.listening = listening
        self.target = target
        self.timer = timer
        self.model = model
    }

    mutating func run(proxy: ImpairmentProxy, poller: Poller) {
        ThreadTuning.minimizeTimerSlack()
        let realtime = ThreadTuning.requestRealtimePriority()
        proxy.update { $0.realtimeScheduling = realtime }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { buffer.deallocate() }
        do {
            while !proxy.isStopping {
                let clients = Array(upstreams.keys)
                let descriptors =
                    [listening.descriptor, timer.descriptor] + clients.map { upstreams[$0]!.socket.descriptor }
                let readiness = try poller.wait(for: descriptors, timeoutNanoseconds: nil)
                if readiness.readable[1] { timer.acknowledge() }
                if readiness.readable[0] {
                    while let datagram = try listening.receive(into: buffer), let source = datagram.source {
                        try admit(buffer, datagram, direction: .toServer, client: source, proxy: proxy)
                    }
                }
                for (index, client) in clients.enumerated() where readiness.readable[index + 2] {
                    guard let socket = upstreams[client]?.socket else { continue }
                    while let datagram = try socket.receive(into: buffer) {
                        try admit(buffer, datagram, direction: .toClient, client: client, proxy: proxy)
                    }
                }
                try sendDue(proxy: proxy)
                sweepIdle()
            }
        } catch {
            proxy.fail(error)
        }
    }

    /// Takes a received datagram and holds each copy the model lets through until its departure.
    private mutating func admit(
        _ buffer: UnsafeMutableRawBufferPointer, _ datagram: UDPSocket.Datagram,
        direction: ImpairmentStatistics.Direction, client: SocketAddress, proxy: ImpairmentProxy
    ) throws(NetworkError) {
        let arrival = datagram.monotonicNanoseconds
        if direction == .toServer {
            guard try upstream(for: client, at: arrival) else {
                proxy.update { $0.droppedTooManyClients += 1 }
                return
            }
        }
        let decision = model.decide(toServer: direction == .toServer, at: arrival)
        proxy.update { statistics in
            statistics.received[direction, default: 0] += 1
            if decision.departures.isEmpty { statistics.lost[direction, default: 0] += 1 }
            if decision.reordered { statistics.reordered[direction, default: 0] += 1 }
            if decision.departures.count > 1 { statistics.duplicated[direction, default: 0] += 1 }
            if !decision.reordered, let hold = decision.departures.first {
                statistics.held[direction, default: .init()].record(hold)
            }
        }
        let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[..<datagram.count]))
        for departure in decision.departures {
            let item = Held(deadline: arrival + departure, bytes: bytes, direction: direction, client: client)
            let index = held.firstIndex { $0.deadline <= item.deadline } ?? held.endIndex
            held.insert(item, at: index)
        }
    }

    /// The upstream socket for `client`, opened on first use; false when there are too many clients.
    private mutating func upstream(for client: SocketAddress, at now: Int64) throws(NetworkError) -> Bool {
        if upstreams[client] != nil {
            upstreams[client]!.lastUsed = now
            return true
        }
        guard upstreams.count < ImpairmentProxy.maximumClients else { return false }
        let socket = try UDPSocket(family: target.family)
        try socket.bind(to: target.family == .ipv4 ? .ipv4Any(port: 0) : .ipv6Any(port: 0))
        try socket.connect(to: target)
        try socket.enableReceiveTimestamps()
        upstreams[client] = Upstream(socket: socket, lastUsed: now)
        return true
    }

    /// Sends every held datagram whose deadline has passed, then arms the timer for the next one.
    private mutating func sendDue(proxy: ImpairmentProxy) throws(NetworkError) {
        while let next = held.last {
            let now = LocalClock.monotonicNanoseconds()
            guard next.deadline <= now else { break }
            held.removeLast()
            let sent: Bool
            switch next.direction {
            case .toServer:
                guard let socket = upstreams[next.client]?.socket else { continue }
                sent = try Self.send(next.bytes, on: socket, to: nil)
            case .toClient:
                sent = try Self.send(next.bytes, on: listening, to: next.client)
            }
            proxy.update { statistics in
                statistics.lateness[next.direction, default: .init()].record(now - next.deadline)
                if sent {
                    statistics.sent[next.direction, default: 0] += 1
                } else {
                    statistics.sendFailures += 1
                }
            }
        }
        timer.arm(at: held.last?.deadline)
    }

    private static func send(_ bytes: [UInt8], on socket: UDPSocket, to address: SocketAddress?) throws(NetworkError)
        -> Bool
    {
        var outcome: Result<Bool, NetworkError> = .success(false)
        bytes.withUnsafeBytes { raw in
            outcome = Result { () throws(NetworkError) in try socket.send(raw, to: address) }
        }
        return try outcome.get()
    }

    /// Closes upstream sockets of clients gone quiet, checked once a second.
    private mutating func sweepIdle() {
        let now = LocalClock.monotonicNanoseconds()
        guard now - lastSweep > 1_000_000_000 else { return }
        lastSweep = now
        let idle = upstreams.filter { now - $0.value.lastUsed > ImpairmentProxy.idleTimeout }.map(\.key)
        for client in idle where !held.contains(where: { $0.client == client }) {
            upstreams[client] = nil
        }
    }
}
