import Logging
import ServiceLifecycle
import WallPlayer

/// One screen of the wall: the clock follower, the player, the frame log and the control API,
/// run together as a service group that shuts down cleanly on SIGTERM or SIGINT.
struct NodeDaemon {
    let settings: NodeSettings
    let logger: Logger

    func run() async throws {
        let player = QueuePlayer(
            items: [], video: settings.video, audioSinkDescription: settings.audioSink,
            logger: Logger(label: "lockstep.player"))
        player.automaticallyWaitsToMinimizeStalling = false
        player.realtimeRenderPriority = settings.realtimePriority
        player.pipelineLatency = settings.latency
        let clock = ClockFollower(settings: settings, player: player, logger: Logger(label: "lockstep.clock"))
        let frames = FrameLog()
        let controller = NodeController(
            settings: settings, player: player, clock: clock, frames: frames, logger: logger)
        let application = try ControlServer.application(
            controller: controller, frames: frames, metrics: NodeMetrics(node: settings.id),
            logger: Logger(label: "lockstep.control"))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: TaskService("clock") { try await clock.run() }),
                    .init(service: TaskService("frames") { await frames.record(from: player) }),
                    .init(service: application),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.info(
            "node starting",
            metadata: [
                "node.id": "\(settings.id)", "node.wall": "\(settings.wallName)",
                "node.control": "\(settings.control)", "clock.server": "\(settings.clock)",
                "node.media": "\(settings.media)", "video.sink": "\(settings.video.sinkDescription)",
            ])
        try await group.run()
        await controller.stop()
        logger.info("node stopped")
    }
}

/// A long-running task as a service: cancelled when the group shuts down.
struct TaskService: Service {
    let name: String
    let body: @Sendable () async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.body = body
    }

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await body() }
    }
}
