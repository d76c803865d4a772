import Foundation
import LockstepTime

/// A whole wall, as a config file describes it: where the master clock is, what plays, the
/// canvas the screens tile, and every node.
public struct WallConfig: Sendable, Hashable {
    /// A name for logs and reports.
    public var name: String
    /// The master clock every node follows (`HOST:PORT`).
    public var clock: String
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
    public var nodes: [NodeConfig]

    public init(
        name: String, clock: String, clockLockTimeout: MediaTime = MediaTime(value: 10, timescale: 1),
        media: MediaSource, canvas: CanvasSize, latency: MediaTime = .zero,
        startMargin: MediaTime = MediaTime(value: 1, timescale: 4), loop: Bool = true,
        realtimePriority: Int32? = 50, nodes: [NodeConfig]
    ) {
        self.name = name
        self.clock = clock
        self.clockLockTimeout = clockLockTimeout
        self.media = media
        self.canvas = canvas
        self.latency = latency
        self.startMargin = startMargin
        self.loop = loop
        self.realtimePriority = realtimePriority
        self.nodes = nodes
    }

    /// The node with `id`.
    public func node(_ id: String) -> NodeConfig? { nodes.first { $0.id == id } }
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

    public init(
        id: String, control: String, tile: PixelRect, output: CanvasSize? = nil, gravity: TileGravity = .resize,
        videoSink: String = "autovideosink", audio: Bool = false, audioSink: String = "autoaudiosink",
        displayLatency: MediaTime = .zero
    ) {
        self.id = id
        self.control = control
        self.tile = tile
        self.output = output
        self.gravity = gravity
        self.videoSink = videoSink
        self.audio = audio
        self.audioSink = audioSink
        self.displayLatency = displayLatency
    }
}
