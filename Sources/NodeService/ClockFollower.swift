import LockstepLocks
import LockstepNet
import LockstepTime
import Logging
import SyncClock
import WallPlayer
import WallProtocol

/// Keeps the player's master clock on the wall's master: the clock sources (the master, then
/// relaying nodes) whose every estimate goes straight to a GStreamer clock; optionally the master
/// clock server itself, or a relay of the time this node follows (a boundary clock).
///
/// A GStreamer clock must never jump back, so each generation of the clock's mapping (a new one
/// starts only when the master's time itself jumped or the wall moved to another epoch; a change of
/// source slews) gets a new `MasterClock`; the player takes it at its next start, which is when
/// the node's follower anchors again.
///
/// With `--use-local-clock` (a benchmark baseline) there is no client: the node runs on this
/// machine's clock, which every node on the machine shares exactly.
public final class ClockFollower: Sendable {
    private let sources: ClockSources?
    private let server: SyncClockServer?
    /// Where the node relays, when it does.
    private let relayAddress: Endpoint?
    /// The wall's epoch a master node joined at its start, whose sources it runs.
    private let joined: ClockJoin?
    /// The other nodes' clocks, measured directly; nil when no other node serves its time.
    private let peers: PeerClocks?
    private let current: Current
    private let logger: Logger

    /// How long a master node that starts follows the relays listed after it, for a wall that is
    /// still playing its timeline (`ClockJoin`), before it serves its own clock.
    static let joinTimeout = MediaTime(value: 5, timescale: 1)

    /// The clock the player follows and the generation of the mapping it follows.
    private final class Current: Sendable {
        let state = Mutex<(clock: MasterClock?, generation: Int)>((nil, 0))
    }

    /// A node that serves as the master (`--serve-clock`) with relays in the config first tries to
    /// join the timeline they still serve (a master process that restarted while the wall played);
    /// every other node is set up at once.
    public static func start(settings: NodeSettings, players: [Player], logger: Logger) async -> ClockFollower {
        let relays = Array(settings.clockSources.dropFirst())
        guard settings.serveClock, !settings.useLocalClock, !relays.isEmpty else {
            return ClockFollower(settings: settings, players: players, logger: logger)
        }
        let current = Current()
        logger.info(
            "looking for a wall's timeline at the relays before serving the master clock",
            metadata: ["clock.relays": "\(relays)", "clock.join_timeout_ns": .nanoseconds(joinTimeout)])
        guard
            let joined = await ClockJoin.join(
                relays: relays, configuration: serverConfiguration(settings, listen: settings.clock),
                timeout: joinTimeout, logger: logger,
                onStatus: followingPlayer(players, current: current, nodeID: settings.id, logger: logger))
        else {
            logger.info("no relay serves a wall's timeline; serving this machine's clock")
            return ClockFollower(settings: settings, players: players, logger: logger)
        }
        logger.notice(
            "joined the wall's timeline; serving it as the master's stand-in",
            metadata: [
                "clock.source": "\(joined.sources.selectedSource?.description ?? "a relay")",
                "clock.master": "\(joined.sources.status.master?.description ?? "unknown")",
            ])
        return ClockFollower(joined: joined, listen: settings.clock, current: current, logger: logger)
    }

    private init(joined: ClockJoin, listen: Endpoint, current: Current, logger: Logger) {
        self.joined = joined
        sources = joined.sources
        server = joined.server
        relayAddress = listen
        peers = nil
        self.current = current
        self.logger = logger
    }

    init(settings: NodeSettings, players: [Player], logger: Logger) {
        self.logger = logger
        joined = nil
        let current = Current()
        self.current = current
        if settings.useLocalClock {
            sources = nil
            server = nil
            relayAddress = nil
            peers = nil
            current.state.withLock { $0 = (MasterClock.host, 0) }
            for player in players { player.masterClock = .host }
            return
        }
        let relay = settings.relay.map { _ in ClockRelay() }
        if settings.serveClock {
            // Where the config says, and nowhere else: a config naming 127.0.0.1 keeps the master
            // off the network (NodeSettings checked the address is this machine's).
            // With a key it still answers GStreamer's unauthenticated format, for stock clients.
            server = SyncClockServer(
                configuration: Self.serverConfiguration(settings, listen: settings.clock), logger: logger)
        } else if let address = settings.relay, let relay {
            server = SyncClockServer(
                configuration: Self.serverConfiguration(settings, listen: address), relaying: relay, logger: logger)
        } else {
            server = nil
        }
        relayAddress = settings.relay
        let peers = PeerClocks(peers: settings.peerClocks, key: settings.clockKey, logger: logger)
        self.peers = peers.isEmpty ? nil : peers
        let ptp = settings.ptp.map { [LinuxPTPSource(config: $0, node: settings.id, logger: logger)] } ?? []
        sources = ClockSources(
            preferring: ptp, sources: settings.followedSources,
            configuration: SyncClockClient.Configuration(key: settings.clockKey),
            ownRelay: relay == nil ? nil : server?.identity, feeding: relay, logger: logger,
            onStatus: Self.followingPlayer(players, current: current, nodeID: settings.id, logger: logger))
    }

    private static func serverConfiguration(_ settings: NodeSettings, listen: Endpoint) -> SyncClockServer.Configuration
    {
        SyncClockServer.Configuration(listen: [listen], key: settings.clockKey)
    }

    /// Hands every locked (or holdover) status to the player's master clock: the same clock while
    /// the generation lasts, a new one for a new generation.
    private static func followingPlayer(
        _ players: [Player], current: Current, nodeID: String, logger: Logger
    ) -> @Sendable (ClockStatus) -> Void {
        { status in
            guard status.state == .locked || status.state == .holdover else { return }
            let created = current.state.withLock { state -> MasterClock? in
                if let clock = state.clock, state.generation == status.generation {
                    clock.follow(status.mapping)
                    return nil
                }
                let clock = MasterClock(name: "lockstep-\(nodeID)-\(status.generation)", following: status.mapping)
                state = (clock, status.generation)
                return clock
            }
            if let created {
                for player in players { player.masterClock = created }
                logger.info(
                    "following the master clock",
                    metadata: [
                        "clock.generation": .value(status.generation), "clock.offset_ns": .nanoseconds(status.offset),
                    ])
            }
        }
    }

    /// The master clock the player follows, once locked.
    public var masterClock: MasterClock? { current.state.withLock { $0.clock } }

    /// Whether a wall can play on the master's time now (`ClockStatus.isUsable`).
    public var isUsable: Bool {
        guard let sources else { return true }
        return sources.status.isUsable(atLocal: LocalClock.process.now())
    }

    /// The clock's state, for reports: unsynced, locking, locked or holdover.
    public var state: ClockState { sources?.status.state ?? .locked }

    /// The master's timeline (epoch) the node follows, when the master says (Lockstep format).
    public var masterEpoch: UInt64? { sources?.status.master?.epoch }
    /// Whether the master serves real time (UTC): what a schedule needs.
    public var masterIsRealtime: Bool? { sources?.status.master?.isRealtime }

    /// How the node follows its master, for status reports.
    public func report() -> ClockReport {
        guard let sources else {
            return ClockReport(
                state: .locked, usable: true, server: "local clock", offset: .zero, errorBound: .zero, ratePPM: 0)
        }
        let status = sources.status
        let now = LocalClock.process.now()
        let followed = sources.selectedSourceName
        return ClockReport(
            state: status.state, usable: status.isUsable(atLocal: now),
            server: followed ?? (sources.names.count == 1 ? sources.names[0] : "none"),
            offset: status.offset.isNumeric ? status.offset : nil,
            errorBound: status.errorBound.isNumeric ? status.errorBound(atLocal: now) : nil,
            guaranteedErrorBound: status.guaranteedErrorBound.isNumeric
                ? status.guaranteedErrorBound(atLocal: now) : nil,
            roundTrip: status.roundTrip.count > 0 ? status.roundTrip.minimum : nil,
            ratePPM: status.state == .unsynced ? nil : status.ratePPM, serving: server != nil,
            epoch: status.master?.epoch, realtime: status.master?.isRealtime, stratum: status.path?.stratum,
            relaying: relayAddress?.description,
            sources: sources.reports().map { report in
                ClockSourceReport(
                    source: report.source.description, state: report.status.state, kind: report.kind,
                    standing: report.standing,
                    errorBound: report.status.errorBound.isNumeric ? report.status.errorBound(atLocal: now) : nil)
            },
            // A source that does not say (a stock GStreamer master) is a master: it passes nothing on.
            inheritedErrorBound: status.state == .locked ? status.path?.rootErrorBound ?? .zero : nil,
            peers: peers?.reports(against: status, at: now))
    }

    /// Serves (if asked) and follows the master until cancelled.
    public func run() async throws {
        guard let sources else {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            return
        }
        if let server {
            let addresses = try server.start()
            logger.info(
                relayAddress == nil ? "serving the master clock" : "relaying the master clock",
                metadata: ["clock.listen": "\(addresses)"])
        }
        defer { server?.stop() }
        if let joined {
            try await joined.run()
            return
        }
        guard let peers else { return try await sources.run() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await peers.run() }
            group.addTask { try await sources.run() }
            // The sources end only by failing or being cancelled: either way the node's clock is done.
            try await group.next()
            group.cancelAll()
        }
    }
}
