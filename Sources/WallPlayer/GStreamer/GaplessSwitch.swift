internal import CGStreamer
internal import CLockstepShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Lets the streams of a gapless successor into uridecodebin3's switch one at a time.
///
/// uridecodebin3 (GStreamer 1.22.0) holds every output pad of the next item's source with a
/// blocking probe (`uri_src_block_probe`): events are dropped there (the pads' sticky events are sent
/// again once linked), and the first buffer switches the input over to the new item once the current
/// one is drained, under uridecodebin3's lock: it links the new pads and releases them. Anything of
/// another stream of the item that is inside that probe meanwhile is handled as if the switch had
/// not happened: a buffer finds the input item already its own, not drained, and waits for it to
/// drain, for good, as its own stream is the one held (GStreamer issue 3297, fixed in 1.22.11); a
/// stream-start is dropped after the link has scheduled it again, so the stream never starts. Either
/// way the item's other stream plays on into playsink's stream synchronizer, which waits at the group
/// change for the lost stream to start, and the whole pipeline stops without an error.
///
/// The race is open whenever the current item is drained before the next one's first buffers arrive,
/// which is every gapless change after an item with an end time: the player stops the decoder at the
/// end and the rest of the file is read out at once (`groupProbe`), so nothing of the current item is
/// left to wait for by the time the next file is open, and the first buffer switches at once while
/// the other stream is still sending its first events. Under load it stalled a looper or a bounded
/// queue about one run in two.
///
/// So each output pad of a source gets a gate upstream of uridecodebin3's probes, which makes the
/// switch wait until no other stream can be inside them. While the pads are held, the first stream
/// with a buffer (the leader) waits until every stream of the source has its first buffer (or its
/// end) at the gate, so that all their first events have been through; then it goes into the switch
/// alone. The others wait until it has switched (their pads are released: they never enter the
/// probe, and their sticky events reach decodebin3 through the new link) or until it waits at its
/// own pad (the switch then needs another stream's buffer, as uridecodebin3 expects).
enum GaplessSwitch {
    /// How long a held stream sleeps between looks at the switch: a millisecond, where the switch
    /// itself takes a few and the next item is read well ahead of its start.
    static let pollMicroseconds: useconds_t = 1_000

    /// Gates the output pads of every source (urisourcebin) `pipeline` (a bin) creates from now on.
    static func watch(_ pipeline: Element) {
        lockstep_signal_connect(
            pipeline.raw, "deep-element-added", unsafeBitCast(sourceAdded, to: GCallback.self), nil, nil)
    }
}

/// One source (one item): its output pads, and how far their streams have come to the switch.
final class GaplessSwitchSource: @unchecked Sendable {
    struct State {
        /// The output pads the source exposed (all of them before any data flows).
        var outputs = 0
        /// The streams whose first buffer or end reached the gate while their pads were held.
        var arrived = 0
        /// The output pad whose stream goes into the switch.
        var leader: Pad?
    }

    let state = Mutex(State())
}

/// What the gate on one output pad's target reaches: its source and the output pad itself.
final class GaplessSwitchGate: @unchecked Sendable {
    let source: GaplessSwitchSource
    /// The source's (ghost) output pad, which uridecodebin3 holds.
    let output: Pad
    /// The stream's first buffer or end reached the gate (only its streaming thread sets it).
    let arrived = Atomic(false)

    init(source: GaplessSwitchSource, output: Pad) {
        self.source = source
        self.output = output
    }
}

private let sourceAdded: @convention(c) (gpointer?, gpointer?, gpointer?, gpointer?) -> Void = { _, _, element, _ in
    guard let element else { return }
    guard GStreamer.factoryName(of: element.assumingMemoryBound(to: GstElement.self)) == "urisourcebin" else { return }
    lockstep_signal_connect(
        element, "pad-added", unsafeBitCast(outputAdded, to: GCallback.self),
        Unmanaged.passRetained(GaplessSwitchSource()).toOpaque(), releaseSource)
}

private let releaseSource: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<GaplessSwitchSource>.fromOpaque(pointer).release()
}

/// A source exposed an output pad: the gate goes on its target, whose probes run before the output's.
private let outputAdded: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, data in
    guard let pad, let data,
        let target = gst_ghost_pad_get_target(pad.assumingMemoryBound(to: GstGhostPad.self))
    else { return }
    defer { gst_object_unref(UnsafeMutableRawPointer(target)) }
    let source = Unmanaged<GaplessSwitchSource>.fromOpaque(data).takeUnretainedValue()
    source.state.withLock { $0.outputs += 1 }
    let gate = GaplessSwitchGate(source: source, output: Pad(retaining: pad.assumingMemoryBound(to: GstPad.self)))
    gst_pad_add_probe(
        target,
        GstPadProbeType(
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue),
        gateProbe, Unmanaged.passRetained(gate).toOpaque(), releaseGate)
}

private let releaseGate: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<GaplessSwitchGate>.fromOpaque(pointer).release()
}

private func isFlushing(_ pad: UnsafeMutablePointer<GstPad>) -> Bool {
    pad.pointee.object.flags & guint(GST_PAD_FLAG_FLUSHING.rawValue) != 0
}

private func isHeld(_ pad: Pad) -> Bool { gst_pad_is_blocked(pad.pointer) != 0 }

/// Sleeps while `condition` holds and neither the gated pad nor its output is flushing (a state
/// change to READY sets both).
private func wait(at pad: UnsafeMutablePointer<GstPad>, _ gate: GaplessSwitchGate, while condition: () -> Bool) {
    while condition(), !isFlushing(pad), !isFlushing(gate.output.pointer) {
        usleep(GaplessSwitch.pollMicroseconds)
    }
}

private let gateProbe: GstPadProbeCallback = { pad, info, data in
    guard let pad, let info, let data else { return GST_PAD_PROBE_OK }
    let gate = Unmanaged<GaplessSwitchGate>.fromOpaque(data).takeUnretainedValue()
    // Not held: the source is the current item's (or has been switched to), and stays so.
    guard isHeld(gate.output) else { return GST_PAD_PROBE_REMOVE }
    // What uridecodebin3 holds (buffers, gaps) can switch; an end only counts as arrived.
    var isEnd = false
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue != 0 {
        guard let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self) else { return GST_PAD_PROBE_OK }
        switch event.pointee.type {
        case GST_EVENT_GAP: break
        case GST_EVENT_EOS: isEnd = true
        // Events before the first buffer go on: no switch can happen before one.
        default: if !gate.arrived.load(ordering: .acquiring) { return GST_PAD_PROBE_OK }
        }
    }
    let source = gate.source
    if !gate.arrived.exchange(true, ordering: .acquiringAndReleasing) {
        source.state.withLock { state in
            state.arrived += 1
            if !isEnd, state.leader == nil { state.leader = gate.output }
        }
    }
    guard let leader = source.state.withLock({ $0.leader }) else { return GST_PAD_PROBE_OK }
    if leader === gate.output {
        wait(at: pad, gate) { source.state.withLock { $0.arrived < $0.outputs } }
    } else {
        wait(at: pad, gate) { isHeld(gate.output) && gst_pad_is_blocking(leader.pointer) == 0 }
    }
    return GST_PAD_PROBE_OK
}
