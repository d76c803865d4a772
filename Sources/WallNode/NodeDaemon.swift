import LockstepCLI
import LockstepGuard
import Logging
import NIOCore
import NodeService
import ServiceLifecycle
import WallControl
import WallDisplay
import WallPlayer
import WallProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One screen of the wall: the clock follower, the player, the frame log and the control API,
/// run together as a service group that shuts down cleanly on SIGTERM or SIGINT.
///
/// Shutting down never waits long: commands still running after a second are cancelled, and a
/// watchdog ends the process 1.5 s after the signal whatever it still waits for, so a supervisor's
/// SIGTERM always works within two seconds.
struct NodeDaemon {
    /// How long after SIGTERM or SIGINT the process ends, gracefully or not.
    static let shutdownLimit = 1.5

    let settings: NodeSettings
    let logger: Logger

    /// The X errors ignored, logged once every 10 s at most, by kind and count.
    private func logIgnoredXErrors() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(10))
            let errors = OutputWindow.takeIgnoredErrors()
            guard !errors.isEmpty else { continue }
            logger.warning(
                "X errors ignored in the last 10 s",
                metadata: ["x.errors": .array(errors.map { .string($0.description) })])
        }
    }

    func run() async throws {
        Termination.exitAfterSignal(within: Self.shutdownLimit, program: "wallnode")
        // The config is read at start; a SIGHUP (a terminal closed, a reload by habit) changes nothing.
        Termination.onHangup { [logger] in
            logger.notice(
                "SIGHUP ignored: the config is read at start only; restart the node to apply a new one (systemctl restart wallnode)"
            )
        }
        let fileLimit = FileLimit.raise()
        // screen.display is the display of every X connection the node makes: its window's, and the
        // video sink's and GStreamer's GL context's, which read $DISPLAY. Set before the player exists.
        if let display = settings.window?.display { setenv("DISPLAY", display, 1) }
        // The node's own window, before the player: the sink draws into it from its first frame.
        var video = settings.video
        let window: OutputWindow?
        do {
            window = try settings.window.map { placement throws(DisplayError) in try OutputWindow(placement) }
        } catch {
            throw NodeError.cannotShow("\(error)")
        }
        defer { window?.close() }
        if let window, let placement = settings.window {
            video.windowHandle = window.handle
            // A fullscreen window is the monitor's size, whatever the config's output says.
            if video.outputSize == nil || placement.fullscreen {
                video.outputSize = PixelSize(width: window.requested.width, height: window.requested.height)
            }
            logger.info(
                "window open",
                metadata: [
                    "window.id": .value(window.handle), "window.rect": "\(window.requested)",
                    "window.fullscreen": .value(placement.fullscreen),
                ])
        }
        // A second player where the screen allows it: a cut from a playing screen is prepared on
        // it while the screen plays on (NodeScreen.standbyAllowed); and one for each cue kept in
        // standby, its first frame prerolled.
        let count =
            NodeScreen.standbyAllowed(settings: settings, window: window)
            ? 2 + CueConfig.standbyNames(settings.wall.cues).count : 1
        let players = (0..<count).map { _ in
            let player = QueuePlayer(
                items: [], video: video, audioSinkDescription: settings.audioSink,
                logger: Logger(label: "lockstep.player"))
            player.automaticallyWaitsToMinimizeStalling = false
            player.realtimeRenderPriority = settings.realtimePriority
            player.pipelineLatency = settings.latency
            // Every node chooses alike, from the config, whatever language its environment has.
            player.setMediaSelectionCriteria(
                PlayerMediaSelectionCriteria(preferredLanguages: settings.wall.audioLanguages),
                forMediaCharacteristic: .audible)
            player.setMediaSelectionCriteria(
                PlayerMediaSelectionCriteria(preferredLanguages: settings.wall.subtitleLanguages),
                forMediaCharacteristic: .legible)
            return player
        }
        let clock = await ClockFollower.start(
            settings: settings, players: players, logger: Logger(label: "lockstep.clock"))
        let metrics = NodeMetrics(wall: settings.wallName, node: settings.id)
        let frames = FrameLog(displayLatency: settings.displayLatency) { metrics.observeLateness($0) }
        let screen = NodeScreen(
            settings: settings, players: players, frames: frames, window: window,
            logger: Logger(label: "lockstep.screen")
        )
        let node = Node(settings: settings, screen: screen, clock: clock, logger: logger)
        await node.recoverStoredTimeline()
        // Under systemd (Type=notify) the node is started once its control API answers, and restarted
        // when its controller stops answering for a watchdog interval.
        let notifier = ServiceNotifier.fromEnvironment()
        let readiness = "node \(settings.id) of \(settings.wallName), control on \(settings.control)"
        let (serving, servingStarted) = AsyncStream.makeStream(of: Void.self)
        let application = try ControlServer.application(
            node: node, metrics: metrics, fileLimit: fileLimit, logger: Logger(label: "lockstep.control"),
            onServerRunning: {
                notifier.ready(status: readiness)
                servingStarted.finish()
            })
        // The other nodes, where this one finds the wall's timeline when it has none (or an older one).
        let peers: ControlConnection
        do {
            peers = try ControlConnection(
                config: settings.wall, nodes: settings.wall.nodes.filter { $0.id != settings.id },
                timeout: Node.peerTimeout)
        } catch {
            throw NodeError.config("\(error)")
        }
        // A wall without a control daemon still answers a button: this node takes show control.
        let show =
            try settings.wall.node(settings.id)?.showControl == true
            ? ShowControlService(
                wall: settings.wall, logger: Logger(label: "lockstep.show"),
                say: { [logger] in logger.info("\($0)") })
            : nil
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(
                    service: TaskService("show-control") {
                        guard let show else { return }
                        defer { Task { try? await show.shutdown() } }
                        // An input that cannot listen (its port taken) keeps the screen: the node
                        // plays on, and says so in its status, metrics and the console.
                        do {
                            try await show.run()
                        } catch is CancellationError {
                        } catch {
                            node.serviceProblem("show-control", "\(error)")
                        }
                    }, successTerminationBehavior: .ignore),
                .init(service: TaskService("clock") { try await clock.run() }),
                .init(service: TaskService("frames") { await frames.record(from: players) }),
                .init(service: TaskService("timeline") { await node.run() }),
                .init(service: TaskService("peers") { await node.askPeers(peers.clients) }),
                .init(
                    service: TaskService("content") {
                        let origins = NodeClientFactory { base in
                            NodeClient(
                                id: base, base: base, wall: settings.wallName, http: peers.http,
                                authorization: settings.controlToken?.authorization, timeout: Node.peerTimeout)
                        }
                        await node.content.run(
                            timeline: { await node.followedTimeline }, peers: peers.clients, http: origins,
                            configuredOrigins: settings.wall.controllerOrigin.map { [$0] } ?? [],
                            problem: { node.serviceProblem("content", $0) })
                    }),
                .init(service: TaskService("x-errors") { await logIgnoredXErrors() }),
                .init(
                    service: TaskService("watchdog") {
                        for await _ in serving {}
                        await notifier.keepWatchdogFed {
                            _ = await node.status()
                            return true
                        }
                    }, successTerminationBehavior: .ignore),
                .init(service: application),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(1)
        let group = ServiceGroup(configuration: configuration)
        logger.info(
            "node starting",
            metadata: [
                "node.id": "\(settings.id)", "node.wall": "\(settings.wallName)",
                "node.control": "\(settings.control)", "clock.server": "\(settings.clock)",
                "node.media": "\(settings.media)", "video.sink": "\(settings.video.sinkDescription)",
                "node.file_limit": .value(fileLimit),
                "control.token": "\(settings.controlToken == nil ? "none" : "required")",
                "control.tls": "\(settings.controlTLS == nil ? "off" : "on")",
                "node.state_file": "\(settings.timelineFile)",
            ])
        do {
            try await group.run()
        } catch let error as IOError where [EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(error.errnoCode) {
            // The control server's bind: NIO names the system call, not the address.
            try? await peers.shutdown()
            throw NodeError.cannotListen(
                address: "\(settings.control)", reason: String(cString: strerror(error.errnoCode)))
        } catch {
            try? await peers.shutdown()
            throw error
        }
        notifier.stopping()
        try? await peers.shutdown()
        screen.stopPlayer()
        logger.info("node stopped")
    }
}
