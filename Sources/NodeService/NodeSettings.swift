import Foundation
import LockstepGuard
import LockstepNet
import LockstepTime
import SyncClock
import WallDisplay
import WallPlayer
import WallProtocol

/// What one node runs with: its part of the wall config, with command-line overrides applied.
public struct NodeSettings: Sendable {
    public var id: String
    public var wallName: String
    /// The master clock: the first clock source.
    public var clock: Endpoint { clockSources[0] }
    /// Where the wall's time is served, most preferred first: the master, then relaying nodes.
    public var clockSources: [Endpoint]
    /// Whether this node also serves the master clock, on the master's address (which must be this
    /// machine's).
    public var serveClock: Bool
    /// Where this node relays the time it follows (the config's `serve-clock`), if it does.
    public var relay: Endpoint?
    /// The sources this node follows: those before its relay address in the list (all of them when
    /// it relays nothing or relays outside the list), never its own.
    public var followedSources: [Endpoint] {
        guard let relay else { return clockSources }
        let ahead = clockSources.firstIndex(of: relay).map { Array(clockSources[..<$0]) } ?? clockSources
        return ahead.filter { $0 != relay }
    }
    /// The other nodes that serve the time they follow (their `serve-clock`): this node measures
    /// its clock against theirs directly (`PeerClocks`).
    public var peerClocks: [(id: String, address: Endpoint)]
    /// The system clock as linuxptp disciplines it, followed before `clockSources` (the config's `ptp`).
    public var ptp: PTPConfig?
    /// Run on this machine's clock instead of following the master (a benchmark baseline).
    public var useLocalClock: Bool
    /// The key Lockstep clock packets are signed with, as a client and with `serveClock`; from the
    /// config's `clock-key-file`.
    public var clockKey: ClockKey?
    public var control: Endpoint
    public var media: String
    public var video: VideoOutputSettings
    /// The window the node opens for its X sink and draws into; nil when the sink needs none.
    public var window: WindowPlacement?
    public var audioSink: String?
    public var latency: MediaTime
    public var displayLatency: MediaTime
    public var lockTimeout: MediaTime
    public var loop: Bool
    public var realtimePriority: Int32?
    /// The folders a load request may name media in.
    public var mediaRoots: MediaRoots
    /// How far ahead a start or pause may be scheduled.
    public var startHorizon: MediaTime
    /// The token control requests must carry; nil when the config leaves the API open.
    public var controlToken: ControlToken?
    public var metricsOpen: Bool
    public var controlTLS: ControlTLS?
    /// Where this node keeps its timeline across restarts.
    public var timelineFile: String
    /// Where this node keeps its proof of play (`PlayLog`): JSON lines, rotated.
    public var playsFile: String
    /// Where this node keeps the content the wall distributes (`ContentStore`).
    public var contentDirectory: String
    /// The config's playlist, and whether the node plays it by itself.
    public var playlist: [PlaylistItemConfig]
    public var autoplay: Bool
    /// The image this screen shows between shows (the config's `still`), and the part of it that is
    /// this screen's; nil: black.
    public var still: (path: String, crop: NormalizedRect)?
    /// The whole wall: the other nodes are where a node without a timeline finds one.
    public var wall: WallConfig

    /// Overrides for one node, from the command line.
    public struct Overrides: Sendable {
        public var clock: String?
        public var control: String?
        public var media: String?
        public var videoSink: String?
        public var audioSink: String?
        public var serveClock = false
        public var useLocalClock = false
        public var stateDirectory: String?

        public init(
            clock: String? = nil, control: String? = nil, media: String? = nil, videoSink: String? = nil,
            audioSink: String? = nil, serveClock: Bool = false, useLocalClock: Bool = false,
            stateDirectory: String? = nil
        ) {
            self.clock = clock
            self.control = control
            self.media = media
            self.videoSink = videoSink
            self.audioSink = audioSink
            self.serveClock = serveClock
            self.useLocalClock = useLocalClock
            self.stateDirectory = stateDirectory
        }
    }

    /// Where a node keeps state when the config does not say: the folder systemd gives a service
    /// (`StateDirectory=`), else the XDG state folder, else /var/lib/lockstep for root.
    public static func defaultStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let given = environment["STATE_DIRECTORY"], !given.isEmpty {
            return given.split(separator: ":").first.map(String.init) ?? given
        }
        if geteuid() == 0 { return "/var/lib/lockstep" }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/lockstep" }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return home + "/.local/state/lockstep"
    }

    public init(config: WallConfig, id: String, overrides: Overrides) throws(NodeError) {
        guard let node = config.node(id) else {
            throw .unknownNode(id: id, known: config.nodes.map(\.id))
        }
        self.id = id
        wallName = config.name
        let sources = overrides.clock.map { $0.split(separator: ",").map(String.init) } ?? config.clockSources
        var clockSources: [Endpoint] = []
        for source in sources { clockSources.append(try Self.endpoint(source, option: "clock")) }
        guard !clockSources.isEmpty else { throw .invalidOption(option: "clock", reason: "no clock source given") }
        self.clockSources = clockSources
        control = try Self.endpoint(overrides.control ?? node.control, option: "control")
        serveClock = overrides.serveClock
        relay = try node.serveClock.map { address throws(NodeError) in try Self.endpoint(address, option: "serve-clock")
        }
        if serveClock {
            try Self.checkServable(clockSources[0], option: "serve-clock", what: "the config's clock address")
        }
        if let relay { try Self.checkServable(relay, option: "serve-clock", what: "the node's serve-clock address") }
        if serveClock, relay != nil {
            throw .invalidOption(
                option: "serve-clock",
                reason:
                    "node \(id) has a serve-clock address in the config: a node serves as the master or relays it, not both"
            )
        }
        if let relay, clockSources.first == relay {
            throw .invalidOption(
                option: "serve-clock",
                reason: "\(relay) is the first clock source: a relay needs a source listed before it")
        }
        var peerClocks: [(id: String, address: Endpoint)] = []
        for other in config.nodes where other.id != id {
            guard let address = other.serveClock else { continue }
            peerClocks.append((other.id, try Self.endpoint(address, option: "serve-clock of node \(other.id)")))
        }
        self.peerClocks = peerClocks
        ptp = config.ptp
        if let ptp, ptp.udsAddress(forNode: id).utf8.count > PTPConfig.longestSocketPath {
            throw .invalidOption(
                option: "ptp.uds",
                reason: "\(ptp.udsAddress(forNode: id)) is too long for a Unix socket's path "
                    + "(\(PTPConfig.longestSocketPath) bytes at most)")
        }
        useLocalClock = overrides.useLocalClock
        media = overrides.media ?? config.media.path(forNode: id)
        let tile =
            config.media.isPreSplit && overrides.media == nil
            ? (x: 0.0, y: 0.0, width: 1.0, height: 1.0) : node.tile.normalized(in: config.canvas)
        let sink = overrides.videoSink ?? node.videoSink
        video = VideoOutputSettings(
            sinkDescription: try Self.sinkDescription(sink, screen: node.screen),
            videoGravity: VideoGravity(rawValue: node.gravity.rawValue) ?? .resize,
            sourceCrop: NormalizedRect(x: tile.x, y: tile.y, width: tile.width, height: tile.height),
            outputSize: node.output.map { PixelSize(width: $0.width, height: $0.height) })
        window = try Self.window(
            sink: sink, screen: node.screen, title: node.screen.title ?? "\(config.name) — \(id)",
            output: node.output ?? CanvasSize(width: node.tile.width, height: node.tile.height))
        let audio = overrides.audioSink ?? (node.audio ? node.audioSink : nil)
        audioSink = audio
        latency = config.latency
        displayLatency = node.displayLatency
        lockTimeout = config.clockLockTimeout
        loop = config.loop
        realtimePriority = config.realtimePriority
        mediaRoots = MediaRoots(config.mediaRoots)
        startHorizon = config.startHorizon
        do {
            controlToken = try config.security.tokenFile.map { path throws(ControlTokenError) in
                try ControlToken(contentsOfFile: path)
            }
        } catch {
            throw .config(error.description)
        }
        metricsOpen = config.security.metricsOpen
        controlTLS = config.security.tls
        playlist = config.playlist
        still = config.still.map { source in
            let part =
                source.isPreSplit ? (x: 0.0, y: 0.0, width: 1.0, height: 1.0) : node.tile.normalized(in: config.canvas)
            return (
                source.path(forNode: id), NormalizedRect(x: part.x, y: part.y, width: part.width, height: part.height)
            )
        }
        autoplay = config.autoplay
        wall = config
        let safeName = { (text: String) in
            String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        }
        let stateDirectory = overrides.stateDirectory ?? config.stateDirectory ?? Self.defaultStateDirectory()
        timelineFile = "\(stateDirectory)/\(safeName(config.name))-\(safeName(id)).timeline.json"
        contentDirectory = "\(stateDirectory)/\(safeName(config.name))-\(safeName(id)).content"
        playsFile = "\(stateDirectory)/\(safeName(config.name))-\(safeName(id)).plays.jsonl"
        do {
            clockKey = try config.clockKeyFile.map { path throws(SyncClockError) in try ClockKey(contentsOfFile: path) }
        } catch {
            throw .config("clock-key-file: \(error)")
        }
    }

    /// The first element of a sink description: what kind of output it is.
    static func sinkElement(_ description: String) -> String {
        String(description.drop { $0 == " " }.prefix { !$0.isWhitespace && $0 != "!" })
    }

    /// Sinks that draw into an X window the node can give them (`GstVideoOverlay`).
    static let windowSinks: Set<String> = ["ximagesink", "xvimagesink", "glimagesink", "autovideosink"]

    /// The sink description with the screen's keys for sinks that take them as properties: kmssink's
    /// connector and plane, waylandsink's fullscreen.
    static func sinkDescription(_ sink: String, screen: ScreenConfig) throws(NodeError) -> String {
        let element = sinkElement(sink)
        var properties: [String] = []
        if screen.connector != nil || screen.plane != nil {
            guard element == "kmssink" else {
                throw .config(
                    "screen.connector and screen.plane are kmssink's; this node's video sink is \"\(element)\"")
            }
            properties += screen.connector.map { ["connector-id=\($0)"] } ?? []
            properties += screen.plane.map { ["plane-id=\($0)"] } ?? []
        }
        if element == "waylandsink", screen.fullscreen { properties.append("fullscreen=true") }
        // The display the window is on is the sink's too: it opens its own connection, by default
        // to $DISPLAY (glimagesink and autovideosink's choice get it from the environment, which the
        // node sets from screen.display at start).
        if let display = screen.display, element == "ximagesink" || element == "xvimagesink" {
            properties.append("display=\"\(display)\"")
        }
        guard !properties.isEmpty else { return sink }
        let head = sink.drop { $0 == " " }
        let rest = head.drop { !$0.isWhitespace && $0 != "!" }
        return String(head.prefix(head.count - rest.count)) + " " + properties.joined(separator: " ") + rest
    }

    /// The window an X sink draws into: always for a windowing sink when an X display is there (so
    /// the node, not the sink, decides where it goes and what it is called), and required when the
    /// screen asks for one.
    static func window(
        sink: String, screen: ScreenConfig, title: String, output: CanvasSize,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(NodeError) -> WindowPlacement? {
        let element = sinkElement(sink)
        let hasDisplay = screen.display != nil || !(environment["DISPLAY"] ?? "").isEmpty
        if element == "waylandsink" || element == "kmssink" {
            let keys = [
                screen.display.map { _ in "display" }, screen.monitor.map { _ in "monitor" },
                screen.window.map { _ in "window" }, screen.title.map { _ in "title" },
            ].compactMap { $0 }
            guard keys.isEmpty else {
                throw .config(
                    "screen.\(keys[0]) places an X window; this node's video sink \"\(element)\" draws without one"
                        + (element == "kmssink" ? " (use screen.connector and screen.plane)" : ""))
            }
            return nil
        }
        guard windowSinks.contains(element) else {
            if screen.asksForWindow {
                throw .config(
                    "screen places a window, but this node's video sink \"\(element)\" draws none (use ximagesink, "
                        + "xvimagesink, glimagesink or autovideosink)")
            }
            return nil
        }
        guard hasDisplay else {
            if screen.asksForWindow {
                throw .config(
                    "screen places a window on an X display, but DISPLAY is unset and screen.display is not given")
            }
            return nil
        }
        return WindowPlacement(
            display: screen.display, monitor: screen.monitor,
            rect: screen.window.map { DisplayRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height) },
            fullscreen: screen.fullscreen, title: title, defaultSize: (output.width, output.height))
    }

    /// Checks that a clock address is one this machine can serve on: a server binds it, not every
    /// interface.
    private static func checkServable(_ clock: Endpoint, option: String, what: String) throws(NodeError) {
        let addresses: [SocketAddress]
        do {
            addresses = try clock.resolve(passive: true)
        } catch {
            throw .invalidOption(option: option, reason: "\(what) \(clock): \(error)")
        }
        if addresses.contains(where: { (try? UDPSocket.bound(to: $0.withPort(0))) != nil }) { return }
        let resolved = addresses.map { $0.withPort(clock.port).description }.joined(separator: ", ")
        let named = resolved == clock.description ? "" : " (\(resolved))"
        throw .invalidOption(
            option: option,
            reason: "\(what) \(clock)\(named) is not an address of this machine: serve it on the machine it "
                + "names, or change the config")
    }

    private static func endpoint(_ text: String, option: String) throws(NodeError) -> Endpoint {
        do {
            return try Endpoint(parsing: text)
        } catch {
            throw .invalidOption(option: option, reason: error.description)
        }
    }
}
