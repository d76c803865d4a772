import Foundation
import LockstepNet
import LockstepTime
import ShowControl

/// A whole wall, as a config file describes it: where the master clock is, what plays, the
/// canvas the screens tile, and every node.
public struct WallConfig: Sendable, Hashable {
    /// A name for logs and reports.
    public var name: String
    /// SHA-256 of the config's text, in hex (what `sha256sum` prints for its file), when it was read
    /// from text: `wallctl check` compares it with every node's, so a node running an older copy of
    /// the config is named before the show.
    public var digest: String?
    /// The master clock every node follows (`HOST:PORT`): the first of `clockSources`.
    public var clock: String { clockSources[0] }
    /// Where nodes take the master's time, most preferred first (`HOST:PORT` each): the master, then
    /// nodes serving the time they follow (`serve-clock`). A node follows the first that serves the
    /// wall's timeline and moves to the next, slewing, when it falls silent. Never empty.
    public var clockSources: [String]
    /// How long a node waits for its clock to lock before it reports that it cannot start.
    public var clockLockTimeout: MediaTime
    /// What plays.
    public var media: MediaSource
    /// The size of the whole picture in canvas pixels; tiles are rectangles of it.
    public var canvas: CanvasSize
    /// The pipeline latency, the same on every node.
    public var latency: MediaTime
    /// The least time between `wallctl start` choosing a host time and that time; the controller
    /// adds what it measures (control round trips, clock error bounds).
    public var startMargin: MediaTime
    /// Whether the media loops, gaplessly, until stopped.
    public var loop: Bool
    /// The SCHED_FIFO priority asked for each node's render thread; nil for normal scheduling.
    public var realtimePriority: Int32?
    /// Who may control the wall, and how the control API is reached.
    public var security: ControlSecurity
    /// The folders media may be loaded from; a request naming a file elsewhere is refused.
    public var mediaRoots: [String]
    /// How far ahead of the master clock's now a start or pause may be scheduled.
    public var startHorizon: MediaTime
    /// A file holding the key that signs Lockstep clock packets, or nil for unsigned packets.
    public var clockKeyFile: String?
    /// What the wall plays, in order (`wallctl play`, and `autoplay`); empty: `media` alone.
    public var playlist: [PlaylistItemConfig]
    /// Whether every node plays the playlist by itself, with no controller: from master time zero
    /// of the master's timeline, so every node computes the same timeline from the config alone.
    public var autoplay: Bool
    /// What the wall plays by the calendar, if it plays by one (`schedule:`).
    public var schedule: ScheduleConfig?
    /// The most bytes per second a node fetches content at (`content-bandwidth`); nil: no limit.
    public var contentBandwidth: Double?
    /// The wall's control daemon, if it has one (`controller:`): where `wallctl serve` listens, and
    /// where it keeps the content library the nodes fetch from.
    public var controller: ControllerConfig?

    /// Where the nodes fetch content from the control daemon, if the wall has one.
    public var controllerOrigin: String? { controller?.origin(tls: security.tls != nil) }
    /// Named show-control cues (`cues:`).
    public var cues: [String: CueConfig] = [:]
    /// Where the control daemon (and nodes with `show-control: true`) take show-control messages.
    public var showControl: ShowInputSettings?
    /// PTP, where the venue runs it: every node follows its system clock as linuxptp disciplines it,
    /// before the `clock` sources, which it falls back on.
    public var ptp: PTPConfig?
    /// How long a node keeps content no timeline it holds names (`content-grace`).
    public var contentGrace = Self.defaultContentGrace
    public static let defaultContentGrace = MediaTime(value: 86_400, timescale: 1)
    /// Where a node keeps its timeline across restarts; nil for the default (`$STATE_DIRECTORY`,
    /// `$XDG_STATE_HOME/lockstep`, `~/.local/state/lockstep`, or /var/lib/lockstep for root).
    public var stateDirectory: String?
    /// The picture screens show between shows, in place of black: one image of the canvas every
    /// node shows its tile of, or one per node (`{id}`); nil: black.
    public var still: MediaSource?
    /// The audio languages the wall prefers, in order (BCP 47 or ISO 639: "fr", "en-GB", "deu"):
    /// of media with several audio tracks, every node plays the first that has one; empty: the
    /// track the media marks default.
    public var audioLanguages: [String] = []
    /// The subtitle languages to show, in order: every node draws the first the media has over
    /// the picture (each screen its part); empty: no subtitles.
    public var subtitleLanguages: [String] = []
    public var nodes: [NodeConfig]

    public init(
        name: String, clock: String, clockLockTimeout: MediaTime = MediaTime(value: 10, timescale: 1),
        media: MediaSource, canvas: CanvasSize, latency: MediaTime = .zero,
        startMargin: MediaTime = MediaTime(value: 1, timescale: 4), loop: Bool = true,
        realtimePriority: Int32? = 50, security: ControlSecurity = ControlSecurity(), mediaRoots: [String]? = nil,
        startHorizon: MediaTime = MediaTime(value: 300, timescale: 1), clockKeyFile: String? = nil,
        playlist: [PlaylistItemConfig] = [], autoplay: Bool = false, stateDirectory: String? = nil,
        still: MediaSource? = nil, nodes: [NodeConfig]
    ) {
        self.still = still
        self.playlist = playlist
        self.autoplay = autoplay
        self.stateDirectory = stateDirectory
        self.name = name
        self.clockSources = [clock]
        self.clockLockTimeout = clockLockTimeout
        self.media = media
        self.canvas = canvas
        self.latency = latency
        self.startMargin = startMargin
        self.loop = loop
        self.realtimePriority = realtimePriority
        self.security = security
        self.mediaRoots = mediaRoots ?? media.defaultRoots
        self.startHorizon = startHorizon
        self.clockKeyFile = clockKeyFile
        self.nodes = nodes
    }

    /// The node with `id`.
    public func node(_ id: String) -> NodeConfig? { nodes.first { $0.id == id } }
}

/// One entry of the config's playlist.
public struct PlaylistItemConfig: Sendable, Hashable {
    /// A file for every node, or a template with `{id}` (resolved against the config's folder).
    public var media: String
    public var inPoint: MediaTime
    /// Where the entry ends; nil for the media's own length (`wallctl play` asks the nodes).
    public var outPoint: MediaTime?
    /// How many times it plays; nil for forever.
    public var repeats: Int?

    public init(media: String, inPoint: MediaTime = .zero, outPoint: MediaTime? = nil, repeats: Int? = 1) {
        self.media = media
        self.inPoint = inPoint
        self.outPoint = outPoint
        self.repeats = repeats
    }
}

/// The media of a wall: one file every node crops its tile from, or one pre-split file per node.
public enum MediaSource: Sendable, Hashable {
    /// One file for all nodes.
    case shared(path: String)
    /// A path template with `{id}` replaced by the node's id: "media/{id}.mp4".
    case perNode(template: String)

    /// The file node `id` plays.
    public func path(forNode id: String) -> String {
        switch self {
        case .shared(let path): return path
        case .perNode(let template): return template.replacingOccurrences(of: "{id}", with: id)
        }
    }

    /// The folders a wall with this media loads from unless the config names others: the folder
    /// of the shared file, or of the template up to the first path component holding `{id}`.
    public var defaultRoots: [String] {
        let path: String
        switch self {
        case .shared(let file): path = file
        case .perNode(let template): path = template.components(separatedBy: "{id}")[0] + "{id}"
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return [folder.isEmpty ? "." : folder]
    }

    /// Whether each node's file holds only its own tile (so it shows the whole of its file).
    public var isPreSplit: Bool {
        if case .perNode = self { return true }
        return false
    }
}

/// A size in canvas pixels.
public struct CanvasSize: Sendable, Hashable, Codable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// A rectangle in canvas pixels: the part of the picture a screen shows.
public struct PixelRect: Sendable, Hashable, Codable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle as X writes a geometry: "WIDTHxHEIGHT+X+Y".
    public var geometry: String { "\(width)x\(height)+\(x)+\(y)" }

    /// This rectangle as fractions of `canvas`: (x, y, width, height) each in 0...1.
    public func normalized(in canvas: CanvasSize) -> (x: Double, y: Double, width: Double, height: Double) {
        let w = Double(canvas.width)
        let h = Double(canvas.height)
        return (Double(x) / w, Double(y) / h, Double(width) / w, Double(height) / h)
    }
}

/// How a tile's picture fills its screen (the player's video gravity, by the same names).
public enum TileGravity: String, Sendable, Hashable, Codable, CaseIterable {
    case resize, resizeAspect, resizeAspectFill
}

/// One screen of the wall.
public struct NodeConfig: Sendable, Hashable {
    public var id: String
    /// Where the node's control API listens (`HOST:PORT`).
    public var control: String
    /// The part of the canvas this screen shows.
    public var tile: PixelRect
    /// The screen's resolution; nil renders the tile at its canvas size.
    public var output: CanvasSize?
    public var gravity: TileGravity
    /// A GStreamer bin description of the video sink.
    public var videoSink: String
    /// Whether this node plays the audio.
    public var audio: Bool
    /// A GStreamer bin description of the audio sink.
    public var audioSink: String
    /// How long this screen takes to show a frame it is given (input lag): the node presents that
    /// much earlier, so that light leaves every screen at once.
    public var displayLatency: MediaTime
    /// Where the picture goes on this machine's display: window, monitor, fullscreen, DRM plane.
    public var screen: ScreenConfig
    /// Where this node serves the master's time it follows (`HOST:PORT`, an address of its machine):
    /// a boundary clock other nodes fall back on when the master falls silent. Listed in the wall's
    /// `clock`, it follows only the sources listed before it. Nil: it serves nothing.
    public var serveClock: String?
    /// Whether this node also takes show-control messages at the wall's `show-control` addresses
    /// (on its own machine), so a wall without a control daemon still answers a button.
    public var showControl = false
    /// Whether the node may keep a second pipeline in standby for cuts while playing, where its sink
    /// allows (`standby`, default true): no frame held at a cut, for about 150 MB more at 1080p.
    public var standby = true

    public init(
        id: String, control: String, tile: PixelRect, output: CanvasSize? = nil, gravity: TileGravity = .resize,
        videoSink: String = "autovideosink", audio: Bool = false, audioSink: String = "autoaudiosink",
        displayLatency: MediaTime = .zero, screen: ScreenConfig = ScreenConfig(), serveClock: String? = nil
    ) {
        self.serveClock = serveClock
        self.id = id
        self.control = control
        self.tile = tile
        self.output = output
        self.gravity = gravity
        self.videoSink = videoSink
        self.audio = audio
        self.audioSink = audioSink
        self.displayLatency = displayLatency
        self.screen = screen
    }
}

/// Where a node's picture appears on its machine (a node's `screen:` key). On X11 the node opens and
/// keeps its own window (borderless, black, cursor hidden) and hands it to the sink; kmssink takes
/// the DRM connector and plane; waylandsink takes `fullscreen`.
public struct ScreenConfig: Sendable, Hashable {
    /// The X display (`:0`); nil uses `$DISPLAY`.
    public var display: String?
    /// The monitor to show on, by its RandR name (`HDMI-1`, `xrandr --listmonitors`): the window's
    /// position is relative to it, and fullscreen fills it.
    public var monitor: String?
    /// The window's rectangle (relative to the monitor when one is named); nil places it at the
    /// monitor's (or the screen's) origin, sized to `output`.
    public var window: PixelRect?
    /// Fills the monitor (or the whole screen), above any panel.
    public var fullscreen: Bool
    /// The window title; nil names the wall and the node.
    public var title: String?
    /// kmssink's DRM connector (`connector-id`) and plane (`plane-id`).
    public var connector: Int?
    public var plane: Int?
    /// The display mode the screen must be in (`1920x1080@60`): a node on another names a problem.
    public var mode: ExpectedMode?

    public init(
        display: String? = nil, monitor: String? = nil, window: PixelRect? = nil, fullscreen: Bool = false,
        title: String? = nil, connector: Int? = nil, plane: Int? = nil, mode: ExpectedMode? = nil
    ) {
        self.mode = mode
        self.display = display
        self.monitor = monitor
        self.window = window
        self.fullscreen = fullscreen
        self.title = title
        self.connector = connector
        self.plane = plane
    }

    /// A display mode a config expects: its resolution, and its refresh rate if given.
    public struct ExpectedMode: Sendable, Hashable, CustomStringConvertible {
        public var width: Int
        public var height: Int
        public var refreshHz: Double?
        /// How far a refresh rate may be from the one asked: 59.94 Hz is a 60 Hz mode.
        public static let refreshTolerance = 0.5

        /// Parses `WIDTHxHEIGHT` or `WIDTHxHEIGHT@HZ`.
        public init?(_ text: String) {
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count <= 2, size.count == 2, let width = Int(size[0]), let height = Int(size[1]),
                (1...16384).contains(width), (1...16384).contains(height)
            else { return nil }
            self.width = width
            self.height = height
            if parts.count == 2 {
                guard let hz = Double(parts[1]), hz > 0, hz <= 1000 else { return nil }
                refreshHz = hz
            }
        }

        public var description: String {
            "\(width)x\(height)" + (refreshHz.map { " at \(DisplayMode.hertz($0)) Hz" } ?? "")
        }

        /// Why `display` is not this mode, nil when it is.
        public func mismatch(_ display: DisplayMode) -> String? {
            let sizeDiffers = display.width != width || display.height != height
            // A display that gives no refresh rate is judged by its size alone.
            let refreshDiffers =
                refreshHz.flatMap { wanted in display.refreshHz.map { abs($0 - wanted) > Self.refreshTolerance } }
                ?? false
            guard sizeDiffers || refreshDiffers else { return nil }
            return "the screen is in \(display); the config expects \(self)"
        }
    }

    /// Whether any key asks for a window on an X display.
    public var asksForWindow: Bool { display != nil || monitor != nil || window != nil || fullscreen || title != nil }
}

/// How the control API is protected: a shared bearer token, and TLS where the config gives a
/// certificate.
public struct ControlSecurity: Sendable, Hashable {
    /// A file holding the token every control request must carry (`Authorization: Bearer ...`);
    /// nil leaves the API open, which the config allows only when every node listens on loopback.
    public var tokenFile: String?
    /// Whether `GET /metrics` answers without the token, for a Prometheus server that has none.
    public var metricsOpen: Bool
    /// The certificate and key the nodes serve the control API with over TLS.
    public var tls: ControlTLS?
    /// A file holding the viewers' token: a console login with it watches the wall (the page, its
    /// events, thumbnails, reports) and can take no action. The control API does not take it.
    public var viewerTokenFile: String?

    public init(
        tokenFile: String? = nil, metricsOpen: Bool = false, tls: ControlTLS? = nil, viewerTokenFile: String? = nil
    ) {
        self.tokenFile = tokenFile
        self.viewerTokenFile = viewerTokenFile
        self.metricsOpen = metricsOpen
        self.tls = tls
    }
}

/// TLS for the control API: every node serves `certificate` with `key`; `wallctl` trusts
/// `trustRoots` (the CA that signed it, or the certificate itself when it is self-signed) and checks
/// that it names the address it connects to.
public struct ControlTLS: Sendable, Hashable {
    /// PEM certificate chain the nodes present.
    public var certificate: String
    /// PEM private key of the certificate (needed on the nodes only).
    public var key: String
    /// PEM certificates `wallctl` trusts; the certificate itself when the config names none.
    public var trustRoots: String

    public init(certificate: String, key: String, trustRoots: String? = nil) {
        self.certificate = certificate
        self.key = key
        self.trustRoots = trustRoots ?? certificate
    }
}

/// `controller: {listen: HOST:PORT, library: FOLDER}`: the optional control daemon, `wallctl serve`.
public struct ControllerConfig: Sendable, Hashable {
    /// Where it listens; nodes fetch content from `http://` this.
    public var listen: String
    /// Where it keeps the content library; nil: `<state-directory>/controller-library`.
    public var library: String?

    public init(listen: String, library: String? = nil) {
        self.listen = listen
        self.library = library
    }

    /// The URL nodes fetch content from: over HTTPS when the wall's control API is
    /// (`control-tls`), as the nodes' own.
    public func origin(tls: Bool) -> String {
        let endpoint = try? Endpoint(parsing: listen)
        let host = endpoint.map { $0.host.contains(":") ? "[\($0.host)]" : $0.host } ?? listen
        return "\(tls ? "https" : "http")://\(host):\(endpoint?.port ?? 7700)"
    }
}

/// The config's `ptp:` section: how a node reads the state of the ptp4l that disciplines its system
/// clock (through pmc, on ptp4l's management socket).
public struct PTPConfig: Sendable, Hashable {
    /// ptp4l's `uds_address`; `{id}` becomes the node's id (several ptp4l on one machine, in tests).
    public var udsAddress: String
    /// The PTP domain ptp4l runs in.
    public var domain: Int
    /// The pmc program.
    public var pmc: String

    public static let defaultUDSAddress = "/var/run/ptp4l"
    /// The longest path a Unix socket may have (`sun_path`, less its terminating zero).
    public static let longestSocketPath = 107
    public static let defaultPMC = "/usr/sbin/pmc"

    public init(udsAddress: String = Self.defaultUDSAddress, domain: Int = 0, pmc: String = Self.defaultPMC) {
        self.udsAddress = udsAddress
        self.domain = domain
        self.pmc = pmc
    }

    /// ptp4l's management socket for node `id`.
    public func udsAddress(forNode id: String) -> String { udsAddress.replacingOccurrences(of: "{id}", with: id) }
}
