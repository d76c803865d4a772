internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

/// What of an item has arrived: the span of stream time that every audio and video stream has
/// brought, demuxed, to decodebin3's multiqueue since the last load or flushing seek.
///
/// playbin3 (GStreamer 1.22) answers buffering queries without ranges, so the player cannot ask
/// what is loaded; it watches what comes in instead. The span starts at the latest of the
/// streams' first timestamps and ends at the earliest of their last ones (a moment is loaded once
/// all of its streams are); subtitle streams are left out, as sparse. It is a lower bound: data
/// still in the source's own queue, not yet demuxed, is not counted.
final class LoadedData: @unchecked Sendable {
    /// One input of the multiqueue: its segment, whether it carries audio or video, and the
    /// stream times it has brought.
    final class Stream: @unchecked Sendable {
        struct State {
            var segment: SegmentValues?
            var isMedia = false
            var first: Int64?
            var last: Int64?
        }

        let pad: UInt
        let state = Mutex(State())

        init(pad: UInt) { self.pad = pad }
    }

    private let streams = Mutex<[Stream]>([])

    /// Watches the multiqueue of the decodebin3 inside `playbin`; nil when there is none.
    init?(playbin: Element) {
        guard let decodebin = GStreamer.descendant(of: playbin, factory: "decodebin3"),
            let multiqueue = GStreamer.descendant(of: decodebin, factory: "multiqueue")
        else { return nil }
        let context = handOff(self)
        lockstep_signal_connect(
            multiqueue.raw, "pad-added", unsafeBitCast(loadedPadAdded, to: GCallback.self), context, releaseLoaded)
        lockstep_signal_connect(
            multiqueue.raw, "pad-removed", unsafeBitCast(loadedPadRemoved, to: GCallback.self),
            handOff(self), releaseLoaded)
        GStreamer.forEachPad(of: multiqueue, direction: GST_PAD_SINK) { watch($0) }
    }

    fileprivate func watch(_ pad: UnsafeMutablePointer<GstPad>) {
        guard gst_pad_get_direction(pad) == GST_PAD_SINK else { return }
        let stream = Stream(pad: UInt(bitPattern: pad))
        streams.withLock { $0.append(stream) }
        gst_pad_add_probe(
            pad,
            GstPadProbeType(
                GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
                    | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue),
            loadedProbe, handOff(stream), releaseStream)
    }

    fileprivate func forget(_ pad: UnsafeMutablePointer<GstPad>) {
        let key = UInt(bitPattern: pad)
        streams.withLock { $0.removeAll { $0.pad == key } }
    }

    /// The loaded span in item time (stream time less `origin`), nil before any audio or video.
    func range(origin: MediaTime) -> MediaTimeRange? {
        let spans = streams.withLock { streams in
            streams.compactMap { stream -> (first: Int64, last: Int64)? in
                stream.state.withLock { state in
                    guard state.isMedia, let first = state.first, let last = state.last else { return nil }
                    return (first, last)
                }
            }
        }
        guard let start = spans.map(\.first).max(), let end = spans.map(\.last).min(), end > start else {
            return nil
        }
        let from = max(.zero, MediaTime(nanoseconds: start) - origin)
        let to = MediaTime(nanoseconds: end) - origin
        return to > from ? MediaTimeRange(start: from, end: to) : nil
    }
}

private let releaseLoaded: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<LoadedData>.fromOpaque(pointer).release()
}

private let releaseStream: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<LoadedData.Stream>.fromOpaque(pointer).release()
}

private let loadedPadAdded: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, data in
    guard let pad, let data else { return }
    handedOver(data, as: LoadedData.self).watch(pad.assumingMemoryBound(to: GstPad.self))
}

private let loadedPadRemoved: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, data in
    guard let pad, let data else { return }
    handedOver(data, as: LoadedData.self).forget(pad.assumingMemoryBound(to: GstPad.self))
}

private let loadedProbe: GstPadProbeCallback = { _, info, data in
    guard let info, let data, let object = info.pointee.data else { return GST_PAD_PROBE_OK }
    let stream = handedOver(data, as: LoadedData.Stream.self)
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
        let buffer = probedBuffer(object)
        let timestamp = buffer.pointee.pts != GStreamer.clockTimeNone ? buffer.pointee.pts : buffer.pointee.dts
        guard timestamp != GStreamer.clockTimeNone else { return GST_PAD_PROBE_OK }
        stream.state.withLock { state in
            guard let values = state.segment else { return }
            var segment = GstSegment()
            gst_segment_init(&segment, GST_FORMAT_TIME)
            values.apply(to: &segment)
            let start = gst_segment_to_stream_time(&segment, GST_FORMAT_TIME, timestamp)
            guard start != GStreamer.clockTimeNone, let first = Int64(exactly: start) else { return }
            let duration =
                buffer.pointee.duration == GStreamer.clockTimeNone ? 0 : Int64(clamping: buffer.pointee.duration)
            state.first = state.first ?? first
            state.last = max(state.last ?? first, first + duration)
        }
        return GST_PAD_PROBE_OK
    }
    let event = object.assumingMemoryBound(to: GstEvent.self)
    switch event.pointee.type {
    case GST_EVENT_SEGMENT:
        let segment = GStreamer.segment(of: event)
        let values = segment.format == GST_FORMAT_TIME ? SegmentValues(segment) : nil
        stream.state.withLock { $0.segment = values }
    case GST_EVENT_CAPS:
        var caps: UnsafeMutablePointer<GstCaps>?
        gst_event_parse_caps(event, &caps)
        let name =
            caps.flatMap { gst_caps_get_structure($0, 0) }.flatMap { gst_structure_get_name($0) }
            .map { String(cString: $0) } ?? ""
        stream.state.withLock { $0.isMedia = name.hasPrefix("video/") || name.hasPrefix("audio/") }
    case GST_EVENT_FLUSH_STOP, GST_EVENT_STREAM_START:
        stream.state.withLock { state in
            state.first = nil
            state.last = nil
        }
    default:
        break
    }
    return GST_PAD_PROBE_OK
}
