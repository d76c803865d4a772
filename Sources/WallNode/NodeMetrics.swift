import LockstepCLI
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
    private let timelineVersion: Gauge
    private let timelineInStep: Gauge
    private let timelineOffset: Gauge
    private let rejoins: Counter
    private let buildInfo: Gauge
    private let reported = Mutex((presented: UInt64(0), late: UInt64(0), dropped: UInt64(0), rejoins: 0))

    init(node: String) {
        let labels = [("node", node)]
        clockLocked = registry.makeGauge(
            descriptor: Self.metric("clock_locked", "1 while the node is locked to the master clock"), labels: labels)
        clockErrorBound = registry.makeGauge(
            descriptor: Self.metric("clock_error_bound_seconds", "Bound on the master-clock estimate's error"),
            labels: labels)
        clockOffset = registry.makeGauge(
            descriptor: Self.metric("clock_offset_seconds", "Master time minus local time"), labels: labels)
        clockRate = registry.makeGauge(
            descriptor: Self.metric("clock_rate_ppm", "Master clock rate relative to the local clock"), labels: labels)
        playerRate = registry.makeGauge(descriptor: Self.metric("player_rate", "Playback rate"), labels: labels)
        playing = registry.makeGauge(
            descriptor: Self.metric("player_playing", "1 while frames are presented"), labels: labels)
        position = registry.makeGauge(
            descriptor: Self.metric("player_position_seconds", "Current item time"), labels: labels)
        presented = registry.makeCounter(
            descriptor: Self.metric("frames_presented_total", "Frames the video sink presented"), labels: labels)
        late = registry.makeCounter(
            descriptor: Self.metric("frames_late_total", "Frames presented more than 1 ms after due"), labels: labels)
        dropped = registry.makeCounter(
            descriptor: Self.metric("frames_dropped_total", "Frames the video sink dropped as too late"), labels: labels
        )
        timelineVersion = registry.makeGauge(
            descriptor: Self.metric("timeline_version", "Version of the timeline the node follows (0: none)"),
            labels: labels)
        timelineInStep = registry.makeGauge(
            descriptor: Self.metric("timeline_in_step", "1 while the frames presented are where the timeline says"),
            labels: labels)
        timelineOffset = registry.makeGauge(
            descriptor: Self.metric(
                "timeline_offset_seconds", "How far behind the timeline the last judged frame was (negative: ahead)"),
            labels: labels)
        buildInfo = registry.makeGauge(
            descriptor: Self.metric("build_info", "Always 1; the labels say which Lockstep this node runs"),
            labels: labels + [("version", LockstepVersion.current)])
        buildInfo.set(to: 1)
        rejoins = registry.makeCounter(
            descriptor: Self.metric(
                "timeline_rejoins_total", "Times the node found itself off the timeline and started again in step"),
            labels: labels)
    }

    /// A metric in the `lockstep` namespace, its unit (seconds, ppm, total) split off its name.
    private static func metric(_ name: String, _ help: String) -> MetricNameDescriptor {
        let unit = ["seconds", "ppm", "total"].first { name.hasSuffix("_\($0)") } ?? ""
        let base = unit.isEmpty ? name : String(name.dropLast(unit.count + 1))
        return MetricNameDescriptor(namespace: "lockstep", metricName: base, unitName: unit, helpText: help)
    }

    func render(status: NodeStatus) -> String {
        clockLocked.set(to: status.clock.isLocked ? 1 : 0)
        clockErrorBound.set(to: status.clock.errorBound?.seconds ?? .infinity)
        clockOffset.set(to: status.clock.offset?.seconds ?? 0)
        clockRate.set(to: status.clock.ratePPM ?? 0)
        playerRate.set(to: Double(status.player.rate))
        playing.set(to: status.player.timeControlStatus == "playing" ? 1 : 0)
        position.set(to: status.player.position.seconds)
        let timeline = status.timeline
        timelineVersion.set(to: Double(timeline?.version ?? 0))
        timelineInStep.set(to: timeline?.inStep == true ? 1 : 0)
        timelineOffset.set(to: timeline?.offset?.seconds ?? 0)
        let player = status.player
        let rejoined = timeline?.rejoins ?? 0
        let (newPresented, newLate, newDropped, newRejoins) = reported.withLock { last in
            defer { last = (player.framesPresented, player.framesLate, player.framesDropped, rejoined) }
            return (
                player.framesPresented &- last.presented, player.framesLate &- last.late,
                player.framesDropped &- last.dropped, max(0, rejoined - last.rejoins)
            )
        }
        presented.increment(by: Int64(newPresented))
        late.increment(by: Int64(newLate))
        dropped.increment(by: Int64(newDropped))
        rejoins.increment(by: Int64(newRejoins))
        return registry.emitToString()
    }
}
