internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

/// Draws the chosen subtitle track over the picture: a `textoverlay` in the video output, before
/// the crop (a wall's tiles are cut from the picture with its subtitles), whose text is set for
/// each frame from the track's cues at the frame's item time. With no subtitles chosen and closed
/// captions on, it draws the CEA-608 captions the frames carry (`ClosedCaptionDecoder`).
///
/// playbin3 (GStreamer 1.22) renders subtitles only without the native-video flag, which the
/// output needs, and switching or removing a text stream while playing left old text on screen
/// or stalled playback; the cues come from libavformat instead (`MediaInspector.subtitleCues`), so
/// turning subtitles on, off or to another language is exact to the frame on every screen alike.
final class SubtitleOverlay: @unchecked Sendable {
    private struct State {
        var cues: SubtitleCues?
        /// GStreamer's stream time at item time zero (`PlayerItem.streamTimeOrigin`).
        var origin: MediaTime = .zero
        /// The text set on the overlay; nil while it is silent.
        var shown: String?
        /// Whether closed captions are drawn when no subtitles are chosen.
        var closedCaptions = false
    }

    /// Decodes the captions of every frame that has them, drawn or not, so that turning them on
    /// shows what is on screen now: the video streaming thread's alone.
    private let captions = ClosedCaptionDecoder()
    /// The caption text on screen after the last frame: the video streaming thread's alone.
    private var captionText: String?

    let element: Element
    private let state = Mutex(State())
    private var probe: (pad: Pad, id: gulong)

    init() throws(PlayerError) {
        element = try Element.make("textoverlay", name: "subtitles")
        element.set("silent", true)
        element.set("wait-text", false)
        // Bold sans serif, scaled with the picture (about 1/20 of its height), outlined: legible on
        // any picture from across a room.
        element.set("font-desc", "Sans Bold 14")
        guard let pad = element.staticPad("video_sink") else {
            throw .pipelineConstruction("textoverlay has no video_sink pad")
        }
        probe = (pad, 0)
        // The probe holds this object until `detach()` removes it.
        let id = gst_pad_add_probe(
            pad.pointer, GST_PAD_PROBE_TYPE_BUFFER, subtitleProbe, handOff(self),
            releaseOverlay)
        probe.id = id
    }

    /// Stops drawing, for a pipeline shutting down.
    func detach() {
        guard probe.id != 0 else { return }
        gst_pad_remove_probe(probe.pad.pointer, probe.id)
        probe.id = 0
    }

    /// Shows `cues` from the next frame on (nil: no subtitles). `origin` is the item's stream time
    /// at item time zero.
    func show(_ cues: SubtitleCues?, origin: MediaTime) {
        state.withLock { state in
            state.cues = cues
            state.origin = origin
        }
        if cues == nil { update(to: nil) }
    }

    /// Draws the closed captions the frames carry from the next frame on, while no subtitles are
    /// chosen (`AVPlayer.closedCaptionDisplayEnabled`).
    func showClosedCaptions(_ enabled: Bool) {
        let silent = state.withLock { state -> Bool in
            state.closedCaptions = enabled
            return !enabled && state.cues == nil
        }
        if silent { update(to: nil) }
    }

    /// Whether subtitles or captions are shown: without, frames with no captions pass with no
    /// work for them.
    fileprivate var isShowing: Bool { state.withLock { $0.cues != nil || $0.closedCaptions } }

    /// Sets the text for the frame `buffer` at stream time `streamTime`, after reading the
    /// captions it carries, if any.
    fileprivate func frame(_ buffer: UnsafeMutablePointer<GstBuffer>, atStreamTime streamTime: MediaTime) {
        var type: Int32 = 0
        var data: UnsafePointer<guint8>?
        var size: gsize = 0
        if lockstep_buffer_captions(buffer, &type, &data, &size) != 0, let data,
            case .text(let text)? = captions.decode(
                type: type, data: UnsafeRawBufferPointer(start: data, count: Int(size)), at: streamTime)
        {
            captionText = text
        }
        let wanted = state.withLock { state -> String?? in
            if let cues = state.cues { return .some(cues.text(at: streamTime - state.origin)) }
            return state.closedCaptions ? .some(captionText) : .none
        }
        guard case .some(let text) = wanted else { return }
        update(to: text)
    }

    private func update(to text: String?) {
        let changed = state.withLock { state -> Bool in
            defer { state.shown = text }
            return state.shown != text
        }
        guard changed else { return }
        if let text { element.set("text", text) }
        element.set("silent", text == nil)
    }
}

/// Runs on the video streaming thread before textoverlay draws each frame.
private let subtitleProbe: GstPadProbeCallback = { pad, info, data in
    guard let pad, let info, let data, let object = info.pointee.data
    else { return GST_PAD_PROBE_OK }
    let overlay = handedOver(data, as: SubtitleOverlay.self)
    let buffer = probedBuffer(object)
    guard overlay.isShowing || lockstep_buffer_has_captions(buffer) != 0,
        let event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0)
    else {
        return GST_PAD_PROBE_OK
    }
    defer { gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self)) }
    var segment: UnsafePointer<GstSegment>?
    gst_event_parse_segment(event, &segment)
    guard let segment else { return GST_PAD_PROBE_OK }
    let streamTime = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, buffer.pointee.pts)
    guard streamTime != GStreamer.clockTimeNone else { return GST_PAD_PROBE_OK }
    overlay.frame(buffer, atStreamTime: MediaTime(clockTime: streamTime))
    return GST_PAD_PROBE_OK
}

private let releaseOverlay: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<SubtitleOverlay>.fromOpaque(pointer).release()
}
