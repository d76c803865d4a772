import LockstepNet
import LockstepTime
import Logging
import SyncClock
import Synchronization
import WallPlayer

/// Keeps the player's master clock on the wall's master: a SyncClock client whose every estimate
/// goes straight to a GStreamer clock, and optionally the master clock server itself.
///
/// A GStreamer clock must never jump back, so each timeline of the client (it starts a new one
/// when the master restarts or jumps) gets a new `MasterClock`; the player takes it at its next
/// start, which is when the controller resyncs the wall.
final class ClockFollower: Sendable {
    let client: SyncClockClient
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
        client = SyncClockClient(server: settings.clock, logger: logger) { status in
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
                    metadata: ["clock.timeline": "\(status.timeline)", "clock.offset": "\(status.offset)"])
            }
        }
        if settings.serveClock {
            server = SyncClockServer(
                configuration: SyncClockServer.Configuration(listen: [
                    Endpoint(host: "0.0.0.0", port: settings.clock.port),
                    Endpoint(host: "::", port: settings.clock.port),
                ]),
                logger: logger)
        } else {
            server = nil
        }
    }

    var isServing: Bool { server != nil }

    /// The master clock the player follows, once locked.
    var masterClock: MasterClock? { current.state.withLock { $0.clock } }

    var status: ClockStatus { client.status }

    /// Waits for lock, at most `timeout`.
    func waitUntilLocked(timeout: MediaTime) async throws(NodeError) {
        do {
            _ = try await client.waitUntilLocked(timeout: timeout)
        } catch {
            throw .clockNotLocked(state: client.status.state.rawValue, waited: timeout)
        }
    }

    /// Serves (if asked) and follows the master until cancelled.
    func run() async throws {
        if let server {
            let addresses = try server.start()
            logger.info("serving the master clock", metadata: ["clock.listen": "\(addresses)"])
        }
        defer { server?.stop() }
        try await client.run()
    }
}
