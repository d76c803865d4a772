internal import CGStreamer
internal import CLockstepShims
import LockstepTime

/// How the picture fills the output (`AVLayerVideoGravity`).
public enum VideoGravity: String, Sendable, Hashable, Codable {
    /// Keep the aspect ratio and fit inside the output, with black bars (`resizeAspect`).
    case resizeAspect
    /// Keep the aspect ratio and fill the output, cropping what overflows (`resizeAspectFill`).
    case resizeAspectFill
    /// Stretch to the output (`resize`).
    case resize
}

/// A rectangle in unit coordinates of the picture: (0, 0) is the top-left corner, (1, 1) the
/// bottom-right. A wall tile is the part of the whole picture one screen shows.
public struct NormalizedRect: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The whole picture.
    public static let full = NormalizedRect(x: 0, y: 0, width: 1, height: 1)

    /// Whether the rectangle is non-empty and inside the picture.
    public var isValid: Bool {
        [x, y, width, height].allSatisfy(\.isFinite) && x >= 0 && y >= 0 && width > 0 && height > 0
            && x + width <= 1 + 1e-9 && y + height <= 1 + 1e-9
    }

    public var description: String { "(\(x), \(y), \(width)x\(height))" }
}

/// Where and how a player shows its video: the `AVPlayerLayer` part of a player.
public struct VideoOutputSettings: Sendable, Hashable {
    /// A GStreamer bin description for the sink: "autovideosink", "fakesink sync=true", "kmssink",
    /// "videoconvert ! udpsink host=... port=...". It runs alone on the render thread; conversion,
    /// crop and scale happen before it.
    public var sinkDescription: String
    public var videoGravity: VideoGravity
    /// The part of the picture shown (the wall tile).
    public var sourceCrop: NormalizedRect
    /// The size of the output in pixels; nil keeps the cropped picture's own size, and the sink
    /// scales it to its surface (as `videoGravity` says, where the sink scales: X and GL sinks).
    public var outputSize: PixelSize?
    /// The size of the surface the sink draws on, where the caller knows it (its window's) and
    /// `outputSize` is nil: what `resizeAspectFill` crops the picture to the shape of. A kmssink
    /// tells its display's by itself.
    public var displaySize: PixelSize?
    /// A window the sink draws into (an X window id, `GstVideoOverlay`), owned by the caller; nil
    /// lets a windowing sink open its own.
    public var windowHandle: UInt?

    public init(
        sinkDescription: String = "autovideosink", videoGravity: VideoGravity = .resizeAspect,
        sourceCrop: NormalizedRect = .full, outputSize: PixelSize? = nil, displaySize: PixelSize? = nil,
        windowHandle: UInt? = nil
    ) {
        self.sinkDescription = sinkDescription
        self.videoGravity = videoGravity
        self.sourceCrop = sourceCrop
        self.outputSize = outputSize
        self.displaySize = displaySize
        self.windowHandle = windowHandle
    }

    /// Whether a pipeline built for `self` can take `other` without being rebuilt.
    func sharesSink(with other: VideoOutputSettings) -> Bool {
        sinkDescription == other.sinkDescription && windowHandle == other.windowHandle
    }

    /// The pixels to cut from each edge of a `source`-sized picture: the crop rectangle, narrowed
    /// further for `resizeAspectFill` so that what remains has the output's aspect ratio (the
    /// output size's, else the surface's: `displaySize`, or `sinkDisplay`, what the sink reports).
    func cropInsets(source: PixelSize, sinkDisplay: PixelSize? = nil) -> (left: Int, right: Int, top: Int, bottom: Int) {
        var x = sourceCrop.x * Double(source.width)
        var y = sourceCrop.y * Double(source.height)
        var width = sourceCrop.width * Double(source.width)
        var height = sourceCrop.height * Double(source.height)
        if videoGravity == .resizeAspectFill, let output = outputSize ?? displaySize ?? sinkDisplay, output.width > 0,
            output.height > 0
        {
            let target = Double(output.width) / Double(output.height)
            if width / height > target {
                let narrowed = height * target
                x += (width - narrowed) / 2
                width = narrowed
            } else {
                let lowered = width / target
                y += (height - lowered) / 2
                height = lowered
            }
        }
        // Even offsets keep chroma-subsampled pictures aligned.
        func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
        let left = max(0, even(x))
        let top = max(0, even(y))
        let right = max(0, source.width - left - max(2, even(width)))
        let bottom = max(0, source.height - top - max(2, even(height)))
        return (left, right, top, bottom)
    }
}

/// Checks a sink description before a player needs it (`wallctl check`): nil when GStreamer can build
/// the sink and the sink can open its output, otherwise why not ("no element \"kmssink\"", a bad
/// property, "Could not open display :91"), in the sink's own words.
///
/// The sink is taken to READY, where it opens its display, compositor or device, and then dropped;
/// it never receives a frame. kmssink is only built: a node playing keeps the DRM device, and a
/// second opening would fail for that reason alone.
public func sinkProblem(_ description: String, role: String) -> String? {
    let bin: Element
    do {
        bin = try Element.parseBin(description, role: role)
    } catch {
        return "\(error)"
    }
    guard !describes(description, anyOf: ["kmssink"]) else { return nil }
    let pipeline = Element(sinking: gst_pipeline_new("sink-check"))
    pipeline.add(bin)
    defer { pipeline.setState(GST_STATE_NULL) }
    guard pipeline.setState(GST_STATE_READY) == GST_STATE_CHANGE_FAILURE else { return nil }
    guard let bus = pipeline.bus,
        let popped = gst_bus_pop_filtered(bus.pointer, GST_MESSAGE_ERROR)
    else { return "it did not open its output (no reason given)" }
    let message = Message(owning: popped)
    let error = GStreamer.errorText(of: message.pointer)
    return "it cannot open its output: \(error.reason)"
}

/// Whether a gst-launch description has an element made by one of `factories` (a word of its own
/// between spaces, tabs, newlines and links).
func describes(_ description: String, anyOf factories: Set<String>) -> Bool {
    description.split(whereSeparator: { $0.isWhitespace || $0 == "!" }).contains { factories.contains(String($0)) }
}
