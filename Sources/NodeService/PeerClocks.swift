import LockstepNet
import LockstepTime
import Logging
import SyncClock
import WallProtocol

/// This node's clock measured against every other node that serves the time it follows
/// (`serve-clock`), directly: one clock client per such node, as if it were a source, though it is
/// never followed.
///
/// Two-way time transfer cannot see a path's asymmetry, so a node behind a path slower one way
/// follows a clock off by half the difference and cannot tell. Two such nodes can: the gap between
/// their clocks is what their exchange with each other measures, within that exchange's own
/// guaranteed bound (half its round trip, whatever the direct path's asymmetry). So a pair's clocks
/// are at most `PeerClockReport.pairBound` apart, a figure that rests on no symmetric path, and is
/// tight where the two are near each other on the network even when both are far from the master.
final class PeerClocks: Sendable {
    private let peers: [(id: String, client: SyncClockClient)]
    private let logger: Logger

    init(peers: [(id: String, address: Endpoint)], key: ClockKey?, logger: Logger) {
        self.logger = logger
        // Polled no faster than a source once stable: a wall of n nodes exchanges n·(n-1) streams.
        self.peers = peers.map { peer in
            (
                peer.id,
                SyncClockClient(
                    server: peer.address, configuration: SyncClockClient.Configuration(rateWanderPPM: Self.rateWanderPPM, key: key),
                    logger: logger)
            )
        }
    }

    var isEmpty: Bool { peers.isEmpty }

    /// How far the two served timelines' relative rate may stray, ppm. Each is an estimate its node's
    /// servo steers, so it wanders far more than a quartz oscillator (the 0.1 ppm a source gets);
    /// a larger change still shows as inconsistent samples and trims the client's window.
    static let rateWanderPPM = 20.0

    /// Runs every client until cancelled; a client that fails is logged and left out of reports.
    /// Returns only when cancelled, even when every client failed: the node's own clock runs beside.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for peer in peers {
                group.addTask { [logger] in
                    do {
                        try await peer.client.run()
                    } catch {
                        logger.warning(
                            "cannot measure this node's clock against another's",
                            metadata: ["clock.peer": "\(peer.id)", "error": "\(error)"])
                    }
                }
            }
            await group.waitForAll()
        }
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    /// Each peer's clock against `own` (this node's followed status) at local time `now`: the peers
    /// whose client is locked on the same master timeline (epoch) as `own`.
    func reports(against own: ClockStatus, at now: MediaTime) -> [PeerClockReport] {
        guard own.state == .locked || own.state == .holdover, let local = now.nanoseconds else { return [] }
        return peers.compactMap { peer in
            let status = peer.client.status
            guard status.state == .locked, status.master?.epoch == own.master?.epoch else { return nil }
            let bound = status.guaranteedErrorBound(atLocal: now)
            guard bound.isNumeric else { return nil }
            let offset =
                status.mapping.masterNanoseconds(atLocalNanoseconds: local)
                - own.mapping.masterNanoseconds(atLocalNanoseconds: local)
            return PeerClockReport(
                node: peer.id, offset: MediaTime(nanoseconds: offset), guaranteedErrorBound: bound,
                roundTrip: status.roundTrip.count > 0 ? status.roundTrip.minimum : nil)
        }
    }
}
