import LockstepNet
import LockstepTime
import Logging
import SyncClock
import Synchronization
import WallPlayer
import WallProtocol

/// Keeps the player's master clock on the wall's master: a SyncClock client whose every estimate
/// goes straight to a GStreamer clock, and optionally the master clock server itself.
///
/// A GStreamer clock must never jump back, so each timeline of the client (it starts a new one
/// when the master restarts or jumps) gets a new `MasterClock`; the player takes it at its next
/// start, which is when the controller resyncs the wall.
///
/// With `--use-local-clock` (a benchmark baseline) there is no client: the node runs on this
/// machine's clock, which every node on the machine shares exactly.
final class ClockFollower: Sendable {
    private let client: SyncClockClient?
    private let server: SyncClockServer?
    private let current: Current
    private let logger: Logger

    /// The clock the player follows and the client timeline it belongs to.
    private final class Current: Sendable {
        let state = Mutex<(clock: MasterClock?, timeline: Int)>((nil, 0))
    }

    init(settings: NodeSettings, player: Player, logger: Logger) {
        self.logger = logger
        let current = Current()
        self.current = current
        let nodeID = settings.id
        if settings.useLocalClock {
            client = nil
            server = nil
            current.state.withLock { $0 = (MasterClock.host, 0) }
            player.masterClock = .host
            return
        }
        client = SyncClockClient(
            server: settings.clock, configuration: SyncClockClient.Configuration(key: settings.clockKey), logger: logger
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
                    metadata: ["clock.timeline": .value(status.timeline), "clock.offset_ns": .nanoseconds(status.offset)])
            }
        }
        if settings.serveClock {
            // Where the config says, and nowhere else: a config naming 127.0.0.1 keeps the master
            // off the network (NodeSettings checked the address is this machine's).
            // With a key it still answers GStreamer's unauthenticated format, for stock clients.
            server = SyncClockServer(
                configuration: SyncClockServer.Configuration(listen: [settings.clock], key: settings.clockKey),
                logger: logger)
        } else {
            server = nil
        }
    }

    /// The master clock the player follows, once locked.
    var masterClock: MasterClock? { current.state.withLock { $0.clock } }

    /// Whether the player can run on the master's time now.
    var isLocked: Bool {
        guard let client else { return true }
        return client.status.state == .locked || client.status.state == .holdover
    }

    /// The master's timeline (epoch) the node follows, when the master says (Lockstep format).
    var masterEpoch: UInt64? { client?.status.master?.epoch }

    /// How the node follows its master, for status reports.
    func report() -> ClockReport {
        guard let client else {
            return ClockReport(state: "locked", server: "local clock", offset: .zero, errorBound: .zero, ratePPM: 0)
        }
        let status = client.status
        return ClockReport(
            state: status.state.rawValue, server: client.server.description,
            offset: status.offset.isNumeric ? status.offset : nil,
            errorBound: status.errorBound.isNumeric ? status.errorBound(atLocal: LocalClock.process.now()) : nil,
            guaranteedErrorBound: status.guaranteedErrorBound.isNumeric
                ? status.guaranteedErrorBound(atLocal: LocalClock.process.now()) : nil,
            roundTrip: status.roundTrip.count > 0 ? status.roundTrip.minimum : nil,
            ratePPM: status.state == .unsynced ? nil : status.ratePPM, serving: server != nil,
            epoch: status.master?.epoch)
    }

    /// Waits for lock, at most `timeout`.
    func waitUntilLocked(timeout: MediaTime) async throws(NodeError) {
        guard let client else { return }
        do {
            _ = try await client.waitUntilLocked(timeout: timeout)
        } catch {
            throw .clockNotLocked(state: client.status.state.rawValue, waited: timeout)
        }
    }

    /// Serves (if asked) and follows the master until cancelled.
    func run() async throws {
        guard let client else {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            return
        }
        if let server {
            let addresses = try server.start()
            logger.info("serving the master clock", metadata: ["clock.listen": "\(addresses)"])
        }
        defer { server?.stop() }
        try await client.run()
    }
}
