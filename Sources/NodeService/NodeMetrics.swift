import LockstepCLI
import LockstepLocks
import LockstepTime
import Prometheus
import WallProtocol

/// The node's `/metrics` in Prometheus text format, from its status at each scrape, plus the
/// presentation lateness of every frame (observed as it is presented) and the process's figures.
/// Families are written sorted by name, so two scrapes diff cleanly; quantities are in base units
/// (seconds, bytes, ratios).
public final class NodeMetrics: Sendable {
    /// Lateness buckets, seconds: early frames, the scheduler's wake-up floor (~0.1–0.4 ms on this
    /// class of machine), a millisecond (late by `FrameLog.lateThreshold`), a frame period at 30 and 60 fps.
    static let latenessBuckets: [Double] = [
        -0.001, -0.0001, 0, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.0167, 0.0334, 0.1,
    ]

    private let registry = PrometheusCollectorRegistry()
    private let clockLocked: Gauge
    private let clockErrorBound: Gauge
    private let clockGuaranteedErrorBound: Gauge
    private let clockOffset: Gauge
    private let clockRate: Gauge
    private let clockRoundTrip: Gauge
    private let realtimeGranted: Gauge
    private let lateness: ValueHistogram
    private let processCPU: Counter
    private let processResident: Gauge
    private let processOpenDescriptors: Gauge
    private let processMaximumDescriptors: Gauge
    private let processStart: Gauge
    private let playerRate: Gauge
    private let pipelinesAbandoned: Gauge
    private let clockHoldover: Gauge
    private let contentMissing: Gauge
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
    /// The machine's health (`MachineHealth`): NaN where the machine does not say.
    private let machine: [(name: String, gauge: Gauge, value: @Sendable (MachineHealth) -> Double?)]
    /// 1 while a service of the node cannot work, per service (`ServiceProblem`).
    private let serviceProblems: [String: Gauge]
    /// The services a node reports problems of.
    public static let services = ["content", "display", "machine", "plays", "schedule", "show-control"]
    /// Per other node measured directly (`PeerClockReport`): its offset and how far apart the two
    /// clocks may be; made as the peers first appear.
    private let peerGauges = Mutex<[String: (offset: Gauge, bound: Gauge)]>([:])
    private let labels: [(String, String)]
    private let reported = Mutex(
        (presented: UInt64(0), late: UInt64(0), dropped: UInt64(0), rejoins: 0, cpuSeconds: 0.0))

    /// Every family carries the wall's and the node's name, so two walls in one Prometheus are told apart.
    public init(wall: String, node: String) {
        let labels = [("wall", wall), ("node", node)]
        self.labels = labels
        let registry = self.registry
        serviceProblems = Dictionary(
            uniqueKeysWithValues: Self.services.map { service in
                (
                    service,
                    registry.makeGauge(
                        descriptor: Self.metric(
                            "service_problem",
                            "1 while a service of the node cannot work (the screen plays on; /status says why)"),
                        labels: labels + [("service", service)])
                )
            })
        clockLocked = registry.makeGauge(
            descriptor: Self.metric(
                "clock_locked",
                "1 while a wall can play on the node's clock: locked, or in holdover within its usable bound"),
            labels: labels)
        clockErrorBound = registry.makeGauge(
            descriptor: Self.metric(
                "clock_error_bound_seconds",
                "Bound on the master-clock estimate's error, assuming the path's fastest exchanges symmetric"),
            labels: labels)
        clockGuaranteedErrorBound = registry.makeGauge(
            descriptor: Self.metric(
                "clock_guaranteed_error_bound_seconds",
                "Bound on the master-clock estimate's error whatever the path's asymmetry (half the round trip, plus drift)"
            ),
            labels: labels)
        clockOffset = registry.makeGauge(
            descriptor: Self.metric("clock_offset_seconds", "Master time minus local time"), labels: labels)
        clockRate = registry.makeGauge(
            descriptor: Self.metric(
                "clock_rate_ratio", "Master clock rate relative to the local clock, minus 1 (1e-6 is 1 ppm)"),
            labels: labels)
        clockRoundTrip = registry.makeGauge(
            descriptor: Self.metric("clock_round_trip_seconds", "Latest round trip to the master clock"),
            labels: labels)
        realtimeGranted = registry.makeGauge(
            descriptor: Self.metric(
                "realtime_priority_granted", "1 when the render thread runs at SCHED_FIFO (CAP_SYS_NICE granted)"),
            labels: labels)
        lateness = registry.makeValueHistogram(
            descriptor: Self.metric(
                "presentation_lateness_seconds", "When each frame was presented after it was due (negative: early)"),
            labels: labels, buckets: Self.latenessBuckets)
        processCPU = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                metricName: "process_cpu", unitName: "seconds_total", helpText: "User and system CPU time"),
            labels: labels)
        processResident = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                metricName: "process_resident_memory", unitName: "bytes", helpText: "Resident memory"),
            labels: labels)
        processOpenDescriptors = registry.makeGauge(
            descriptor: MetricNameDescriptor(metricName: "process_open_fds", helpText: "Open file descriptors"),
            labels: labels)
        processMaximumDescriptors = registry.makeGauge(
            descriptor: MetricNameDescriptor(metricName: "process_max_fds", helpText: "The descriptor limit"),
            labels: labels)
        processStart = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                metricName: "process_start_time", unitName: "seconds", helpText: "Start time, seconds since the epoch"),
            labels: labels)
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
        clockHoldover = registry.makeGauge(
            descriptor: Self.metric(
                "clock_holdover", "1 while the node's clock runs on its last estimate, no source answering"),
            labels: labels)
        contentMissing = registry.makeGauge(
            descriptor: Self.metric(
                "content_missing", "Files the timeline names that the node does not hold (content store or media roots)"
            ),
            labels: labels)
        pipelinesAbandoned = registry.makeGauge(
            descriptor: Self.metric(
                "player_pipelines_abandoned", "Pipelines that wedged when replaced and were left on their own threads"),
            labels: labels)
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
        let health: [(String, String, @Sendable (MachineHealth) -> Double?)] = [
            (
                "machine_cpu_busy_ratio", "Share of all the machine's CPU time busy over the last second or more",
                { $0.cpuBusy }
            ),
            ("machine_cores", "The machine's CPU cores", { Double($0.cores) }),
            ("machine_memory_total_bytes", "The machine's memory", { $0.memoryTotalBytes.map { Double($0) } }),
            (
                "machine_memory_available_bytes", "Memory the kernel can give without swapping (MemAvailable)",
                { $0.memoryAvailableBytes.map { Double($0) } }
            ),
            (
                "machine_temperature_celsius", "The hottest thermal zone the kernel reports (NaN: none)",
                { $0.temperatureCelsius }
            ),
            ("machine_uptime_seconds", "Seconds since the machine booted", { $0.uptimeSeconds }),
            (
                "store_free_bytes", "Bytes free for the content store (its file system's, less its reserve)",
                { $0.storeFreeBytes.map { Double($0) } }
            ),
            ("store_size_bytes", "Size of the content store's file system", { $0.storeSizeBytes.map { Double($0) } }),
            (
                "display_refresh_hertz",
                "Refresh rate of the display the node's window is on (NaN: no window of its own)",
                { $0.display?.refreshHz }
            ),
        ]
        machine = health.map { name, help, value in
            (name, registry.makeGauge(descriptor: Self.metric(name, help), labels: labels), value)
        }
        rejoins = registry.makeCounter(
            descriptor: Self.metric(
                "timeline_rejoins_total", "Times the node found itself off the timeline and started again in step"),
            labels: labels)
    }

    /// A metric in the `lockstep` namespace, its unit (seconds, ppm, total) split off its name.
    private static func metric(_ name: String, _ help: String) -> MetricNameDescriptor {
        let unit = ["seconds", "ratio", "total", "bytes", "celsius", "hertz"].first { name.hasSuffix("_\($0)") } ?? ""
        let base = unit.isEmpty ? name : String(name.dropLast(unit.count + 1))
        return MetricNameDescriptor(namespace: "lockstep", metricName: base, unitName: unit, helpText: help)
    }

    /// Sets each measured peer's gauges; a peer measured before but not now reads NaN.
    private func renderPeers(_ peers: [PeerClockReport]) {
        peerGauges.withLock { gauges in
            for peer in peers where gauges[peer.node] == nil {
                let labels = self.labels + [("peer", peer.node)]
                gauges[peer.node] = (
                    registry.makeGauge(
                        descriptor: Self.metric(
                            "clock_peer_offset_seconds",
                            "Another node's clock minus this node's, measured directly between the two"),
                        labels: labels),
                    registry.makeGauge(
                        descriptor: Self.metric(
                            "clock_peer_bound_seconds",
                            "How far apart this node's clock and another's may be whatever the paths' asymmetry "
                                + "(measured offset plus half the round trip between them)"),
                        labels: labels)
                )
            }
            for (node, gauge) in gauges {
                let peer = peers.first { $0.node == node }
                gauge.offset.set(to: peer?.offset.seconds ?? .nan)
                gauge.bound.set(to: peer?.pairBound.seconds ?? .nan)
            }
        }
    }

    /// One frame's lateness, as the frame log records it.
    public func observeLateness(_ time: MediaTime) {
        guard time.isNumeric else { return }
        lateness.record(time.seconds)
    }

    public func render(status: NodeStatus, process: ProcessSample? = .current()) -> String {
        clockLocked.set(to: status.clock.usable ? 1 : 0)
        for family in machine { family.gauge.set(to: status.health.flatMap(family.value) ?? .nan) }
        for (service, gauge) in serviceProblems {
            gauge.set(to: status.problems?.contains { $0.service == service } == true ? 1 : 0)
        }
        clockErrorBound.set(to: status.clock.errorBound?.seconds ?? .infinity)
        clockGuaranteedErrorBound.set(to: status.clock.guaranteedErrorBound?.seconds ?? .infinity)
        clockOffset.set(to: status.clock.offset?.seconds ?? 0)
        clockRate.set(to: (status.clock.ratePPM ?? 0) / 1e6)
        clockRoundTrip.set(to: status.clock.roundTrip?.seconds ?? .nan)
        renderPeers(status.clock.peers ?? [])
        realtimeGranted.set(to: status.player.renderThread.hasPrefix("SCHED_FIFO") ? 1 : 0)
        playerRate.set(to: Double(status.player.rate))
        pipelinesAbandoned.set(to: Double(status.player.pipelinesAbandoned ?? 0))
        clockHoldover.set(to: status.clock.state == .holdover ? 1 : 0)
        contentMissing.set(to: Double(status.timeline?.missingMedia?.count ?? 0))
        playing.set(to: status.player.timeControlStatus == "playing" ? 1 : 0)
        position.set(to: status.player.position.seconds)
        let timeline = status.timeline
        timelineVersion.set(to: Double(timeline?.version ?? 0))
        timelineInStep.set(to: timeline?.inStep == true ? 1 : 0)
        timelineOffset.set(to: timeline?.offset?.seconds ?? 0)
        let player = status.player
        let rejoined = timeline?.rejoins ?? 0
        let cpuSeconds = process?.cpuSeconds ?? 0
        let (newPresented, newLate, newDropped, newRejoins, newCPU) = reported.withLock { last in
            defer { last = (player.framesPresented, player.framesLate, player.framesDropped, rejoined, cpuSeconds) }
            return (
                player.framesPresented &- last.presented, player.framesLate &- last.late,
                player.framesDropped &- last.dropped, max(0, rejoined - last.rejoins),
                max(0, cpuSeconds - last.cpuSeconds)
            )
        }
        processCPU.increment(by: newCPU)
        if let process {
            processResident.set(to: process.residentBytes)
            processOpenDescriptors.set(to: process.openDescriptors)
            processMaximumDescriptors.set(to: process.maximumDescriptors)
            processStart.set(to: process.startTime)
        }
        presented.increment(by: Int64(newPresented))
        late.increment(by: Int64(newLate))
        dropped.increment(by: Int64(newDropped))
        rejoins.increment(by: Int64(newRejoins))
        return Self.sortedByFamily(registry.emitToString())
    }

    /// The exposition with its families (each `# HELP`/`# TYPE` block with its samples) sorted by
    /// name: the registry keeps them in a dictionary, whose order changes from scrape to scrape.
    static func sortedByFamily(_ text: String) -> String {
        var families: [(name: String, lines: [Substring])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let name = String(line.split(separator: " ", maxSplits: 3).dropFirst(2).first ?? "")
                if families.last?.name != name { families.append((name, [])) }
            } else if families.isEmpty {
                families.append(("", []))
            }
            families[families.count - 1].lines.append(line)
        }
        return families.sorted { $0.name < $1.name }.map { $0.lines.joined(separator: "\n") }
            .joined(separator: "\n") + "\n"
    }
}
