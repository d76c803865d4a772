import ArgumentParser
import LockstepCLI
import LockstepNet
import LockstepTime
import Logging
import ServiceLifecycle
import SyncClock

/// `wallctl clock serve`: a standalone master clock server.
struct ClockServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve this machine's clock as the wall's master clock.",
        discussion: """
            Answers Lockstep clients and stock GStreamer clients (GstNetClientClock) on the same port. \
            Replies to each source address are rate-limited (default 1000 a second, bursts of 200), so \
            the server cannot be used to flood someone else's address; drops are logged at most every \
            10 s. With --key-file, Lockstep requests must carry a valid HMAC-SHA256 under the shared key \
            and replies are signed; GStreamer's 16-byte format, which has no room for one, is still \
            answered (unauthenticated) unless --no-gstreamer is given. Runs until SIGINT or SIGTERM, \
            then prints what it answered and dropped.

            With --join, a master that restarts does not start a timeline of its own while the wall \
            still follows one: it first asks the nodes that relay the wall's time (their serve-clock \
            addresses) and, if one answers within --join-timeout, follows it for 10 s and then serves \
            that timeline onwards as the master, so a playing wall never jumps (and the relays, which \
            follow the master first, never end up following each other through it). If none answers (the whole wall starting), it \
            serves its own clock.
            """
    )

    @Option(
        name: .customLong("listen"),
        help: ArgumentHelp(
            "An address to listen on, ADDRESS:PORT or [IPV6]:PORT; repeat for several. Default: 0.0.0.0:5637 and [::]:5637.",
            valueName: "address:port"),
        transform: { try Endpoint(parsing: $0) })
    var listen: [Endpoint] = []

    @Flag(
        name: .customLong("realtime"),
        help:
            "Serve CLOCK_REALTIME instead of the process clock (CLOCK_MONOTONIC), so masters kept in step by NTP or PTP can stand in for one another."
    )
    var realtime = false

    @Option(
        name: .customLong("simulate-realtime-shift"), parsing: .unconditional,
        help: ArgumentHelp(
            "Test option, with --realtime: serve UTC this many seconds ahead (negative: behind), to try a schedule's "
                + "dates today.", valueName: "seconds"))
    var realtimeShift: Double = 0

    @Option(
        name: .customLong("rate-limit"),
        help: ArgumentHelp(
            "Replies per second to one source address, port ignored (0: no limit; default 1000). Raise it for many clients behind one address.",
            valueName: "replies"))
    var rateLimit: Double = ReplyRateLimit.default.repliesPerSecond

    @Option(
        name: .customLong("rate-burst"),
        help: ArgumentHelp("Replies one source address may have at once (default 200).", valueName: "replies"))
    var rateBurst: Double = ReplyRateLimit.default.burst

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "A file holding the key shared with clients (raw bytes, or hex digits; at least 16 bytes): answer only Lockstep requests signed with it, and sign the replies.",
            valueName: "file"))
    var keyFile: String?

    @Flag(
        name: .customLong("no-gstreamer"),
        help: "Do not answer GStreamer's 16-byte format (unauthenticated even with --key-file).")
    var noGStreamer = false

    @Option(
        name: .customLong("join"),
        help: ArgumentHelp(
            "Relays of the wall's time to rejoin before serving, HOST:PORT, in order of preference; repeat or separate with commas.",
            valueName: "host:port"),
        transform: { text in try text.split(separator: ",").map { try Endpoint(parsing: String($0)) } })
    var join: [[Endpoint]] = []

    @Option(
        name: .customLong("join-timeout"),
        help: ArgumentHelp(
            "Seconds to wait for a relay to lock before serving this clock (default 5).", valueName: "seconds"))
    var joinTimeout: Double = 5

    @OptionGroup(title: "Logging")
    var logging: LoggingOptions

    @OptionGroup(title: "Test options")
    var simulatedClock: SimulatedClockOptions

    func validate() throws {
        guard rateLimit.isFinite, rateLimit >= 0 else {
            throw ValidationError("--rate-limit must be a number of replies per second, 0 or more; got \(rateLimit)")
        }
        guard rateBurst.isFinite, rateBurst >= 1 else {
            throw ValidationError("--rate-burst must be at least 1 reply; got \(rateBurst)")
        }
        guard joinTimeout.isFinite, (0.1...600).contains(joinTimeout) else {
            throw ValidationError("--join-timeout must be from 0.1 to 600 seconds; got \(joinTimeout)")
        }
        guard realtimeShift.isFinite, realtimeShift.magnitude < 3e9, realtimeShift == 0 || realtime else {
            throw ValidationError(
                "--simulate-realtime-shift needs --realtime and a finite number of seconds (under 3e9)")
        }
        if realtime, !join.isEmpty {
            throw ValidationError("--join and --realtime: a realtime master serves CLOCK_REALTIME, it joins no one")
        }
    }

    func run() async throws {
        let clock = try simulatedClock.apply()
        let key = try keyFile.map { path throws(SyncClockError) in try ClockKey(contentsOfFile: path) }
        logging.bootstrap(defaultLevel: .info, defaultFormat: .text)
        // A master stopped for a while says so: its clients' clocks went unanswered meanwhile.
        _ = StandStillMonitor.process
        var configuration = SyncClockServer.Configuration(
            timescale: realtime ? .realtime : .localClock,
            rateLimit: rateLimit > 0 ? ReplyRateLimit(repliesPerSecond: rateLimit, burst: rateBurst) : nil, key: key,
            answersGStreamer: !noGStreamer)
        configuration.realtimeShift = MediaTime(
            seconds: realtimeShift, preferredTimescale: MediaTime.nanosecondTimescale)
        if !listen.isEmpty { configuration.listen = listen }
        let logger = Logger(label: "lockstep.clock")
        let joined = await rejoin(configuration: configuration, clock: clock, logger: logger)
        let server = joined?.server ?? SyncClockServer(configuration: configuration, clock: clock)
        let addresses = try server.start()
        // A joined master follows the relays only long enough to measure their rate, then serves
        // the wall's timeline as its master: the relays follow it again, and no loop forms.
        let takeover = TaskService("takeover") { [joined] in
            guard let joined else { return }
            try await Task.sleep(for: .seconds(Self.joinSettle))
            if await joined.takeOver() {
                Output.line("wallctl: took the wall's timeline over; serving it as its master (stratum 0)")
            }
        }
        let served =
            joined.map { "the wall's timeline, following \($0.sources.selectedSource?.description ?? "its relays")," }
            ?? (configuration.timescale == .realtime ? "CLOCK_REALTIME" : "the \(clock) clock")
        // The first line ends with the port, which scripts and tests read.
        Output.line(
            "wallctl: serving \(served) on \(addresses.map(\.description).joined(separator: ", ")) "
                + "as \(server.masterIdentity)")
        let gstreamer = noGStreamer ? "not answered" : key == nil ? "answered" : "answered, unauthenticated"
        Output.line(
            "wallctl: \(key == nil ? "no key" : "Lockstep requests authenticated with a \(key!)"); "
                + "GStreamer format \(gstreamer); rate limit \(configuration.rateLimit?.description ?? "none")")
        // Under systemd (Type=notify) the unit is up once the sockets are bound, and restarted when a
        // receive loop has died.
        let notifier = ServiceNotifier.fromEnvironment()
        notifier.ready(status: "serving \(served) on \(addresses.map(\.description).joined(separator: ", "))")
        // A hangup (a terminal closed, a reload by habit) must not end the wall's clock.
        Termination.onHangup { Output.line("wallctl: SIGHUP ignored; the master clock keeps serving") }
        var group = ServiceGroupConfiguration(
            services: [
                .init(
                    service: TaskService("clock server") {
                        defer { server.stop() }
                        await TaskService.untilCancelled()
                    }),
                .init(service: takeover, successTerminationBehavior: .ignore),
                .init(
                    service: TaskService("watchdog") { await notifier.keepWatchdogFed { server.isServing } },
                    successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(1)
        try await ServiceGroup(configuration: group).run()
        // Stopped before the takeover: the relays are followed no more.
        joined?.running.cancel()
        notifier.stopping()
        Output.line("wallctl: stopped; \(server.statistics)")
    }

    /// How long a joined master follows the relays before it serves their timeline as the master.
    static let joinSettle = 10

    /// With `--join`: follows the relays until one locks (`ClockJoin`); nil when none locked in time.
    private func rejoin(configuration: SyncClockServer.Configuration, clock: LocalClock, logger: Logger) async
        -> ClockJoin?
    {
        let relays = join.flatMap { $0 }
        guard !relays.isEmpty else { return nil }
        guard
            let joined = await ClockJoin.join(
                relays: relays, configuration: configuration, clock: clock,
                timeout: MediaTime(nanoseconds: Int64(joinTimeout * 1e9)), logger: logger)
        else {
            Output.line("wallctl: no relay of a wall's timeline answered within \(joinTimeout) s; serving this clock")
            return nil
        }
        let locked = joined.sources.status
        Output.line(
            "wallctl: \(joined.sources.selectedSource?.description ?? "a relay") serves the wall's timeline "
                + "(\(locked.master?.description ?? "GStreamer server")); rejoining it")
        return joined
    }
}
