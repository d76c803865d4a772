import LockstepTime
import Prometheus
import Synchronization
import WallProtocol

/// The node's `/metrics` in Prometheus text format, from its status at each scrape.
final class NodeMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let clockLocked: Gauge
    private let clockErrorBound: Gauge
    private let clockOffset: Gauge
    private let clockRate: Gauge
    private let playerRate: Gauge
    private let playing: Gauge
    private let position: Gauge
    private let presented: Counter
    private let late: Counter
    private let dropped: Counter
    private let reported = Mutex((presented: UInt64(0), late: UInt64(0), dropped: UInt64(0)))

    init(node: String) {
        let labels = [("node", node)]
        clockLocked = registry.makeGauge(
            name: "lockstep_clock_locked", labels: labels, help: "1 while the node is locked to the master clock")
        clockErrorBound = registry.makeGauge(
            name: "lockstep_clock_error_bound_seconds", labels: labels,
            help: "Bound on the master-clock estimate's error")
        clockOffset = registry.makeGauge(
            name: "lockstep_clock_offset_seconds", labels: labels, help: "Master time minus local time")
        clockRate = registry.makeGauge(
            name: "lockstep_clock_rate_ppm", labels: labels, help: "Master clock rate relative to the local clock")
        playerRate = registry.makeGauge(name: "lockstep_player_rate", labels: labels, help: "Playback rate")
        playing = registry.makeGauge(
            name: "lockstep_player_playing", labels: labels, help: "1 while frames are presented")
        position = registry.makeGauge(
            name: "lockstep_player_position_seconds", labels: labels, help: "Current item time")
        presented = registry.makeCounter(
            name: "lockstep_frames_presented_total", labels: labels, help: "Frames the video sink presented")
        late = registry.makeCounter(
            name: "lockstep_frames_late_total", labels: labels, help: "Frames presented more than 1 ms after due")
        dropped = registry.makeCounter(
            name: "lockstep_frames_dropped_total", labels: labels, help: "Frames the video sink dropped as too late")
    }

    func render(status: NodeStatus) -> String {
        clockLocked.set(to: status.clock.isLocked ? 1 : 0)
        clockErrorBound.set(to: status.clock.errorBound?.seconds ?? .infinity)
        clockOffset.set(to: status.clock.offset?.seconds ?? 0)
        clockRate.set(to: status.clock.ratePPM ?? 0)
        playerRate.set(to: Double(status.player.rate))
        playing.set(to: status.player.timeControlStatus == "playing" ? 1 : 0)
        position.set(to: status.player.position.seconds)
        let player = status.player
        let (newPresented, newLate, newDropped) = reported.withLock { last in
            defer { last = (player.framesPresented, player.framesLate, player.framesDropped) }
            return (
                player.framesPresented &- last.presented, player.framesLate &- last.late,
                player.framesDropped &- last.dropped
            )
        }
        presented.increment(by: Int64(newPresented))
        late.increment(by: Int64(newLate))
        dropped.increment(by: Int64(newDropped))
        return registry.emitToString()
    }
}
