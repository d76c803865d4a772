import LockstepLocks
public import LockstepNet
public import LockstepTime
public import Logging

/// Follows one clock source: polls it, estimates the master's offset and rate relative to the local
/// clock, and publishes the estimated line with an honest error bound and the source's state. It
/// sets no clock: `ClockSources` chooses among sources and turns the followed one's line into one
/// continuous mapping (the one `ClockServo`); use it, with a single source, to follow one server.
///
/// ```swift
/// let client = SyncClockClient(server: try Endpoint(parsing: "wall-master:5637"))
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await client.run() }
///     let locked = try await client.waitUntilLocked(timeout: MediaTime(value: 10, timescale: 1))
///     print(locked.errorBound)
/// }
/// ```
///
/// The socket has a dedicated thread: it sends each request with its send time read just before
/// `send`, and takes each reply's receive time from the kernel (`SO_TIMESTAMPNS`), so the thread's
/// wake-up latency never enters a sample. All times are on the local clock given at creation (the
/// process clock by default, which `--simulate-clock-*` options set).
public final class SyncClockClient: Sendable {
    /// How the client polls and estimates. Defaults suit a LAN; the times are `MediaTime`s.
    public struct Configuration: Sendable, Hashable {
        /// The packet format: `.lockstep` for a Lockstep server, `.gstreamer` for a stock
        /// `GstNetTimeProvider` (or a Lockstep server, which speaks both).
        public var format: WireFormat
        /// The poll interval while locking (a burst): 16 ms.
        public var minimumPollInterval: MediaTime
        /// The poll interval once stable on a quiet network: 500 ms.
        public var maximumPollInterval: MediaTime
        /// The poll interval once stable on a network whose delays vary by more than 50 µs: 100 ms
        /// (there the error falls with the number of samples).
        public var maximumPollIntervalUnderJitter: MediaTime
        /// A request with no reply after this long is lost: 1 s.
        public var replyTimeout: MediaTime
        /// Silence after which a locked client is in holdover: 3 s.
        public var holdoverTimeout: MediaTime
        /// The error bound must be within this before the client locks: 5 ms.
        public var lockErrorBound: MediaTime
        /// The largest rate correction the servo applies while slewing, ppm: 500.
        public var maximumSlewPPM: Double
        /// How far the two clocks' relative rate may stray from a constant, ppm, allowed for in the
        /// error bound: 0.1 (quartz oscillators at a steady temperature stay well within it over
        /// minutes; a larger change shows as inconsistent samples and trims the window).
        public var rateWanderPPM: Double
        /// The key shared with the server: requests are signed, and replies without a valid code are
        /// dropped. Lockstep's format only.
        public var key: ClockKey?

        public init(
            format: WireFormat = .lockstep, minimumPollInterval: MediaTime = MediaTime(value: 16, timescale: 1000),
            maximumPollInterval: MediaTime = MediaTime(value: 500, timescale: 1000),
            maximumPollIntervalUnderJitter: MediaTime = MediaTime(value: 100, timescale: 1000),
            replyTimeout: MediaTime = MediaTime(value: 1, timescale: 1),
            holdoverTimeout: MediaTime = MediaTime(value: 3, timescale: 1),
            lockErrorBound: MediaTime = MediaTime(value: 5, timescale: 1000), maximumSlewPPM: Double = 500,
            rateWanderPPM: Double = 0.1, key: ClockKey? = nil
        ) {
            self.key = key
            self.format = format
            self.minimumPollInterval = minimumPollInterval
            self.maximumPollInterval = maximumPollInterval
            self.maximumPollIntervalUnderJitter = maximumPollIntervalUnderJitter
            self.replyTimeout = replyTimeout
            self.holdoverTimeout = holdoverTimeout
            self.lockErrorBound = lockErrorBound
            self.maximumSlewPPM = maximumSlewPPM
            self.rateWanderPPM = rateWanderPPM
        }

        /// The engine's configuration, or a sentence naming the value out of range.
        func engineConfiguration() throws(SyncClockError) -> ClockClientEngine.Configuration {
            func nanoseconds(_ time: MediaTime, _ name: String, within range: ClosedRange<Int64>) throws(SyncClockError)
                -> Int64
            {
                guard let value = time.nanoseconds, range.contains(value) else {
                    throw .invalidConfiguration(
                        "\(name) is \(time); it must be from \(MediaTime(nanoseconds: range.lowerBound)) to "
                            + "\(MediaTime(nanoseconds: range.upperBound))")
                }
                return value
            }
            var engine = ClockClientEngine.Configuration()
            engine.format = format
            engine.minimumPollInterval = try nanoseconds(
                minimumPollInterval, "minimumPollInterval", within: 1_000_000...60_000_000_000)
            engine.maximumPollInterval = try nanoseconds(
                maximumPollInterval, "maximumPollInterval", within: engine.minimumPollInterval...60_000_000_000)
            engine.maximumPollIntervalUnderJitter = try nanoseconds(
                maximumPollIntervalUnderJitter, "maximumPollIntervalUnderJitter",
                within: engine.minimumPollInterval...60_000_000_000)
            engine.replyTimeout = try nanoseconds(replyTimeout, "replyTimeout", within: 1_000_000...60_000_000_000)
            engine.lock.holdoverTimeout = try nanoseconds(
                holdoverTimeout, "holdoverTimeout", within: 1_000_000...3_600_000_000_000)
            engine.lock.lockErrorBound = try nanoseconds(lockErrorBound, "lockErrorBound", within: 1...60_000_000_000)
            _ = try servoConfiguration()
            guard rateWanderPPM.isFinite, (0...100).contains(rateWanderPPM) else {
                throw .invalidConfiguration("rateWanderPPM is \(rateWanderPPM); it must be from 0 to 100")
            }
            engine.estimator.rateWander = rateWanderPPM * 1e3
            if key != nil, format != .lockstep {
                throw .invalidConfiguration(
                    "a clock key authenticates Lockstep's format only; GStreamer's 16-byte packet has no room for it")
            }
            return engine
        }

        /// The configuration of the one servo of a clock following clients configured so.
        func servoConfiguration() throws(SyncClockError) -> ClockServo.Configuration {
            guard maximumSlewPPM.isFinite, (1...10_000).contains(maximumSlewPPM) else {
                throw .invalidConfiguration("maximumSlewPPM is \(maximumSlewPPM); it must be from 1 to 10000")
            }
            var servo = ClockServo.Configuration()
            servo.maximumSlewRate = maximumSlewPPM * 1e3
            return servo
        }
    }

    /// The server followed.
    public let server: Endpoint
    public let configuration: Configuration
    private let clock: LocalClock
    private let logger: Logger
    private let onStatus: (@Sendable (ClockStatus) -> Void)?
    private let shared: Mutex<Shared>
    private let stopSignal = StopSignal()

    private let broadcast: StatusBroadcast

    private struct Shared {
        var started = false
        var stopping = false
        var poller: Poller?
        var failure: SyncClockError?
    }

    /// - Parameters:
    ///   - server: the master clock server.
    ///   - clock: the local clock every timestamp is taken on: the process clock by default.
    ///   - onStatus: called on the client's thread with every new status (every new estimate and
    ///     every state change), before `statusUpdates()` subscribers see it: the place to feed a
    ///     GStreamer clock without a task hop. It must return quickly.
    public init(
        server: Endpoint, configuration: Configuration = Configuration(), clock: LocalClock = .process,
        logger: Logger = Logger(label: "lockstep.syncclock.client"),
        onStatus: (@Sendable (ClockStatus) -> Void)? = nil
    ) {
        self.server = server
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.onStatus = onStatus
        let engine = ClockClientEngine(
            configuration: (try? configuration.engineConfiguration()) ?? ClockClientEngine.Configuration(),
            firstSequence: 0)
        broadcast = StatusBroadcast(engine.status(at: clock.nowNanoseconds()))
        shared = Mutex(Shared())
    }

    /// The latest status.
    public var status: ClockStatus { broadcast.status }

    /// Every new status from now on, newest kept when the consumer falls behind. The stream ends when
    /// the client stops.
    public func statusUpdates(bufferingNewest limit: Int = 64) -> AsyncStream<ClockStatus> {
        broadcast.updates(bufferingNewest: limit)
    }

    /// Waits until the client is locked, and returns that status.
    ///
    /// - Throws: `SyncClockError.notLocked` after `timeout` (measured on the task clock).
    public func waitUntilLocked(timeout: MediaTime) async throws(SyncClockError) -> ClockStatus {
        try await broadcast.waitUntilLocked(timeout: timeout)
    }

    /// Follows the server until the calling task is cancelled.
    ///
    /// - Throws: when the server's address does not resolve or no socket can be opened towards it,
    ///   when the configuration is out of range, when called a second time, or when the socket fails
    ///   while running.
    public func run() async throws(SyncClockError) {
        let engineConfiguration = try configuration.engineConfiguration()
        try shared.withLock { shared throws(SyncClockError) in
            guard !shared.started else { throw .alreadyRunning(what: "the clock client for \(server)") }
            shared.started = true
        }
        let socket: UDPSocket
        let poller: Poller
        let address: SocketAddress
        let thread: DedicatedThread
        let authenticator: PacketAuthenticator?
        do {
            authenticator = try configuration.key.map { key throws(SyncClockError) in
                try PacketAuthenticator(key: key)
            }
            (socket, poller, address) = try openSocket()
        } catch {
            finish(failure: error)
            throw error
        }
        shared.withLock { $0.poller = poller }
        let engine = ClockClientEngine(
            configuration: engineConfiguration, firstSequence: UInt32.random(in: 0 ... .max),
            authenticator: authenticator)
        do {
            thread = try DedicatedThread(name: "clock-client") { [self] in
                follow(socket: socket, server: address, poller: poller, engine: engine)
            }
        } catch {
            let failure = SyncClockError.socketFailed(
                context: "the clock client cannot start its thread", underlying: error)
            finish(failure: failure)
            throw failure
        }
        logger.info(
            "clock client started",
            metadata: [
                "clock.server": "\(server)", "clock.format": "\(configuration.format)", "clock.local": "\(clock)",
                "clock.authenticated": .value(configuration.key != nil),
            ])
        await stopSignal.wait()
        stop()
        thread.join()
        let failure = finish(failure: nil)
        logger.info("clock client stopped", metadata: ["clock.server": "\(server)"])
        if let failure { throw failure }
    }

    private func openSocket() throws(SyncClockError) -> (UDPSocket, Poller, SocketAddress) {
        do throws(NetworkError) {
            guard server.port != 0 else { throw NetworkError.portZero(endpoint: server.description) }
            let addresses = try server.resolve()
            var lastError = NetworkError.noUsableAddress(host: server.host)
            for address in addresses {
                do {
                    let socket = try UDPSocket(family: address.family)
                    try socket.bind(to: address.family == .ipv4 ? .ipv4Any(port: 0) : .ipv6Any(port: 0))
                    // Connected, the socket hears only the server: the kernel drops everyone else.
                    try socket.connect(to: address)
                    try socket.enableReceiveTimestamps()
                    // Requests ahead of bulk transfers (content) on a shared uplink; where the
                    // system refuses the mark, they go unmarked.
                    try? socket.mark(.expedited)
                    return (socket, try Poller(), address)
                } catch {
                    lastError = error
                }
            }
            throw lastError
        } catch {
            throw .cannotReachServer(server: server, underlying: error)
        }
    }

    /// Asks the client thread to stop; `run` then returns.
    private func stop() {
        let poller = shared.withLock { shared in
            shared.stopping = true
            return shared.poller
        }
        poller?.wake()
        stopSignal.fire()
    }

    /// Marks the client finished, ends the status streams, and returns the thread's failure if any.
    @discardableResult
    private func finish(failure: SyncClockError?) -> SyncClockError? {
        let stored = shared.withLock { shared in
            if let failure, shared.failure == nil { shared.failure = failure }
            return shared.failure
        }
        broadcast.finish()
        return stored
    }

    private var isStopping: Bool { shared.withLock { $0.stopping } }

    /// The client thread: send when a poll is due, take in replies, let time pass, publish.
    private func follow(
        socket: UDPSocket, server address: SocketAddress, poller: Poller, engine initial: ClockClientEngine
    ) {
        ThreadTuning.minimizeTimerSlack()
        var engine = initial
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        var lastState = (engine.state, generation: 0)
        do {
            while !isStopping {
                var now = clock.nowNanoseconds()
                if engine.advance(to: now) { publish(engine.status(at: now), previous: &lastState) }
                if engine.isRequestDue(at: now) {
                    // The system's generator: a nonce must not be predictable from earlier ones.
                    let size = engine.prepareRequest(into: buffer, nonce: UInt32.random(in: 0 ... .max))
                    let sendTime = clock.nowNanoseconds()
                    engine.stampRequest(buffer, sentAt: sendTime)
                    try socket.send(UnsafeRawBufferPointer(rebasing: buffer[..<size]))
                    engine.recordRequest(sentAt: sendTime)
                    now = sendTime
                }
                // Waits are measured on the monotonic clock; a simulated local clock runs at most 1 %
                // off it, which only shifts when the next poll is sent, never a timestamp.
                let timeout = engine.nextDeadline(after: now) - now
                let readiness = try poller.wait(for: [socket.descriptor], timeoutNanoseconds: timeout)
                guard readiness.readable[0] else {
                    refresh(engine.status(at: clock.nowNanoseconds()))
                    continue
                }
                while let datagram = try socket.receive(into: buffer) {
                    let received = clock.localNanoseconds(atMonotonic: datagram.monotonicNanoseconds)
                    let processed = max(clock.nowNanoseconds(), received)
                    let changed = engine.receive(
                        UnsafeRawBufferPointer(rebasing: buffer[..<datagram.count]), length: datagram.length,
                        at: received, now: processed,
                        // The socket is connected, so the kernel already drops other sources; kept as a
                        // second line in case the socket is ever shared.
                        fromServer: datagram.source.map { $0 == address } ?? true)
                    if changed {
                        publish(engine.status(at: processed), previous: &lastState)
                    } else {
                        refresh(engine.status(at: processed))
                    }
                }
            }
        } catch {
            logger.error(
                "clock client socket failed", metadata: ["clock.server": "\(server)", "clock.error": "\(error)"])
            shared.withLock { shared in
                shared.failure = .socketFailed(context: "the clock client for \(server) stopped", underlying: error)
            }
            stopSignal.fire()
        }
    }

    /// Updates the snapshot `status` returns without telling subscribers: counters changed, the
    /// estimate did not.
    private func refresh(_ status: ClockStatus) {
        broadcast.refresh(status)
    }

    private func publish(_ status: ClockStatus, previous: inout (ClockState, generation: Int)) {
        if status.generation > previous.generation, previous.generation > 0 {
            logger.info(
                "clock source's estimate started over: a new epoch, or the master's time jumped",
                metadata: [
                    "clock.server": "\(server)", "clock.generation": .value(status.generation),
                    "clock.master": "\(status.master?.description ?? "GStreamer server")",
                    "clock.timeline_resets": .value(status.counters.estimateRestarts),
                    "clock.held_back":
                        "\(status.counters.rejectedInconsistent + status.counters.suspectEpochChanges)",
                ])
        }
        previous.generation = status.generation
        if status.state != previous.0 {
            logger.info(
                "clock state changed",
                metadata: [
                    "clock.server": "\(server)", "clock.state": "\(status.state)", "clock.previous": "\(previous.0)",
                    "clock.offset_ns": .nanoseconds(status.offset),
                    "clock.error_bound_ns": .nanoseconds(status.errorBound),
                    "clock.generation": .value(status.generation),
                ])
            previous.0 = status.state
        }
        broadcast.refresh(status)
        onStatus?(status)
        broadcast.publish(status)
    }
}
