internal import CGStreamer
internal import CLockstepShims
import Dispatch
import LockstepLocks
import LockstepTime

/// Ends the streams of an item whose end decodebin3 received and then lost.
///
/// decodebin3 (GStreamer 1.22.0) sometimes tears its outputs down at the end of a file without
/// sending their end of stream on: every stream of the file has ended at decodebin3's input, the
/// multiqueue slots that fed the outputs are gone, and the decoders never drain. Playback stops a
/// few frames short of the end (the frames the video decoder held) and the item never ends. Seen
/// with a Matroska file of one video, two audio and two subtitle streams, both cores busy
/// decoding: 1 or 2 plays in 30 to 40, with or without a language chosen; stock playbin3 was not seen to do
/// it in 45 plays, so the timing of ours (preroll, then PLAYING at a set time) matters.
/// One cause is now known and kept from happening upstream (decodebin3 removes input streams
/// that ended while another input's first buffer is handled: `GaplessHandover`); the guard stays
/// for any other.
///
/// The guard looks four times a second while the pipeline plays with no gapless successor on
/// its way. When every input of decodebin3 has ended (EOS sticky on each of its sink pads), and
/// each output that has had a buffer and not yet its end has had nothing for `grace`, with no
/// streaming thread inside it (its stream lock free), it sends those outputs their end of stream.
/// The sinks then end as usual and so does the item, a few frames early, with a warning on the
/// bus. An end that is on its way is never overtaken: it follows the last buffer within
/// milliseconds, and a thread pushing a buffer holds the lock.
final class EndOfStreamGuard: @unchecked Sendable {
    /// How long outputs must look stopped before they are ended.
    static let grace = MediaTime(value: 1, timescale: 1)
    static let interval = DispatchTimeInterval.milliseconds(250)

    private let decodebin: Element
    private let outputs: [EndOfStreamGuardOutput]
    private let isPlaying: @Sendable () -> Bool
    /// Since when (monotonic) every look found the item stopped at its end.
    private let stoppedSince = Mutex<MediaTime?>(nil)
    private let timer: any DispatchSourceTimer

    /// Watches `outputs` (the sink pads of playbin's sinks) and the decodebin3 inside `playbin`;
    /// nil when it has none. `isPlaying` says whether the pipeline plays with no gapless successor
    /// to come.
    init?(playbin: Element, outputs: [Pad], isPlaying: @escaping @Sendable () -> Bool) {
        guard let decodebin = GStreamer.descendant(of: playbin, factory: "decodebin3") else { return nil }
        self.decodebin = decodebin
        self.outputs = outputs.map(EndOfStreamGuardOutput.init)
        self.isPlaying = isPlaying
        for output in self.outputs {
            gst_pad_add_probe(
                output.pad.pointer,
                GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue),
                outputProbe, handOff(output), releaseOutput)
        }
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "lockstep.end-of-stream-guard"))
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval)
        timer.setEventHandler { [weak self] in self?.look() }
        timer.resume()
    }

    /// Stops looking; call before the pipeline goes to NULL.
    func stop() {
        timer.cancel()
    }

    deinit {
        timer.cancel()
    }

    private func look() {
        let now = LocalClock.monotonic.now()
        let waiting = outputs.filter { output in
            output.lastBuffer.withLock { $0 != nil } && lockstep_pad_is_eos(output.pad.pointer) == 0
        }
        guard isPlaying(), !waiting.isEmpty, inputsEnded(),
            waiting.allSatisfy({ output in output.lastBuffer.withLock { $0.map { now - $0 >= Self.grace } ?? false } })
        else {
            stoppedSince.withLock { $0 = nil }
            return
        }
        let since = stoppedSince.withLock { since in
            if since == nil { since = now }
            return since!
        }
        guard now - since >= Self.grace else { return }
        stoppedSince.withLock { $0 = nil }
        var ended: [String] = []
        for output in waiting {
            let pad = output.pad.pointer
            // Held, no buffer can enter meanwhile; not free, one is entering.
            guard lockstep_pad_stream_trylock(pad) != 0 else { continue }
            defer { lockstep_pad_stream_unlock(pad) }
            guard lockstep_pad_is_eos(pad) == 0, let eos = gst_event_new_eos() else { continue }
            _ = gst_pad_send_event(pad, eos)
            ended.append(GStreamer.padName(pad))
        }
        guard !ended.isEmpty else { return }
        let text =
            "decodebin3 lost the end of stream at the end of the item; ended "
            + ended.joined(separator: ", ") + " after \(Self.grace.seconds) s without data"
        let error = g_error_new_literal(gst_stream_error_quark(), Int32(GST_STREAM_ERROR_FAILED.rawValue), text)
        defer { g_error_free(error) }
        if let message = gst_message_new_warning(decodebin.gstObject, error, nil) {
            gst_element_post_message(decodebin.pointer, message)
        }
    }

    /// Whether every input of decodebin3 has ended: EOS sticky on each of its sink pads.
    private func inputsEnded() -> Bool {
        var ended = true
        GStreamer.forEachPad(of: decodebin, direction: GST_PAD_SINK) { pad in
            guard let eos = gst_pad_get_sticky_event(pad, GST_EVENT_EOS, 0) else {
                ended = false
                return
            }
            gst_mini_object_unref(UnsafeMutableRawPointer(eos).assumingMemoryBound(to: GstMiniObject.self))
        }
        return ended
    }
}

/// One output of the guard: the sink pad of a sink bin, and when a buffer last entered it.
private final class EndOfStreamGuardOutput: @unchecked Sendable {
    let pad: Pad
    /// Monotonic time of the last buffer since the last flush; nil for none.
    let lastBuffer = Mutex<MediaTime?>(nil)
    init(pad: Pad) { self.pad = pad }
}

private let outputProbe: GstPadProbeCallback = { _, info, data in
    guard let info, let data else { return GST_PAD_PROBE_OK }
    let output = handedOver(data, as: EndOfStreamGuardOutput.self)
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
        let now = LocalClock.monotonic.now()
        output.lastBuffer.withLock { $0 = now }
    } else if let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self),
        event.pointee.type == GST_EVENT_FLUSH_STOP
    {
        output.lastBuffer.withLock { $0 = nil }
    }
    return GST_PAD_PROBE_OK
}

private let releaseOutput: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<EndOfStreamGuardOutput>.fromOpaque(pointer).release()
}
