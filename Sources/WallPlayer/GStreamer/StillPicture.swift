internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

#if canImport(Glibc)
    import Glibc
#endif

/// A still picture on a video sink, with a caption, until it is closed: what a screen shows when
/// no item plays on it (a test card, a holding slide).
///
/// The picture is pushed once and repeated a few times a second (`imagefreeze`), so a window that
/// is exposed again is redrawn. Its sinks sync to the clock whatever their description says (a
/// file or network sink does not by default): a picture is drawn at its time, and its repeats
/// never spin. The caption is drawn by `textoverlay`, centred at `captionPosition` of the height: lines
/// of plain text, each in bold sans at its own height (a share of the picture's height).
///
/// It uses its own sink, built from the same description as the player's and drawing into the
/// same window (`VideoOutputSettings.windowHandle`), and renders as the player does: the sink on
/// a thread of its own behind a queue, at SCHED_FIFO when asked (`realtimePriority`), so the
/// picture's conversions and other processes do not delay its wake-up at its time.
///
/// A picture is prepared before it is shown, as a clip is: `init` builds the pipeline and prerolls
/// its first frame without drawing it, and `present(at:)` has the sink draw it at a master time,
/// the way `Player.setRate(_:time:atHostTime:)` starts a clip (base time, pipeline latency), so a
/// cut to a still or to black lands on the glass at its time. `hide()` stops the repeats, so what
/// is cut to next is not drawn over by this picture's.
public final class StillPicture: Sendable {
    /// How often the picture is drawn again.
    static let framesPerSecond = 5
    /// How long starting may take before it counts as failed.
    static let startTimeout = MediaTime(value: 5, timescale: 1)

    private let pipeline: Element
    /// Keeps the last frame passed to the sink, for `copyCurrentVideoFrame`.
    private let stamp: Element
    /// The clock the picture is presented on, and the latency its sink presents with.
    private let clock: MasterClock?
    private let latency: MediaTime
    private let bus: StillBusContext

    /// How the render thread is scheduled.
    public var renderThreadPriority: RenderThreadPriority { bus.priority.withLock { $0 } }

    /// Prepares `rgb` (3 bytes a pixel, rows of `size.width` pixels with no padding): the pipeline
    /// is built and its first frame prerolled, not drawn; `present(at:)` shows it.
    ///
    /// `clock` and `latency` are those of the player the picture takes over from, so a host time
    /// means the same to both; with no clock, the picture runs on GStreamer's own.
    ///
    /// Throws when an element is missing, the sink description is invalid, or the sink fails to
    /// start (a display that cannot be opened, a device in use): the sink's own words.
    public init(
        rgb: [UInt8], size: PixelSize, caption: [CaptionLine] = [], captionPosition: Double = 0.3,
        output: VideoOutputSettings, clock: MasterClock? = nil, latency: MediaTime = .zero,
        realtimePriority: Int32? = nil
    ) throws(PlayerError) {
        guard size.width > 0, size.height > 0, rgb.count == size.width * size.height * 3 else {
            throw .pipelineConstruction(
                "a still picture of \(size) needs \(size.width * size.height * 3) bytes of RGB, got \(rgb.count)")
        }
        GStreamer.ensureInitialized()
        let pipeline = Element(sinking: gst_pipeline_new("still-picture"))
        let source = try Element.make("appsrc", name: "picture")
        let freeze = try Element.make("imagefreeze")
        let rateFilter = try Element.make("capsfilter")
        let convert = try Element.make("videoconvert")
        let text = try Element.make("textoverlay", name: "caption")
        let outputConvert = try Element.make("videoconvert")
        // The sink's display may have pixels that are not square (ximagesink asks for the X
        // screen's ratio): videoscale meets it, as the player's own chain does.
        let scale = try Element.make("videoscale")
        // Stretched to the output's size when it has one, as the player stretches its tile.
        let sizeFilter = try Element.make("capsfilter")
        if let target = output.outputSize, target.width > 0, target.height > 0 {
            Self.setArgument(sizeFilter, "caps", "video/x-raw,width=\(target.width),height=\(target.height)")
        }
        let queue = try Element.make("queue", name: "render-queue")
        queue.set("max-size-buffers", UInt32(2))
        queue.set("max-size-bytes", UInt32(0))
        queue.set("max-size-time", UInt64(0))
        let stamp = Element(sinking: lockstep_presentation_stamp_new("stamp", nil, nil, nil))
        let sink = try Element.parseBin(output.sinkDescription, role: "video")
        Self.setArgument(
            source, "caps",
            "video/x-raw,format=RGB,width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1,framerate=0/1")
        Self.setArgument(source, "format", "time")
        Self.setArgument(rateFilter, "caps", "video/x-raw,framerate=\(Self.framesPerSecond)/1")
        text.set("text", caption.map { $0.markup(pictureHeight: size.height) }.joined(separator: "\n"))
        Self.setArgument(text, "valignment", "position")
        Self.setArgument(text, "halignment", "center")
        Self.setArgument(text, "line-alignment", "center")
        text.set("ypos", captionPosition)
        text.set("shaded-background", true)
        // Sizes are the caption's own, not rescaled from a 640-pixel-wide reference.
        text.set("auto-resize", false)
        let chain = [source, freeze, rateFilter, convert, text, outputConvert, scale, sizeFilter, queue, stamp, sink]
        for element in chain { pipeline.add(element) }
        for (element, next) in zip(chain, chain.dropFirst()) { try element.link(to: next) }
        let context = StillBusContext(
            windowHandle: output.windowHandle ?? 0, renderQueue: UInt(bitPattern: queue.pointer),
            realtimePriority: realtimePriority)
        bus = context
        if let bus = pipeline.bus {
            gst_bus_set_sync_handler(bus.pointer, stillBusHandler, handOff(context), releaseStillBusContext)
        }
        self.pipeline = pipeline
        self.stamp = stamp
        self.clock = clock
        self.latency = latency
        // Prerolled, not drawn: the sink draws the first frame when the picture is presented.
        GStreamer.forElementAndInside(sink) { Self.syncWithoutPrerollFrame($0) }
        if let clock {
            gst_pipeline_use_clock(pipeline.cast(to: GstPipeline.self), clock.clock.pointer)
            gst_pipeline_set_latency(pipeline.cast(to: GstPipeline.self), latency.clockTime ?? 0)
        }

        guard let buffer = gst_buffer_new_allocate(nil, gsize(rgb.count), nil) else {
            throw .pipelineConstruction("cannot allocate a buffer of \(rgb.count) bytes for a still picture")
        }
        _ = rgb.withUnsafeBytes { gst_buffer_fill(buffer, 0, $0.baseAddress, gsize($0.count)) }
        buffer.pointee.pts = 0
        let appsrc = source.cast(to: GstAppSrc.self)
        gst_app_src_push_buffer(appsrc, buffer)
        gst_app_src_end_of_stream(appsrc)
        try preroll()
    }

    /// Has the sink draw the picture at `hostTime` on the clock given at `init` (at once when that
    /// has passed, or with no time or no clock), and repeat it a few times a second from then on.
    public func present(at hostTime: MediaTime? = nil) {
        if let clock, let hostTime, let base = (MediaTime.maximum(hostTime, clock.now()) - latency).clockTime {
            pipeline.setStartTime(GStreamer.clockTimeNone)
            pipeline.baseTime = base
        }
        pipeline.setState(GST_STATE_PLAYING)
    }

    /// Stops drawing the picture again (the pipeline pauses: a repeat waiting for its time is not
    /// drawn): what the sink drew last stays on the glass until another picture or a player draws
    /// over it.
    public func hide() {
        pipeline.setState(GST_STATE_PAUSED)
    }

    /// The frame the picture's sink was handed last (a caption drawn in), converted as
    /// `Player.copyCurrentVideoFrame` converts the player's; nil before the picture is prerolled.
    public func copyCurrentVideoFrame(format: VideoFrame.Format = .png, size: PixelSize? = nil) throws(PlayerError)
        -> VideoFrame?
    {
        try VideoFrame.copying(
            lockstep_presentation_stamp_last_sample(stamp.pointer).map { Sample(owning: $0) }, to: format, size: size)
    }

    /// A sink element: synced to the clock, its preroll frame not drawn.
    private static func syncWithoutPrerollFrame(_ element: UnsafeMutableRawPointer) {
        let instance = element.assumingMemoryBound(to: GTypeInstance.self)
        guard g_type_check_instance_is_a(instance, gst_base_sink_get_type()) != 0 else { return }
        lockstep_object_set_bool(element, "sync", 1)
        if lockstep_object_has_property(element, "show-preroll-frame") != 0 {
            lockstep_object_set_bool(element, "show-preroll-frame", 0)
        }
    }

    /// Prerolls the pipeline and waits for its first frame, or for the error that stops it.
    private func preroll() throws(PlayerError) {
        pipeline.setState(GST_STATE_PAUSED)
        guard let bus = pipeline.bus else { return }
        let types = GstMessageType(GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_ASYNC_DONE.rawValue)
        guard let popped = gst_bus_timed_pop_filtered(bus.pointer, Self.startTimeout.clockTime ?? 0, types) else {
            close()
            throw .pipelineConstruction("the still picture's sink did not preroll within \(Self.startTimeout)")
        }
        let message = Message(owning: popped)
        guard message.pointer.pointee.type == GST_MESSAGE_ERROR else { return }
        let error = GStreamer.errorText(of: message.pointer)
        let element = message.pointer.pointee.src.map { String(cString: $0.pointee.name) } ?? "pipeline"
        close()
        throw .playbackFailed(element: element, reason: error.reason, debug: error.debug)
    }

    /// Stops showing the picture (the sink lets go of the window and the device). Later calls do
    /// nothing.
    public func close() {
        pipeline.setState(GST_STATE_NULL)
        if let bus = pipeline.bus { gst_bus_set_flushing(bus.pointer, 1) }
    }

    deinit { close() }

    /// The longest side of an image a still may come from: 8K UHD's width, twice.
    static let maximumImageSide = 15_360

    /// Decodes the image file at `path` (PNG, JPEG, anything GStreamer decodes to one frame) into
    /// RGB, 3 bytes a pixel, rows without padding, and keeps the part `crop` names.
    ///
    /// Only a regular file is opened. Throws naming the file and what is wrong with it: missing,
    /// unreadable, not an image, too large, or not decoded within five seconds.
    public static func decodeImage(atPath path: String, crop: NormalizedRect = .full) throws(PlayerError) -> (
        rgb: [UInt8], size: PixelSize
    ) {
        try MediaInspector.checkRegularFile(path)
        GStreamer.ensureInitialized()
        var parseError: UnsafeMutablePointer<GError>?
        let description =
            "filesrc name=file ! decodebin ! videoconvert ! video/x-raw,format=RGB ! appsink name=frame sync=false"
        guard let launched = gst_parse_launch(description, &parseError) else {
            throw .pipelineConstruction("cannot decode images: \(GStreamer.consume(parseError))")
        }
        if parseError != nil { _ = GStreamer.consume(parseError) }
        let pipeline = Element(sinking: launched)
        defer { pipeline.setState(GST_STATE_NULL) }
        let bin = pipeline.cast(to: GstBin.self)
        guard let file = gst_bin_get_by_name(bin, "file").map({ Element(owning: $0) }),
            let sink = gst_bin_get_by_name(bin, "frame").map({ Element(owning: $0) })
        else { throw .pipelineConstruction("the image decoder lost its elements") }
        file.set("location", path)
        pipeline.setState(GST_STATE_PAUSED)
        // The first frame arrives (ASYNC_DONE) or the decoder gives up (ERROR), whichever first.
        let types = GstMessageType(GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_ASYNC_DONE.rawValue)
        guard let bus = pipeline.bus,
            let popped = gst_bus_timed_pop_filtered(bus.pointer, Self.startTimeout.clockTime ?? 0, types)
        else { throw .notAMediaFile(path: path, reason: "no picture decoded within \(Self.startTimeout.seconds) s") }
        let message = Message(owning: popped)
        if message.pointer.pointee.type == GST_MESSAGE_ERROR {
            let reason = withExtendedLifetime(message) { GStreamer.errorText(of: message.pointer).reason }
            throw .notAMediaFile(path: path, reason: reason)
        }
        guard let pulled = gst_app_sink_try_pull_preroll(sink.cast(to: GstAppSink.self), 0) else {
            throw .notAMediaFile(path: path, reason: "the decoder gave no picture")
        }
        let sample = Sample(owning: pulled)
        let size = GStreamer.pictureSize(of: gst_sample_get_caps(sample.pointer)) ?? PixelSize(width: 0, height: 0)
        guard (1...maximumImageSide).contains(size.width), (1...maximumImageSide).contains(size.height) else {
            throw .notAMediaFile(path: path, reason: "a picture of \(size) is beyond \(maximumImageSide) pixels a side")
        }
        guard let buffer = gst_sample_get_buffer(sample.pointer) else {
            throw .notAMediaFile(path: path, reason: "the decoder gave no pixels")
        }
        var info = GstMapInfo()
        guard gst_buffer_map(buffer, &info, GST_MAP_READ) != 0 else {
            throw .notAMediaFile(path: path, reason: "the decoded pixels cannot be read")
        }
        defer { gst_buffer_unmap(buffer, &info) }
        // GStreamer pads RGB rows to 4 bytes.
        let stride = (size.width * 3 + 3) & ~3
        guard Int(info.size) >= stride * (size.height - 1) + size.width * 3 else {
            throw .notAMediaFile(path: path, reason: "the decoder gave \(info.size) bytes for \(size)")
        }
        let left = min(size.width - 1, max(0, Int((crop.x * Double(size.width)).rounded())))
        let top = min(size.height - 1, max(0, Int((crop.y * Double(size.height)).rounded())))
        let right = max(left + 1, min(size.width, Int(((crop.x + crop.width) * Double(size.width)).rounded())))
        let bottom = max(top + 1, min(size.height, Int(((crop.y + crop.height) * Double(size.height)).rounded())))
        var rgb = [UInt8]()
        rgb.reserveCapacity((right - left) * (bottom - top) * 3)
        let bytes = UnsafeRawBufferPointer(start: info.data, count: Int(info.size))
        for row in top..<bottom {
            let start = row * stride + left * 3
            rgb += bytes[start..<(start + (right - left) * 3)]
        }
        return (rgb, PixelSize(width: right - left, height: bottom - top))
    }

    /// Sets a property from its string form, whatever its type (`gst_util_set_object_arg`): enums
    /// by nick, caps from their description.
    private static func setArgument(_ element: Element, _ name: String, _ value: String) {
        gst_util_set_object_arg(element.raw.assumingMemoryBound(to: GObject.self), name, value)
    }
}

/// One line of a still picture's caption.
public struct CaptionLine: Sendable, Hashable {
    public var text: String
    /// The line's height as a share of the picture's.
    public var height: Double

    public init(_ text: String, height: Double) {
        self.text = text
        self.height = height
    }

    /// Pango markup for the line, its text escaped (`g_markup_escape_text`); at least 8 pixels high.
    func markup(pictureHeight: Int) -> String {
        let pixels = max(8, Int((height * Double(pictureHeight)).rounded()))
        let escaped =
            g_markup_escape_text(text, -1).map { escaped in
                defer { g_free(escaped) }
                return String(cString: escaped)
            } ?? ""
        return "<span font_desc=\"Sans Bold \(pixels)px\">\(escaped)</span>"
    }
}

/// What a still's bus handler needs: the window to hand the sink, and the render queue whose
/// thread it schedules as it enters.
private final class StillBusContext: Sendable {
    let windowHandle: UInt
    /// The render queue's address, compared with a stream status's owner.
    let renderQueue: UInt
    let realtimePriority: Int32?
    let priority = Mutex(RenderThreadPriority.notStarted)

    init(windowHandle: UInt, renderQueue: UInt, realtimePriority: Int32?) {
        self.windowHandle = windowHandle
        self.renderQueue = renderQueue
        self.realtimePriority = realtimePriority
    }
}

private let releaseStillBusContext: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<StillBusContext>.fromOpaque(pointer).release()
}

/// Schedules the render thread as it enters and hands the window to the sink that asks for one;
/// drops every other message but the ones `start` waits for, so a bus nobody reads after the start
/// stays empty.
private let stillBusHandler: GstBusSyncHandler = { _, message, data in
    guard let message else { return GST_BUS_DROP }
    guard let data else { return GST_BUS_PASS }
    let context = handedOver(data, as: StillBusContext.self)
    if let status = RenderThreadPriority.threadStatus(message), status.owner == context.renderQueue {
        // Lowered as it leaves, back to the thread pool (`RenderThreadPriority.threadStatus`).
        if status.entering {
            let granted = RenderThreadPriority.apply(context.realtimePriority, to: pthread_self())
            context.priority.withLock { $0 = granted }
        } else {
            _ = RenderThreadPriority.apply(nil, to: pthread_self())
        }
    }
    if context.windowHandle != 0, lockstep_video_overlay_prepare(message, guintptr(context.windowHandle)) != 0 {
        gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
        return GST_BUS_DROP
    }
    switch message.pointee.type {
    case GST_MESSAGE_ERROR, GST_MESSAGE_ASYNC_DONE: return GST_BUS_PASS
    default:
        gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
        return GST_BUS_DROP
    }
}
