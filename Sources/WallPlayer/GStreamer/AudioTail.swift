internal import CGStreamer
internal import CLockstepShims
import Foundation
import LockstepLocks
import LockstepTime

/// Puts back the audio that GStreamer 1.22's MP4 demuxer leaves out at the end of a file.
///
/// An AAC track starts with encoder priming (1024 samples), which the file's edit list skips:
/// the track's own timeline runs that much ahead of the presentation. qtdemux compares each
/// sample's time in the track's own timeline with the presentation's end, so it stops one packet
/// early: the last 10–21 ms of sound never reach the decoder (measured on ffmpeg-made files: 768 of
/// 96 768 samples of a 2 s clip). Stock playbin3 plays that as a hole; a wall that loops a clip
/// plays it as a click at every loop.
///
/// Every qtdemux the pipeline creates gets a probe on its audio pads. At the end of the stream,
/// when what it sent stops short of its segment's end, the probe reads the missing packets from
/// the file with libavformat (edit lists not applied, the timeline qtdemux stamps in) and sends
/// them on before the end of the stream. The decoder and the segment then cut them exactly where
/// the edit list says the sound ends.
enum AudioTail {
    /// Shortfalls under this are rounding, not missing packets.
    static let tolerance = MediaTime(value: 100, timescale: 1_000_000)
    /// The most qtdemux leaves out: the packets within the priming the edit list skips (1024 or
    /// 2048 samples, at most 46 ms at 44.1 kHz). A larger shortfall is not that bug (the stream was
    /// stopped early from downstream, at a bounded item's end), and nothing is put back.
    static let largest = MediaTime(value: 50, timescale: 1_000)

    /// The track-timeline range whose packets are missing when a forward segment ending at `stop`
    /// received audio up to `sentUntil`; nil when nothing is.
    static func missing(sentUntil: MediaTime?, stop: MediaTime?, rate: Double) -> Range<MediaTime>? {
        guard rate > 0, let sentUntil, let stop, stop - sentUntil > tolerance, stop - sentUntil <= largest else {
            return nil
        }
        // A packet stamped a nanosecond early by rounding still counts as the next one.
        return (sentUntil - MediaTime(value: 1, timescale: 1_000_000))..<stop
    }

    /// Hooks every qtdemux that `pipeline` (a bin) creates from now on.
    static func watch(_ pipeline: Element) {
        lockstep_signal_connect(
            pipeline.raw, "deep-element-added", unsafeBitCast(elementAdded, to: GCallback.self), nil, nil)
    }
}

/// What one probed demuxer pad has sent: its segment and where its last buffer ended.
final class AudioTailContext: @unchecked Sendable {
    struct State {
        var stop: MediaTime?
        var rate = 1.0
        var sentUntil: MediaTime?
    }

    /// Which audio track of the file the pad carries (qtdemux names them audio_0, audio_1…).
    let ordinal: Int
    let state = Mutex(State())

    init(ordinal: Int) {
        self.ordinal = ordinal
    }
}

private let elementAdded: @convention(c) (gpointer?, gpointer?, gpointer?, gpointer?) -> Void = { _, _, element, _ in
    guard let element else { return }
    guard GStreamer.factoryName(of: element.assumingMemoryBound(to: GstElement.self)) == "qtdemux" else { return }
    lockstep_signal_connect(element, "pad-added", unsafeBitCast(padAdded, to: GCallback.self), nil, nil)
}

private let padAdded: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, _ in
    guard let pad, let raw = gst_object_get_name(pad.assumingMemoryBound(to: GstObject.self)) else { return }
    let name = String(cString: raw)
    g_free(raw)
    guard name.hasPrefix("audio_"), let ordinal = Int(name.dropFirst("audio_".count)) else { return }
    let context = AudioTailContext(ordinal: ordinal)
    gst_pad_add_probe(
        pad.assumingMemoryBound(to: GstPad.self),
        GstPadProbeType(
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue),
        audioTailProbe, handOff(context), releaseAudioTailContext)
}

private let releaseAudioTailContext: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<AudioTailContext>.fromOpaque(pointer).release()
}

private func nanoseconds(_ value: guint64) -> MediaTime? {
    guard value != guint64.max, let value = Int64(exactly: value) else { return nil }
    return MediaTime(value: value, timescale: 1_000_000_000)
}

private let audioTailProbe: GstPadProbeCallback = { pad, info, data in
    guard let pad, let info, let data, let object = info.pointee.data else { return GST_PAD_PROBE_OK }
    let context = handedOver(data, as: AudioTailContext.self)
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
        let buffer = probedBuffer(object)
        if let pts = nanoseconds(buffer.pointee.pts), let duration = nanoseconds(buffer.pointee.duration) {
            context.state.withLock { $0.sentUntil = pts + duration }
        }
        return GST_PAD_PROBE_OK
    }
    let event = object.assumingMemoryBound(to: GstEvent.self)
    switch event.pointee.type {
    case GST_EVENT_SEGMENT:
        let segment = GStreamer.segment(of: event)
        context.state.withLock {
            $0 = AudioTailContext.State(
                stop: segment.format == GST_FORMAT_TIME ? nanoseconds(segment.stop) : nil, rate: segment.rate)
        }
    case GST_EVENT_FLUSH_STOP:
        context.state.withLock { $0.sentUntil = nil }
    case GST_EVENT_EOS:
        let state = context.state.withLock { $0 }
        guard let range = AudioTail.missing(sentUntil: state.sentUntil, stop: state.stop, rate: state.rate),
            let path = sourcePath(of: pad)
        else { break }
        // The pad is flagged EOS before its probes see the event, so it refuses more buffers: they
        // go straight to its peer, which has not seen the end yet.
        guard let peer = gst_pad_get_peer(pad) else { break }
        defer { gst_object_unref(peer) }
        for packet in MediaInspector.audioPackets(path: path, ordinal: context.ordinal, in: range) {
            guard let buffer = packet.data.withUnsafeBytes({ gst_buffer_new_memdup($0.baseAddress, gsize($0.count)) }),
                let pts = packet.timestamp.nanoseconds, pts >= 0
            else { break }
            buffer.pointee.pts = guint64(pts)
            buffer.pointee.dts = guint64(pts)
            buffer.pointee.duration = packet.duration.nanoseconds.map { guint64(max(0, $0)) } ?? guint64.max
            // Read downstream by probes on other threads, through GStreamer's queues.
            lockstep_handoff_release(buffer)
            guard gst_pad_chain(peer, buffer) == GST_FLOW_OK else { break }
        }
    default:
        break
    }
    return GST_PAD_PROBE_OK
}

/// The local file a demuxer pad's element reads, asked upstream with a URI query.
private func sourcePath(of pad: UnsafeMutablePointer<GstPad>) -> String? {
    guard let demuxer = gst_pad_get_parent_element(pad) else { return nil }
    defer { gst_object_unref(demuxer) }
    guard let sink = gst_element_get_static_pad(demuxer, "sink") else { return nil }
    defer { gst_object_unref(sink) }
    guard let query = gst_query_new_uri() else { return nil }
    defer { gst_mini_object_unref(UnsafeMutableRawPointer(query).assumingMemoryBound(to: GstMiniObject.self)) }
    guard gst_pad_peer_query(sink, query) != 0 else { return nil }
    var uri: UnsafeMutablePointer<gchar>?
    gst_query_parse_uri(query, &uri)
    guard let uri else { return nil }
    defer { g_free(uri) }
    guard let url = URL(string: String(cString: uri)), url.isFileURL else { return nil }
    return url.path
}
