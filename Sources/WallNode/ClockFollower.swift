import LockstepNet
import LockstepTime
import Logging
import SyncClock
import Synchronization
import WallPlayer
import WallProtocol

/// Keeps the player's master clock on the wall's master: the clock sources (the master, then
/// relaying nodes) whose every estimate goes straight to a GStreamer clock; optionally the master
/// clock server itself, or a relay of the time this node follows (a boundary clock).
///
/// A GStreamer clock must never jump back, so each timeline of the sources (a new one starts only
/// when the master's time itself jumped or the wall moved to another master timeline; a change of
/// source slews) gets a new `MasterClock`; the player takes it at its next start, which is when
/// the timeline re-anchors.
///
/// With `--use-local-clock` (a benchmark baseline) there is no client: the node runs on this
/// machine's clock, which every node on the machine shares exactly.
final class ClockFollower: Sendable {
    private let sources: ClockSources?
    private let server: SyncClockServer?
    /// Where the node relays, when it does.
    private let relayAddress: Endpoint?
    private let current: Current
    private let logger: Logger

    /// The clock the player follows and the timeline it belongs to.
    private final class Current: Sendable {
        let state = Mutex<(clock: MasterClock?, timeline: Int)>((nil, 0))
    }

    init(settings: NodeSettings, player: Player, logger: Logger) {
        self.logger = logger
        let current = Current()
        self.current = current
        let nodeID = settings.id
        if settings.useLocalClock {
            sources = nil
            server = nil
            relayAddress = nil
            current.state.withLock { $0 = (MasterClock.host, 0) }
            player.masterClock = .host
            return
        }
        let relay = settings.relay.map { _ in ClockRelay() }
        if settings.serveClock {
            // Where the config says, and nowhere else: a config naming 127.0.0.1 keeps the master
            // off the network (NodeSettings checked the address is this machine's).
            // With a key it still answers GStreamer's unauthenticated format, for stock clients.
            server = SyncClockServer(
                configuration: SyncClockServer.Configuration(listen: [settings.clock], key: settings.clockKey),
                logger: logger)
        } else if let address = settings.relay, let relay {
            server = SyncClockServer(
                configuration: SyncClockServer.Configuration(listen: [address], key: settings.clockKey),
                relaying: relay, logger: logger)
        } else {
            server = nil
        }
        relayAddress = settings.relay
        sources = ClockSources(
            sources: settings.followedSources, configuration: SyncClockClient.Configuration(key: settings.clockKey),
            ownRelay: relay == nil ? nil : server?.identity, feeding: relay, logger: logger
        ) { status in
            guard status.state == .locked || status.state == .holdover else { return }
            let created = current.state.withLock { state -> MasterClock? in
                if let clock = state.clock, state.timeline == status.timeline {
                    clock.follow(status.mapping)
                    return nil
                }
                let clock = MasterClock(name: "lockstep-\(nodeID)-\(status.timeline)", following: status.mapping)
                state = (clock, status.timeline)
                return clock
            }
            if let created {
                player.masterClock = created
                logger.info(
                    "following the master clock",
                    metadata: [
                        "clock.timeline": .value(status.timeline), "clock.offset_ns": .nanoseconds(status.offset),
                    ])
            }
        }
    }

    /// The master clock the player follows, once locked.
    var masterClock: MasterClock? { current.state.withLock { $0.clock } }

    /// Whether the player can run on the master's time now.
    var isLocked: Bool {
        guard let sources else { return true }
        return sources.status.state == .locked || sources.status.state == .holdover
    }

    /// The master's timeline (epoch) the node follows, when the master says (Lockstep format).
    var masterEpoch: UInt64? { sources?.status.master?.epoch }

    /// How the node follows its master, for status reports.
    func report() -> ClockReport {
        guard let sources else {
            return ClockReport(state: "locked", server: "local clock", offset: .zero, errorBound: .zero, ratePPM: 0)
        }
        let status = sources.status
        let now = LocalClock.process.now()
        let followed = sources.selectedSource?.description
        return ClockReport(
            state: status.state.rawValue,
            server: followed ?? (sources.sources.count == 1 ? sources.sources[0].description : "none"),
            offset: status.offset.isNumeric ? status.offset : nil,
            errorBound: status.errorBound.isNumeric ? status.errorBound(atLocal: now) : nil,
            guaranteedErrorBound: status.guaranteedErrorBound.isNumeric
                ? status.guaranteedErrorBound(atLocal: now) : nil,
            roundTrip: status.roundTrip.count > 0 ? status.roundTrip.minimum : nil,
            ratePPM: status.state == .unsynced ? nil : status.ratePPM, serving: server != nil,
            epoch: status.master?.epoch, stratum: status.path?.stratum, relaying: relayAddress?.description,
            sources: sources.reports().map { report in
                ClockSourceReport(
                    source: report.source.description, state: report.status.state.rawValue, standing: report.standing,
                    errorBound: report.status.errorBound.isNumeric ? report.status.errorBound(atLocal: now) : nil)
            })
    }

    /// Waits for lock, at most `timeout`.
    func waitUntilLocked(timeout: MediaTime) async throws(NodeError) {
        guard let sources else { return }
        do {
            _ = try await sources.waitUntilLocked(timeout: timeout)
        } catch {
            throw .clockNotLocked(state: sources.status.state.rawValue, waited: timeout)
        }
    }

    /// Serves (if asked) and follows the master until cancelled.
    func run() async throws {
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
        try await sources.run()
    }
}
