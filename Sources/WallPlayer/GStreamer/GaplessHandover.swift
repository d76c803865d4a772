internal import CGStreamer
internal import CLockstepShims
import Foundation
import LockstepLocks
import LockstepTime
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a drained item from handing over to its gapless successor before every stream of the
/// successor is parked at uridecodebin3's gate.
///
/// uridecodebin3 (GStreamer 1.22.0) holds each output pad of the next item's source (a urisourcebin,
/// one multiqueue thread per stream) with a blocking probe, `uri_src_block_probe`. A buffer there
/// switches the input over to the next item at once if the current item is drained, under
/// uridecodebin3's lock: it links the next item's pads and removes their probes. Otherwise it waits
/// until the current item is drained, and the first stream to wake switches. The others are safe
/// when they are already waiting (they wake, see the switch done and go on) or arrive after it (their
/// probe is gone). A stream whose buffer is inside the probe while the switch happens is not: it
/// finds the input item already its own, not drained, and waits for it to drain, for good, as its own
/// stream is one it holds (GStreamer issue 3297, fixed in 1.22.11 by the `block_probe_id` check).
/// Its other streams play on into playsink's stream synchronizer, which waits at the group change for
/// the lost stream, and the whole pipeline stops without an error.
///
/// That window is open whenever the current item is drained before the next one's first buffers
/// arrive: after every item with an end time, where the player answers the buffer past the end with
/// EOS (`groupProbe`) and the rest of the file is read out at once, in less than the time it takes
/// to open the next file. An item played to its end drains at playback speed, with the next item's
/// streams long parked. Under load a looper with a range or a bounded queue stalled about one change
/// in twenty.
///
/// So an item's drain is made to wait for its successor: the end (EOS) of each output stream of a
/// source is held, on that stream's own thread, just before uridecodebin3 sees it, until every
/// output stream of the next source has brought its first buffer (or its end) to uridecodebin3's
/// gate, and a moment more for each to reach its wait there. Only then can the current item drain,
/// so the switch happens as after an item played to its end. The successor exists by then: it is
/// created inside about-to-finish, which urisourcebin emits when its demuxer ends, before that end
/// reaches the output. A source with no successor is not held; a hold gives up when its pad is
/// flushed (seek, stop) or after `longestHold`, and the drain then goes on as it would have.
///
/// One more race, over the network: an http source has a queue inside, so a small file is read
/// whole at once, and a stream's end can leave it within milliseconds of the start, before
/// decodebin3 has exposed its outputs. decodebin3 then loses that end: playsink's stream
/// synchronizer waits for it at the end of the item, and the item never ends (`wallnode play` of a
/// 4 s MP4 on loopback: 1 run in 12). So at a network source with no successor, each stream's end
/// waits until the pipeline has prerolled since the source was made (`prerolled()`).
///
/// And one inside decodebin3, local files too: each of its inputs waits (a blocking probe) for
/// its first buffer, and that buffer's arrival removes every input stream that has already seen
/// its end (`unblock_pending_input`, there for a parser chain being replaced). An input fed by an
/// `identity` is not being replaced: its stream is gone, unlinked from its multiqueue slot, so that
/// end never reaches the outputs (the item stops a few frames short, `EndOfStreamGuard`) and
/// taking the pipeline down then dereferences the missing stream (SIGSEGV in decodebin3's
/// `reset_input`). A small Matroska file does it: read whole at once, its streams end at
/// decodebin3's inputs within milliseconds of their first buffers, while the first buffer of an
/// input made a little later is still to come or still being handled (its thread waited 66 ms for
/// decodebin3's selection lock in one run). `wallnode play` of a 2 s file of one video, two audio
/// and two subtitle streams, release build, two busy loops beside it (scripts/make-media.sh
/// languages): 5 crashes in 75 runs before; none, and no end lost, in 100 runs with this hold. So
/// with no successor, a stream's end also waits while any other input of decodebin3 still waits
/// for its first buffer or may be handling it (`DecoderInputs`); an input whose own end waits
/// here will never bring one.
final class GaplessHandover: @unchecked Sendable {
    /// How long a successor's streams get, after the last one passed the gate's outside, to reach
    /// their wait inside it: a few function calls, so this covers being descheduled in between.
    static let settleNanoseconds: Int64 = 20_000_000
    /// The longest a drain is held: the next file normally opens within tens of milliseconds.
    static let longestHoldNanoseconds: Int64 = 1_000_000_000
    /// A hold of a stream's end with no successor this long or longer is logged, with what it
    /// waited for.
    static let longHoldNanoseconds: Int64 = 100_000_000
    /// How long a held stream sleeps between looks.
    static let pollMicroseconds: useconds_t = 1_000

    /// One urisourcebin: how many output streams it has and how many have reached the gate.
    final class Source: @unchecked Sendable {
        /// The pipeline's handover, which keeps its latest sources.
        weak let handover: GaplessHandover?
        struct State {
            var outputs = 0
            /// The stream count its collection announces, once one passed (uridecodebin3 expects
            /// that many pads too).
            var announced = 0
            var arrived = 0
            /// When the last of its streams reached the gate (monotonic nanoseconds).
            var parkedAt: Int64?
            /// Whether it reads over the network (nil: not known yet).
            var isNetwork: Bool?
        }

        let state = Mutex(State())

        /// The pipeline's preroll count when the source was made.
        let prerollsBefore: Int

        init(handover: GaplessHandover) {
            self.handover = handover
            prerollsBefore = handover.prerolls.load(ordering: .acquiring)
        }

        /// Nanoseconds since every stream reached the gate, nil while some have not.
        func parkedFor(now: Int64) -> Int64? {
            state.withLock { state in state.parkedAt.map { max(0, now - $0) } }
        }

        func streamArrived(now: Int64) {
            state.withLock { state in
                state.arrived += 1
                if state.arrived >= max(state.outputs, state.announced) { state.parkedAt = now }
            }
        }
    }

    /// The sources the pipeline made, oldest first; only a source and its successor matter, so
    /// a few of the latest are kept.
    private let sources = Mutex<[Source]>([])

    /// Counts the pipeline's prerolls (ASYNC_DONE).
    let prerolls = Atomic(0)

    /// decodebin3's inputs (its sink pads) whose stream's end is held here with no successor.
    fileprivate let heldInputs = Mutex<Set<UInt>>([])

    /// Watches every source `pipeline` (a bin) creates from now on.
    static func watch(_ pipeline: Element) -> GaplessHandover {
        let handover = GaplessHandover()
        lockstep_signal_connect(
            pipeline.raw, "deep-element-added", unsafeBitCast(elementAdded, to: GCallback.self),
            handOff(handover), releaseHandover)
        DecoderInputs.markFedSlots(in: pipeline)
        return handover
    }

    /// The pipeline prerolled: its decoders and sinks are linked, ready for any stream's end.
    func prerolled() {
        prerolls.add(1, ordering: .releasing)
    }

    fileprivate func added(_ source: Source) {
        sources.withLock { sources in
            sources.append(source)
            if sources.count > 4 { sources.removeFirst(sources.count - 4) }
        }
    }

    /// The source that follows `source`: the newest made after it, if any. Only one can be live:
    /// uridecodebin3 opens the item after next only once the next one is the input, so an older
    /// one in between was dropped (by a seek, say) and will never bring a buffer.
    fileprivate func successor(of source: Source) -> Source? {
        sources.withLock { sources in
            guard let index = sources.firstIndex(where: { $0 === source }), index + 1 < sources.count else {
                return nil
            }
            return sources.last
        }
    }
}

/// What the probe on one output stream reaches.
final class GaplessHandoverOutput: @unchecked Sendable {
    let source: GaplessHandover.Source
    /// The source's (ghost) output pad, the one uridecodebin3 probes.
    let output: Pad
    /// The stream's first buffer or end has passed (only its streaming thread sets it).
    let arrived = Atomic(false)

    init(source: GaplessHandover.Source, output: Pad) {
        self.source = source
        self.output = output
    }
}

private let releaseHandover: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<GaplessHandover>.fromOpaque(pointer).release()
}

private let elementAdded: @convention(c) (gpointer?, gpointer?, gpointer?, gpointer?) -> Void = {
    _, _, element, data in
    guard let element, let data,
        GStreamer.factoryName(of: element.assumingMemoryBound(to: GstElement.self)) == "urisourcebin"
    else { return }
    let handover = handedOver(data, as: GaplessHandover.self)
    let source = GaplessHandover.Source(handover: handover)
    handover.added(source)
    lockstep_signal_connect(
        element, "pad-added", unsafeBitCast(outputAdded, to: GCallback.self),
        handOff(source), releaseSource)
}

/// Whether the urisourcebin that `output` (one of its pads) belongs to reads an http(s) URI.
private func readsNetwork(_ output: UnsafeMutablePointer<GstPad>) -> Bool {
    guard let bin = gst_pad_get_parent_element(output) else { return false }
    defer { gst_object_unref(UnsafeMutableRawPointer(bin)) }
    guard let uri = lockstep_object_get_string(UnsafeMutableRawPointer(bin), "uri") else { return false }
    defer { g_free(uri) }
    return MediaInspector.networkSchemes.contains(URL(string: String(cString: uri))?.scheme?.lowercased() ?? "")
}

private let releaseSource: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<GaplessHandover.Source>.fromOpaque(pointer).release()
}

private let releaseProbeOutput: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<GaplessHandoverOutput>.fromOpaque(pointer).release()
}

/// A source exposed an output pad: the probe goes on its target, whose probes run before the
/// output's own (uridecodebin3's).
private let outputAdded: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, data in
    guard let pad, let data,
        let target = gst_ghost_pad_get_target(pad.assumingMemoryBound(to: GstGhostPad.self))
    else { return }
    defer { gst_object_unref(UnsafeMutableRawPointer(target)) }
    let source = handedOver(data, as: GaplessHandover.Source.self)
    source.state.withLock { state in
        state.outputs += 1
        state.parkedAt = nil
    }
    let output = GaplessHandoverOutput(source: source, output: Pad(retaining: pad.assumingMemoryBound(to: GstPad.self)))
    gst_pad_add_probe(
        target,
        GstPadProbeType(
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue),
        handoverProbe, handOff(output), releaseProbeOutput)
}

private func isFlushing(_ pad: UnsafeMutablePointer<GstPad>) -> Bool {
    pad.pointee.object.flags & guint(GST_PAD_FLAG_FLUSHING.rawValue) != 0
}

private let handoverProbe: GstPadProbeCallback = { pad, info, data in
    guard let pad, let info, let data else { return GST_PAD_PROBE_OK }
    let output = handedOver(data, as: GaplessHandoverOutput.self)
    var isEnd = false
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue != 0 {
        guard let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self) else { return GST_PAD_PROBE_OK }
        switch event.pointee.type {
        case GST_EVENT_STREAM_COLLECTION:
            var collection: UnsafeMutablePointer<GstStreamCollection>?
            gst_event_parse_stream_collection(event, &collection)
            if let collection {
                let count = Int(gst_stream_collection_get_size(collection))
                gst_object_unref(UnsafeMutableRawPointer(collection))
                output.source.state.withLock { $0.announced = max($0.announced, count) }
            }
            return GST_PAD_PROBE_OK
        case GST_EVENT_GAP: break
        case GST_EVENT_EOS: isEnd = true
        default: return GST_PAD_PROBE_OK
        }
    }
    if !output.arrived.exchange(true, ordering: .acquiringAndReleasing) {
        output.source.streamArrived(now: LocalClock.monotonicNanoseconds())
    }
    guard isEnd else { return GST_PAD_PROBE_OK }
    guard let successor = output.source.handover?.successor(of: output.source) else {
        holdWithoutSuccessor(pad, output: output)
        return GST_PAD_PROBE_OK
    }
    // This source's end, with a successor opening: hold it until the successor is parked.
    let start = LocalClock.monotonicNanoseconds()
    while !isFlushing(pad), !isFlushing(output.output.pointer) {
        let now = LocalClock.monotonicNanoseconds()
        if let parked = successor.parkedFor(now: now), parked >= GaplessHandover.settleNanoseconds { break }
        if now - start >= GaplessHandover.longestHoldNanoseconds {
            // The drain goes on with the successor's streams not all parked: the switch may race
            // (see `GaplessHandover`), so a pipeline that stops after this says why.
            let counts = successor.state.withLock { ($0.arrived, max($0.outputs, $0.announced)) }
            holdLogger.warning(
                "a drained item handed over before its successor's streams were parked",
                metadata: [
                    "gst.pad": .string(GStreamer.padName(pad)),
                    "hold.ms": .stringConvertible((now - start) / 1_000_000),
                    "successor.parked": .string("\(counts.0) of \(counts.1) streams"),
                ])
            break
        }
        usleep(GaplessHandover.pollMicroseconds)
    }
    return GST_PAD_PROBE_OK
}

/// A stream's end with no successor: held while decodebin3 has another input waiting for its
/// first buffer, and for a network source until the pipeline has prerolled since the source was
/// made (see `GaplessHandover`); at most `longestHold`, and never past a flush.
private func holdWithoutSuccessor(_ pad: UnsafeMutablePointer<GstPad>, output: GaplessHandoverOutput) {
    let source = output.source
    guard let handover = source.handover else { return }
    let isNetwork =
        source.state.withLock { $0.isNetwork }
        ?? {
            let reads = readsNetwork(output.output.pointer)
            source.state.withLock { $0.isNetwork = reads }
            return reads
        }()
    guard let input = gst_pad_get_peer(output.output.pointer) else { return }
    defer { gst_object_unref(UnsafeMutableRawPointer(input)) }
    let key = UInt(bitPattern: input)
    handover.heldInputs.withLock { _ = $0.insert(key) }
    defer { handover.heldInputs.withLock { _ = $0.remove(key) } }
    var inputs = DecoderInputs()
    let start = LocalClock.monotonicNanoseconds()
    while !isFlushing(pad), !isFlushing(output.output.pointer) {
        let now = LocalClock.monotonicNanoseconds()
        guard now - start < GaplessHandover.longestHoldNanoseconds,
            (isNetwork && handover.prerolls.load(ordering: .acquiring) <= source.prerollsBefore)
                || inputs.waiting(besides: input, held: handover.heldInputs.withLock { $0 })
        else { break }
        usleep(GaplessHandover.pollMicroseconds)
    }
    let held = LocalClock.monotonicNanoseconds() - start
    if held >= GaplessHandover.longHoldNanoseconds, let why = inputs.waitingFor {
        holdLogger.warning(
            "a stream's end waited at decodebin3's input",
            metadata: [
                "gst.pad": .string(GStreamer.padName(input)), "hold.ms": .stringConvertible(held / 1_000_000),
                "hold.for": .string(why),
            ])
    }
}

private let holdLogger = Logger(label: "wallplayer")

/// What one held end sees of decodebin3's inputs.
struct DecoderInputs {
    /// The mark a slot of decodebin3's queue (a multiqueue sink pad) gets with its first buffer
    /// or gap (`markFedSlots`).
    static let fedKey = "lockstep-fed"

    /// Inputs whose first buffer reached decodebin3's queue: settled for good.
    private var settled: Set<UInt> = []
    /// What the last look that found an input waiting found: the input, and why.
    private(set) var waitingFor: String?

    /// Whether decodebin3, whose input `input` is, has a linked input, other than the `held` ones
    /// (their end waits here: they will bring no first buffer; `input` is one), whose first
    /// buffer has not yet gone through: it has no element behind it yet (decodebin3 adds one once
    /// the stream's collection arrives), an output of that element (an `identity` or a
    /// `parsebin`) still carries decodebin3's blocking probe, or the slot of decodebin3's queue
    /// it feeds has had no buffer yet. The probe's callback removes the probe, then unblocks every
    /// input in turn, removing ended streams, before the buffer goes on into the slot; it takes
    /// decodebin3's selection lock for each input, which another thread can hold for tens of
    /// milliseconds under load (66 ms seen), so only the buffer's arrival says it is over.
    mutating func waiting(besides input: UnsafeMutablePointer<GstPad>, held: Set<UInt>) -> Bool {
        guard let decodebin = gst_pad_get_parent_element(input) else { return false }
        var waiting = false
        GStreamer.forEachPad(of: Element(owning: decodebin), direction: GST_PAD_SINK) { sink in
            let key = UInt(bitPattern: sink)
            guard !waiting, !held.contains(key), !settled.contains(key), gst_pad_is_linked(sink) != 0 else { return }
            if let why = inputWaits(sink) {
                waiting = true
                waitingFor = "\(GStreamer.padName(sink)) (\(why))"
            } else {
                settled.insert(key)
            }
        }
        return waiting
    }

    /// Why input `sink` waits, or nil when its first buffer went through.
    private func inputWaits(_ sink: UnsafeMutablePointer<GstPad>) -> String? {
        // decodebin3's inputs are ghost pads, targeting the element behind.
        guard
            let target = gst_ghost_pad_get_target(
                UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstGhostPad.self))
        else { return "no element behind it yet" }
        defer { gst_object_unref(UnsafeMutableRawPointer(target)) }
        guard let element = gst_pad_get_parent_element(target) else { return "no element behind it yet" }
        var why: String?
        GStreamer.forEachPad(of: Element(owning: element), direction: GST_PAD_SRC) { output in
            guard why == nil else { return }
            if gst_pad_is_blocked(output) != 0 {
                why = "its first buffer to come"
            } else if let slot = gst_pad_get_peer(output) {
                defer { gst_object_unref(UnsafeMutableRawPointer(slot)) }
                if !Self.isFed(slot) { why = "its first buffer on its way into decodebin3's queue" }
            }
        }
        return why
    }

    static func isFed(_ slot: UnsafeMutablePointer<GstPad>) -> Bool {
        g_object_get_data(UnsafeMutableRawPointer(slot).assumingMemoryBound(to: GObject.self), fedKey) != nil
    }

    /// Marks each slot of the queue inside `pipeline`'s decodebin3 with its first buffer or gap.
    static func markFedSlots(in pipeline: Element) {
        guard let decodebin = GStreamer.descendant(of: pipeline, factory: "decodebin3"),
            let queue = GStreamer.descendant(of: decodebin, factory: "multiqueue")
        else { return }
        lockstep_signal_connect(queue.raw, "pad-added", unsafeBitCast(slotAdded, to: GCallback.self), nil, nil)
    }
}

private let slotAdded: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, pad, _ in
    guard let pad = pad?.assumingMemoryBound(to: GstPad.self), gst_pad_get_direction(pad) == GST_PAD_SINK else {
        return
    }
    gst_pad_add_probe(
        pad,
        GstPadProbeType(
            GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue),
        markFed, nil, nil)
}

/// The slot's first buffer or gap: marked, and the probe goes.
private let markFed: GstPadProbeCallback = { pad, info, _ in
    guard let pad, let info else { return GST_PAD_PROBE_OK }
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue != 0 {
        guard let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self), event.pointee.type == GST_EVENT_GAP
        else { return GST_PAD_PROBE_OK }
    }
    g_object_set_data(
        UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GObject.self), DecoderInputs.fedKey,
        UnsafeMutableRawPointer(bitPattern: 1))
    return GST_PAD_PROBE_REMOVE
}
