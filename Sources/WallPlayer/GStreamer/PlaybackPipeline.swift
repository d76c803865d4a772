internal import CGStreamer
internal import CLockstepShims
import Foundation
import LockstepLocks
import LockstepTime

#if canImport(Glibc)
    import Glibc
#endif

/// How the render thread of a pipeline is scheduled: what status reports as the node's
/// real-time standing.
public enum RenderThreadPriority: Sendable, Hashable, CustomStringConvertible {
    /// The render thread has not started yet.
    case notStarted
    /// SCHED_FIFO at this priority.
    case realtime(priority: Int32)
    /// Normal scheduling, with the reason real-time was not granted (or not asked for).
    case normal(reason: String)

    public var description: String {
        switch self {
        case .notStarted: return "not started"
        case .realtime(let priority): return "SCHED_FIFO \(priority)"
        case .normal(let reason): return "normal (\(reason))"
        }
    }

    /// The address of the element whose streaming thread `message` (a STREAM_STATUS, delivered on
    /// that thread) says is entering or leaving, and which; nil for any other message.
    ///
    /// A thread that leaves goes back to GStreamer's thread pool and may run another element's task
    /// next (a demuxer's, a decoder's): a render thread raised as it entered is lowered as it leaves.
    static func threadStatus(_ message: UnsafeMutablePointer<GstMessage>) -> (owner: UInt, entering: Bool)? {
        guard message.pointee.type == GST_MESSAGE_STREAM_STATUS else { return nil }
        var type = GST_STREAM_STATUS_TYPE_CREATE
        var owner: UnsafeMutablePointer<GstElement>?
        gst_message_parse_stream_status(message, &type, &owner)
        guard type == GST_STREAM_STATUS_TYPE_ENTER || type == GST_STREAM_STATUS_TYPE_LEAVE, let owner else {
            return nil
        }
        return (UInt(bitPattern: owner), type == GST_STREAM_STATUS_TYPE_ENTER)
    }

    /// Schedules `thread` at SCHED_FIFO `wanted` (nil: normal scheduling); returns what was granted.
    static func apply(_ wanted: Int32?, to thread: pthread_t) -> RenderThreadPriority {
        var parameters = sched_param(sched_priority: wanted ?? 0)
        let result = pthread_setschedparam(thread, wanted == nil ? SCHED_OTHER : SCHED_FIFO, &parameters)
        switch (wanted, result) {
        case (nil, _):
            return .normal(reason: "real-time scheduling not requested")
        case (let priority?, 0):
            return .realtime(priority: priority)
        case (_, let code):
            return .normal(
                reason:
                    "SCHED_FIFO refused: \(String(cString: strerror(code))); grant CAP_SYS_NICE or raise RLIMIT_RTPRIO")
        }
    }
}

/// One frame as the sink presented it: where the render thread reports it, after the clock wait.
public struct PresentedFrame: Sendable, Hashable {
    /// The frame's presentation timestamp in its item: its item time, whatever time origin the
    /// container's own timestamps have (an MPEG stream's included).
    public let presentationTimestamp: MediaTime
    public let duration: MediaTime
    /// The frame's running time: continuous across items and loops, the same on every node
    /// started together.
    public let runningTime: MediaTime
    /// The master-clock time at which the sink returned from presenting it.
    public let presentedAt: MediaTime
    /// The master-clock time at which it was due: base time + running time + latency.
    public let dueAt: MediaTime

    /// How late the frame was presented (negative: early).
    public var lateness: MediaTime { presentedAt - dueAt }
}

/// The GStreamer side of a player: playbin, its sinks, and the callbacks that leave GStreamer's
/// threads. Its owner drives it from one serial queue.
final class PlaybackPipeline: @unchecked Sendable {
    /// What the pipeline reports to its owner, from GStreamer's threads.
    struct Callbacks: Sendable {
        /// Every bus message but stream-status ones, already off the posting thread's hook.
        var message: @Sendable (Message) -> Void
        /// A frame presented by the video sink, delivered from a reader thread in order.
        var presented: @Sendable (PresentedFrame) -> Void
        /// The current URI is fully read: return the URI to continue with gaplessly, if any
        /// (streaming thread: must not block).
        var aboutToFinish: @Sendable () -> String?
    }

    /// playbin flags: video, audio, soft volume, native video (we convert ourselves), buffering.
    private static let videoFlag: UInt32 = 0x1
    private static let audioFlag: UInt32 = 0x2
    private static let nativeVideoFlag: UInt32 = 0x40
    private static let baseFlags: UInt32 = 0x10 | nativeVideoFlag | 0x100
    /// Where the audio of a player without an audio output goes.
    static let discardingAudioSink = "fakesink sync=true"
    /// The element a video-only pipeline of its own (the frame cost, the image generator) opens a
    /// file with: playbin, not playbin3. GStreamer 1.22's playbin3 now and then never prerolls a
    /// file opened for video only: decodebin3 posts its stream collection, and every streaming
    /// thread then waits for good. Stock elements in one process, side by side (`bench/playbin-stalls`,
    /// docs/BENCHMARKS.md), opening a 1 s clip with two busy loops beside them: playbin3 stalled in
    /// 10 of 200 opens, playbin in none (none of either with the CPU idle). A check that asked for a
    /// frame cost then waited 12 s for it. Both pick the same decoders (by rank).
    ///
    /// playbin builds an audio sink even with audio left out of its flags (autoaudiosink, which
    /// opens the machine's sound device): `videoOnly(name:videoSink:)` gives it one that discards.
    private static let videoOnlyPlaybin = "playbin"

    /// A playbin (`videoOnlyPlaybin`) that decodes only video, into `videoSink`, which converts
    /// what it needs itself.
    static func videoOnly(name: String, videoSink: Element) throws(PlayerError) -> Element {
        let playbin = try Element.make(videoOnlyPlaybin, name: name)
        playbin.set("video-sink", object: videoSink.raw)
        let discard = try Element.make("fakesink")
        withExtendedLifetime(discard) { playbin.set("audio-sink", object: discard.raw) }
        playbin.set("flags", videoFlag | nativeVideoFlag)
        return playbin
    }

    let playbin: Element
    let bus: Bus
    private let videoBin: Element?
    /// Draws the chosen subtitles over the picture; nil without video.
    let subtitles: SubtitleOverlay?
    private let crop: Element?
    private let sizeFilter: Element?
    private let scale: Element?
    private let renderQueue: Element?
    private let stamp: Element?
    /// The video sink's bin, built from its description.
    let videoSink: Element?
    private let audioSink: Element?
    private var hasAudioOutput: Bool { audioSink != nil }
    private let chooser: StreamChooser
    private let box: CallbackBox
    private var cropProbeID: gulong = 0
    private var entryProbeID: gulong = 0
    /// The video output's way in (the deinterlacer's sink pad), watched for new picture sizes.
    private var entry: Pad?
    /// Watches the sources playbin3 makes (set once, at the end of init).
    private var handover: GaplessHandover?
    /// Ends the outputs when decodebin3 loses the end of a file (set once, at the end of init).
    private var endOfStreamGuard: EndOfStreamGuard?
    /// The stream groups since the last load or flushing seek, and their timing.
    let groups = StreamGroups()
    /// What of the item has arrived (set once, at the end of init).
    private(set) var loaded: LoadedData?
    private var groupProbes: [(pad: Pad, id: gulong)] = []
    private let video: Mutex<(settings: VideoOutputSettings, sourceSize: PixelSize?, entrySize: PixelSize?)>

    /// Builds playbin with the given outputs. `realtimePriority` is the SCHED_FIFO priority asked
    /// for the render thread (nil: leave it at normal priority).
    init(
        video settings: VideoOutputSettings?, audioSink: String?, realtimePriority: Int32?, callbacks: Callbacks
    ) throws(PlayerError) {
        playbin = try Element.make("playbin3", name: "player")
        guard let bus = playbin.bus else { throw .pipelineConstruction("playbin has no bus") }
        self.bus = bus
        box = CallbackBox(callbacks: callbacks, realtimePriority: realtimePriority)
        video = Mutex((settings ?? VideoOutputSettings(), nil, nil))

        var flags = Self.baseFlags
        var cropTarget: Pad?
        if let settings {
            flags |= Self.videoFlag
            // Interlaced video is deinterlaced (each field a frame: 50i plays as 50p); progressive
            // video passes through untouched. The picture is then turned upright as the
            // container's orientation tag says, so the crop cuts tiles from the upright picture.
            let deinterlace = try Element.make("deinterlace", name: "deinterlace")
            let orient = try Element.make("videoflip", name: "orient")
            orient.set("video-direction", Int32(GST_VIDEO_ORIENTATION_AUTO.rawValue))
            let overlay = try SubtitleOverlay()
            subtitles = overlay
            crop = try Element.make("videocrop", name: "crop")
            scale = try Element.make("videoscale", name: "scale")
            let convert = try Element.make("videoconvert", name: "convert")
            sizeFilter = try Element.make("capsfilter", name: "size")
            let queue = try Element.make("queue", name: "render-queue")
            queue.set("max-size-buffers", UInt32(4))
            queue.set("max-size-bytes", UInt32(0))
            queue.set("max-size-time", UInt64(0))
            renderQueue = queue
            let stamp = Element(
                sinking: lockstep_presentation_stamp_new(
                    "stamp", presentedTrampoline, handOff(box), releaseBox))
            self.stamp = stamp
            let sink = try Element.parseBin(settings.sinkDescription, role: "video")
            videoSink = sink
            // ximagesink and xvimagesink keep their shared-memory pool through NULL, while the
            // segments in it belong to the X connection closed there. playsink takes the sink to
            // NULL and back when it rebuilds its video chain (a load, a seek while paused), and
            // upstream goes on filling the old pool: every frame is then put from a dead segment
            // (BadShmSeg, nothing drawn, a black or stale screen) and every later free detaches
            // one. Without the allocation query upstream writes to its own memory, and the sink
            // copies each frame into the pool of its current connection.
            let poolBarrier =
                try describes(settings.sinkDescription, anyOf: ["ximagesink", "xvimagesink"])
                ? Element.make("identity", name: "x-pool-barrier") : nil
            poolBarrier?.set("drop-allocation", true)
            let bin = Element(sinking: gst_bin_new("video-output"))
            for element in [
                deinterlace, orient, overlay.element, crop!, scale!, convert, sizeFilter!, queue, stamp, sink,
            ] + (poolBarrier.map { [$0] } ?? []) {
                bin.add(element)
            }
            try deinterlace.link(to: orient)
            try orient.link(to: overlay.element)
            try overlay.element.link(to: crop!)
            try crop!.link(to: scale!)
            try scale!.link(to: convert)
            try convert.link(to: sizeFilter!)
            try sizeFilter!.link(to: queue)
            try queue.link(to: stamp)
            if let poolBarrier {
                try stamp.link(to: poolBarrier)
                try poolBarrier.link(to: sink)
            } else {
                try stamp.link(to: sink)
            }
            guard let target = crop!.staticPad("sink"), let entry = deinterlace.staticPad("sink"),
                let ghost = gst_ghost_pad_new("sink", entry.pointer)
            else { throw .pipelineConstruction("cannot expose the video output's sink pad") }
            gst_element_add_pad(bin.pointer, ghost)
            self.entry = entry
            videoBin = bin
            playbin.set("video-sink", object: bin.raw)
            cropTarget = target
        } else {
            videoBin = nil
            subtitles = nil
            crop = nil
            scale = nil
            sizeFilter = nil
            renderQueue = nil
            stamp = nil
            videoSink = nil
        }
        // Without an audio output, audio is decoded into a discarding sink rather than left out:
        // decodebin3 (GStreamer 1.22) stops feeding the video when a gapless successor follows an
        // item cut short by its end time and the audio of either goes nowhere.
        if let audioSink = audioSink ?? (settings == nil ? nil : Self.discardingAudioSink) {
            flags |= Self.audioFlag
            let sink = try Element.parseBin(audioSink, role: "audio")
            playbin.set("audio-sink", object: sink.raw)
            self.audioSink = sink
        } else {
            self.audioSink = nil
        }
        playbin.set("flags", flags)
        chooser = StreamChooser(hasVideoOutput: videoBin != nil, hasAudioOutput: self.audioSink != nil)
        chooser.watch(playbin)
        box.chooser = chooser
        box.renderQueue = renderQueue.map { UnsafeMutableRawPointer($0.pointer) }
        box.windowHandle = settings?.windowHandle ?? 0
        if let cropTarget, let settings {
            cropProbeID = gst_pad_add_probe(
                cropTarget.pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, cropProbe,
                lend(self), nil)
            if let entry {
                entryProbeID = gst_pad_add_probe(
                    entry.pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, entryProbe, lend(self), nil)
            }
            configureScaling(settings)
        }
        if let cropTarget { addGroupProbe(on: cropTarget, kind: .video) }
        if let pad = self.audioSink?.staticPad("sink") { addGroupProbe(on: pad, kind: .audio) }

        gst_bus_set_sync_handler(bus.pointer, syncHandler, handOff(box), releaseBox)
        lockstep_signal_connect(
            playbin.raw, "about-to-finish", unsafeBitCast(aboutToFinishTrampoline, to: GCallback.self),
            handOff(box), releaseClosureBox)
        AudioTail.watch(playbin)
        handover = GaplessHandover.watch(playbin)
        loaded = LoadedData(playbin: playbin)
        let groups = self.groups
        let outputs = [videoBin?.staticPad("sink"), self.audioSink?.staticPad("sink")].compactMap { $0 }
        endOfStreamGuard = EndOfStreamGuard(playbin: playbin, outputs: outputs) { [playbin] in
            var current = GST_STATE_VOID_PENDING
            var pending = GST_STATE_VOID_PENDING
            let result = gst_element_get_state(playbin.pointer, &current, &pending, 0)
            return result == GST_STATE_CHANGE_SUCCESS && current == GST_STATE_PLAYING && !groups.successorToCome
        }
    }

    /// The pipeline prerolled (ASYNC_DONE): streams of a network source may end from now on.
    func prerolled() {
        handover?.prerolled()
        chooser.prerolled(playbin)
    }

    /// Shuts the pipeline down on a thread of its own; the semaphore is signalled once it has
    /// stopped. A pipeline wedged inside GStreamer then holds only that thread, never its caller's.
    func stopOnItsOwnThread(settling: Bool = true) -> DispatchSemaphore {
        PipelineTeardowns.group.enter()
        return onItsOwnThread(named: "wallplayer.teardown") { [self] in
            shutdown(settling: settling)
            PipelineTeardowns.group.leave()
        }
    }

    /// Takes the pipeline to READY (a change under way settled first) on a thread of its own, to
    /// load another item on it; the semaphore is signalled once it is there.
    func readyOnItsOwnThread() -> DispatchSemaphore {
        onItsOwnThread(named: "wallplayer.stop") { [self] in
            playbin.settle()
            playbin.setState(GST_STATE_READY)
        }
    }

    /// Runs `work` on a new thread; the semaphore is signalled once it has returned.
    private func onItsOwnThread(named name: String, _ work: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            work()
            done.signal()
        }
        thread.name = name
        thread.start()
        return done
    }

    /// Stops every thread and drops the bus hook; the pipeline cannot be used afterwards.
    ///
    /// - Parameter settling: whether a state change still under way may end first (up to 2 s,
    ///   `settleIfTypefinding`); false for a pipeline whose preroll is known to have stalled, whose
    ///   change never ends: settling would only hold up the pipeline replacing it.
    func shutdown(settling: Bool = true) {
        endOfStreamGuard?.stop()
        if settling { playbin.settleIfTypefinding() }
        playbin.setState(GST_STATE_NULL)
        box.presented.stop()
        subtitles?.detach()
        gst_bus_set_sync_handler(bus.pointer, nil, nil, nil)
        if cropProbeID != 0, let pad = crop?.staticPad("sink") {
            gst_pad_remove_probe(pad.pointer, cropProbeID)
            cropProbeID = 0
        }
        if entryProbeID != 0, let entry {
            gst_pad_remove_probe(entry.pointer, entryProbeID)
            entryProbeID = 0
        }
        for probe in groupProbes { gst_pad_remove_probe(probe.pad.pointer, probe.id) }
        groupProbes = []
    }

    private func addGroupProbe(on pad: Pad, kind: StreamGroups.Kind) {
        let context = GroupProbeContext(groups: groups, kind: kind)
        let id = gst_pad_add_probe(
            pad.pointer,
            GstPadProbeType(
                GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue | GST_PAD_PROBE_TYPE_EVENT_UPSTREAM.rawValue
                    | GST_PAD_PROBE_TYPE_BUFFER.rawValue),
            groupProbe, handOff(context),
            releaseGroupProbeContext)
        if id != 0 { groupProbes.append((pad, id)) }
    }

    deinit {
        shutdown()
    }

    var renderThreadPriority: RenderThreadPriority { box.priority.withLock { $0 } }

    /// Asks for SCHED_FIFO at `priority` on the render thread (nil: normal scheduling), at once if
    /// it runs.
    func setRealtimePriority(_ priority: Int32?) { box.setWanted(priority) }

    // MARK: Sources and outputs

    /// Loads `uri`; the streams of the one before are forgotten until the new collection arrives.
    func setURI(_ uri: String) {
        chooser.loading(uri)
        playbin.set("uri", uri)
    }

    /// Remembers the streams the current item offers (a STREAM_COLLECTION message).
    func streamCollectionArrived(_ message: UnsafeMutablePointer<GstMessage>) {
        var collection: UnsafeMutablePointer<GstStreamCollection>?
        gst_message_parse_stream_collection(message, &collection)
        chooser.collectionArrived(collection.map { GObjectRef(owning: $0) })
    }

    /// decodebin3 says which streams it decodes (STREAMS_SELECTED).
    func streamsSelected(_ message: UnsafeMutablePointer<GstMessage>) {
        chooser.streamsSelected(message, on: playbin)
    }

    /// Plays the streams `choice` names: the item's video or not, one of its audio streams or
    /// none (`StreamChooser`).
    func selectStreams(_ choice: StreamChoice) {
        chooser.choose(choice, on: playbin)
    }

    /// Whether the streams were switched less than `interval` ago (`StreamChooser.switched`).
    func switchedStreams(within interval: MediaTime) -> Bool {
        chooser.switched(within: interval)
    }

    /// Whether `object` is the video output or inside it.
    func isVideoElement(_ object: UnsafeMutablePointer<GstObject>) -> Bool {
        guard let videoBin else { return false }
        return object == videoBin.gstObject || gst_object_has_as_ancestor(object, videoBin.gstObject) != 0
    }

    /// Whether `object` is part of a user-given sink: an error there breaks every item.
    func isOutputElement(_ object: UnsafeMutablePointer<GstObject>) -> Bool {
        if let sink = videoSink, object == sink.gstObject || gst_object_has_as_ancestor(object, sink.gstObject) != 0 {
            return true
        }
        if let sink = audioSink, object == sink.gstObject || gst_object_has_as_ancestor(object, sink.gstObject) != 0 {
            return true
        }
        return false
    }

    var videoSettings: VideoOutputSettings { video.withLock { $0.settings } }

    /// Whether the video sink draws the frame it prerolls on at once (GstVideoSink's
    /// `show-preroll-frame`, on every element of the sink's bin that has it), or only when it plays.
    func showPrerollFrame(_ shows: Bool) {
        setOnVideoSink("show-preroll-frame", shows)
    }

    /// Sets boolean `property` on the video sink and every element of its bin that has it.
    private func setOnVideoSink(_ property: String, _ value: Bool) {
        forEachVideoSinkElement { object in
            if lockstep_object_has_property(object, property) != 0 {
                lockstep_object_set_bool(object, property, value ? 1 : 0)
            }
        }
    }

    /// Boolean `property` of every element of the video sink that has it.
    func videoSinkSetting(_ property: String) -> [Bool] {
        var values: [Bool] = []
        forEachVideoSinkElement { object in
            if lockstep_object_has_property(object, property) != 0 {
                values.append(lockstep_object_get_bool(object, property) != 0)
            }
        }
        return values
    }

    /// Calls `body` with the video sink and every element of its bin.
    private func forEachVideoSinkElement(_ body: (gpointer) -> Void) {
        guard let videoSink else { return }
        GStreamer.forElementAndInside(videoSink, body)
    }

    /// Applies new crop, gravity and size settings to the running pipeline. The sink description
    /// cannot change here: that needs a new pipeline.
    func updateVideo(_ settings: VideoOutputSettings) {
        let source = video.withLock { state -> PixelSize? in
            state.settings = settings
            return state.sourceSize
        }
        configureScaling(settings)
        if let source { applyCrop(source: source) }
    }

    /// A picture of another size is coming: the crop is opened until the new size reaches it
    /// (`sourceSizeChanged`). Until then the elements before it ask it what they may send, and
    /// insets cut for a larger picture leave a smaller one no width at all: every item after a
    /// larger one would fail to negotiate. The caps travel on one streaming thread from here to
    /// the crop, so no frame passes it open.
    fileprivate func entrySizeChanged(_ size: PixelSize) {
        let changed = video.withLock { state in
            defer { state.entrySize = size }
            return state.entrySize != size
        }
        guard changed, let crop else { return }
        for side in ["left", "right", "top", "bottom"] { crop.set(side, Int32(0)) }
    }

    fileprivate func sourceSizeChanged(_ size: PixelSize) {
        video.withLock { $0.sourceSize = size }
        applyCrop(source: size)
    }

    private func applyCrop(source: PixelSize) {
        guard let crop else { return }
        let insets = videoSettings.cropInsets(source: source, sinkDisplay: sinkDisplaySize())
        crop.set("left", Int32(insets.left))
        crop.set("right", Int32(insets.right))
        crop.set("top", Int32(insets.top))
        crop.set("bottom", Int32(insets.bottom))
    }

    /// The display size a sink reports (kmssink's `display-width` and `display-height`, once it
    /// opened its device), if it does.
    private func sinkDisplaySize() -> PixelSize? {
        var size: PixelSize?
        forEachVideoSinkElement { object in
            guard lockstep_object_has_property(object, "display-width") != 0,
                lockstep_object_has_property(object, "display-height") != 0
            else { return }
            let width = Int(lockstep_object_get_int(object, "display-width"))
            let height = Int(lockstep_object_get_int(object, "display-height"))
            if width > 0, height > 0 { size = PixelSize(width: width, height: height) }
        }
        return size
    }

    private func configureScaling(_ settings: VideoOutputSettings) {
        guard let scale, let sizeFilter else { return }
        scale.set("add-borders", settings.videoGravity == .resizeAspect)
        // A sink that scales to its surface (ximagesink by asking upstream for its window's size,
        // xvimagesink, glimagesink) keeps the picture's shape unless the gravity is resize.
        setOnVideoSink("force-aspect-ratio", settings.videoGravity != .resize)
        let description: String
        if let size = settings.outputSize {
            description = "video/x-raw,width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1"
        } else {
            description = "video/x-raw"
        }
        let caps = gst_caps_from_string(description)
        sizeFilter.set("caps", object: caps.map { UnsafeMutableRawPointer($0) })
        if let caps { gst_mini_object_unref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self)) }
    }

    /// The last frame the render thread passed to the sink (prerolled or presented).
    func lastVideoSample() -> Sample? {
        guard let stamp else { return nil }
        return lockstep_presentation_stamp_last_sample(stamp.pointer).map { Sample(owning: $0) }
    }

    // MARK: Clock and timing

    /// Runs the pipeline on `clock` (`gst_pipeline_use_clock`).
    func use(_ clock: MasterClock) {
        gst_pipeline_use_clock(playbin.cast(to: GstPipeline.self), clock.clock.pointer)
    }

    /// Fixes the latency every sink presents with (`gst_pipeline_set_latency`).
    func setLatency(_ latency: MediaTime) {
        box.latency.store(latency.nanoseconds ?? 0, ordering: .relaxed)
        gst_pipeline_set_latency(playbin.cast(to: GstPipeline.self), latency.clockTime ?? 0)
    }

    var latency: MediaTime {
        MediaTime(clockTime: gst_pipeline_get_latency(playbin.cast(to: GstPipeline.self)))
    }

    /// While playing, holds back every frame due on the pipeline's clock at or after `hostTime` (a
    /// pause's), until the pipeline pauses: a pause woken late then presents none of them. A flush
    /// or a new start opens the gate (nil). `fromTheStart`, for a held frame's start from PAUSED:
    /// the gate holds from before the pipeline plays (its sink, which starts first, presents the
    /// held frame and may ask for the next before the gate's element has started).
    func holdFrames(from hostTime: MediaTime?, fromTheStart: Bool = false) {
        guard let stamp else { return }
        lockstep_presentation_stamp_set_gate(
            stamp.pointer, hostTime.flatMap { ($0 - latency).clockTime } ?? GStreamer.clockTimeNone,
            fromTheStart ? 1 : 0)
    }
}

/// What the C callbacks reach: the owner's closures and the render-thread bookkeeping.
private final class CallbackBox: @unchecked Sendable {
    let callbacks: PlaybackPipeline.Callbacks
    /// The render thread once it runs, and the SCHED_FIFO priority wanted for it (nil: normal).
    private let render: Mutex<(thread: pthread_t?, wanted: Int32?)>
    let priority = Mutex(RenderThreadPriority.notStarted)
    /// The render queue element, compared by address in the sync handler.
    var renderQueue: UnsafeMutableRawPointer?
    /// The window the video sink draws into (an X window id); 0: the sink's own.
    var windowHandle: UInt = 0
    /// The pipeline's stream chooser: decodebin3's collections are followed by its selection.
    var chooser: StreamChooser?
    /// The pipeline latency in nanoseconds, part of when each frame is due: an atomic, as the
    /// render thread reads it.
    let latency = Atomic<Int64>(0)
    /// Where the render thread leaves presented frames, lock-free.
    let presented: PresentationRing

    init(callbacks: PlaybackPipeline.Callbacks, realtimePriority: Int32?) {
        self.callbacks = callbacks
        render = Mutex((nil, realtimePriority))
        presented = PresentationRing(deliver: callbacks.presented)
    }

    /// Called on the render thread as it starts.
    func renderThreadEntered() {
        let wanted = render.withLock { state -> Int32? in
            state.thread = pthread_self()
            return state.wanted
        }
        apply(wanted, to: pthread_self())
    }

    /// Called on the render thread as it leaves its task: back to normal scheduling, as it goes
    /// back to the thread pool; `wanted` applies again when a render thread enters.
    func renderThreadLeaving() {
        render.withLock { $0.thread = nil }
        _ = RenderThreadPriority.apply(nil, to: pthread_self())
    }

    /// Asks for `wanted` now, on the render thread if it runs, and on it when it starts.
    func setWanted(_ wanted: Int32?) {
        let thread = render.withLock { state -> pthread_t? in
            state.wanted = wanted
            return state.thread
        }
        if let thread { apply(wanted, to: thread) }
    }

    /// Sets the thread's policy, and records what was granted.
    private func apply(_ wanted: Int32?, to thread: pthread_t) {
        let granted = RenderThreadPriority.apply(wanted, to: thread)
        priority.withLock { $0 = granted }
    }
}

private let releaseBox: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<CallbackBox>.fromOpaque(pointer).release()
}

private let releaseClosureBox: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<CallbackBox>.fromOpaque(pointer).release()
}

/// The bus sync handler: runs on the thread that posted the message.
///
/// Every message is dropped from the bus, and a sync handler that drops a message owns it
/// (`GstBusSyncHandler`): each is taken over as an owned `Message`, released here or after the
/// player handled it. A message kept by mistake also keeps its source element alive, and with it
/// the source, demuxer, decoders and buffers of every pass a looping player has finished: about
/// 100 KB a pass.
private let syncHandler: GstBusSyncHandler = { _, message, data in
    guard let message else { return GST_BUS_DROP }
    let owned = Message(owning: message)
    guard let data else { return GST_BUS_DROP }
    let box = handedOver(data, as: CallbackBox.self)
    if message.pointee.type == GST_MESSAGE_STREAM_STATUS {
        if let status = RenderThreadPriority.threadStatus(message),
            status.owner == box.renderQueue.map({ UInt(bitPattern: $0) })
        {
            if status.entering { box.renderThreadEntered() } else { box.renderThreadLeaving() }
        }
        withExtendedLifetime(owned) {}
        return GST_BUS_DROP
    }
    if box.windowHandle != 0, message.pointee.type == GST_MESSAGE_ELEMENT,
        lockstep_video_overlay_prepare(message, guintptr(box.windowHandle)) != 0
    {
        withExtendedLifetime(owned) {}
        return GST_BUS_DROP
    }
    switch message.pointee.type {
    case GST_MESSAGE_STREAM_COLLECTION:
        box.chooser?.confirmSelection(after: message)
    case GST_MESSAGE_STREAMS_SELECTED where box.chooser?.isConfirmation(message) == true:
        withExtendedLifetime(owned) {}
        return GST_BUS_DROP
    default:
        break
    }
    box.callbacks.message(owned)
    return GST_BUS_DROP
}

private let presentedTrampoline: LockstepPresentedFunc = { data, pts, duration, runningTime, clockTime, baseTime in
    guard let data else { return }
    let box = handedOver(data, as: CallbackBox.self)
    let running = MediaTime(clockTime: runningTime)
    let base = MediaTime(clockTime: baseTime)
    box.presented.push(
        PresentedFrame(
            presentationTimestamp: MediaTime(clockTime: pts), duration: MediaTime(clockTime: duration),
            runningTime: running, presentedAt: MediaTime(clockTime: clockTime),
            dueAt: base + running + MediaTime(nanoseconds: box.latency.load(ordering: .relaxed))))
}

private let aboutToFinishTrampoline: @convention(c) (gpointer?, gpointer?) -> Void = { playbin, data in
    guard let playbin, let data else { return }
    let box = handedOver(data, as: CallbackBox.self)
    if let next = box.callbacks.aboutToFinish() {
        box.chooser?.follows(next)
        lockstep_object_set_string(playbin, "uri", next)
    }
}

/// The picture size a probed caps event announces, if `info` is one.
private func announcedSize(_ info: UnsafeMutablePointer<GstPadProbeInfo>?) -> PixelSize? {
    guard let info, let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self),
        event.pointee.type == GST_EVENT_CAPS
    else { return nil }
    var caps: UnsafeMutablePointer<GstCaps>?
    gst_event_parse_caps(event, &caps)
    return GStreamer.pictureSize(of: caps)
}

/// Watches caps on the way into the video output: a new picture size opens the crop.
private let entryProbe: GstPadProbeCallback = { _, info, data in
    if let data, let size = announcedSize(info) { handedOver(data, as: PlaybackPipeline.self).entrySizeChanged(size) }
    return GST_PAD_PROBE_OK
}

/// Watches caps on the way into the crop: the source size decides the crop insets.
private let cropProbe: GstPadProbeCallback = { _, info, data in
    if let data, let size = announcedSize(info) { handedOver(data, as: PlaybackPipeline.self).sourceSizeChanged(size) }
    return GST_PAD_PROBE_OK
}
