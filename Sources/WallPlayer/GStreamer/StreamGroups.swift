internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

/// The stream groups a pipeline plays since its last load or flushing seek, and how each is timed.
///
/// The first group is timed by the seek or load that started it (its segment already says so);
/// each gapless successor gets its `GroupTiming` when it is queued, at about-to-finish, and the
/// pad probes at the video output and the audio sink rewrite that group's segments to it. A stream
/// knows which group it is in from the group id of its STREAM_START.
final class StreamGroups: @unchecked Sendable {
    enum Kind: Sendable { case video, audio }

    private struct State {
        var timings: [GroupTiming] = []
        /// The group id each timing was matched to, once a stream met it.
        var ids: [UInt32?] = []
        /// Per stream, the index of the group it is in.
        var current: [Kind: Int] = [:]
        /// Per stream, the rewritten segment it is in, while it is in a gapless group.
        var rewritten: [Kind: SegmentValues] = [:]
    }

    private let state = Mutex(State())

    /// Starts over with one group, timed by a load or seek. A seek keeps the group the streams are
    /// in (no STREAM_START follows a flush), and the successors already handed to GStreamer, which
    /// still follow it: they are timed anew from it. A load starts afresh.
    func restart(with first: GroupTiming, sameGroup: Bool) {
        state.withLock { state in
            guard sameGroup else {
                state = State(timings: [first], ids: [nil])
                return
            }
            let index = state.current[.video] ?? state.current[.audio] ?? 0
            let id = state.ids.indices.contains(index) ? state.ids[index] : nil
            let successors = state.timings.indices.filter { $0 > index && state.ids[$0] == nil }.map {
                state.timings[$0]
            }
            state.timings = [first]
            state.ids = [id]
            for successor in successors {
                guard
                    let next = state.timings[state.timings.count - 1].followed(
                        start: successor.start, end: successor.end, origin: successor.origin)
                else { break }
                state.timings.append(next)
                state.ids.append(nil)
            }
            state.current = state.current.mapValues { _ in 0 }
            state.rewritten = [:]
        }
    }

    /// Queues the timing of the next gapless group: it starts where the last planned one ends.
    /// Returns nil (nothing queued) when the last group's end is not known.
    func append(start: MediaTime, end: MediaTime, origin: MediaTime) -> GroupTiming? {
        state.withLock { state in
            guard let last = state.timings.last, let next = last.followed(start: start, end: end, origin: origin)
            else { return nil }
            state.timings.append(next)
            state.ids.append(nil)
            return next
        }
    }

    /// Whether a gapless successor was queued that no stream has reached yet.
    var successorToCome: Bool {
        state.withLock { state in
            let current = state.current.values.max() ?? 0
            return state.ids.indices.contains { $0 > current && state.ids[$0] == nil }
        }
    }

    /// A STREAM_START with `groupID` reached the `kind` output.
    func streamStarted(_ kind: Kind, groupID: UInt32?) {
        state.withLock { state in
            guard !state.timings.isEmpty else { return }
            if let groupID, let known = state.ids.firstIndex(of: groupID) {
                state.current[kind] = known
                return
            }
            let after = state.current[kind].map { $0 + 1 } ?? 0
            guard let free = state.ids.indices.first(where: { $0 >= after && state.ids[$0] == nil }) else { return }
            state.ids[free] = groupID
            state.current[kind] = free
        }
    }

    /// The segment `kind` should use in place of `segment`: counted in item time (see
    /// `GroupTiming.origin`), and rewritten to the plan for a forward gapless group (or any group
    /// of an MPEG stream); nil when that leaves it unchanged.
    func rewrite(_ kind: Kind, _ segment: SegmentValues?, forward: Bool) -> SegmentValues? {
        state.withLock { state in
            guard let segment, let index = state.current[kind], state.timings.indices.contains(index) else {
                state.rewritten[kind] = nil
                return nil
            }
            let timing = state.timings[index]
            let counted = segment.counted(from: timing.origin.nanoseconds ?? 0)
            // The first group is timed by its load or seek, whose segment says so, except where an
            // MPEG demuxer starts it at its first frame rather than at the item's start.
            guard index > 0 || timing.origin != .zero, forward else {
                state.rewritten[kind] = nil
                return counted == segment ? nil : counted
            }
            let rewritten = timing.rewrite(counted)
            state.rewritten[kind] = rewritten
            return rewritten
        }
    }

    /// GStreamer's stream time of item time zero for a seek: the first group's, which the seek
    /// restarted from.
    var seekOrigin: MediaTime {
        state.withLock { $0.timings.first?.origin ?? .zero }
    }

    /// Where a buffer from `timestamp` lasting `duration` lies against the rewritten segment
    /// `kind` is in. A buffer wholly outside goes no further, so nothing downstream (the render
    /// thread, the presentation log) ever sees a frame the plan does not call for; buffers that
    /// overlap the segment's edges are clipped by the sinks.
    func placement(_ kind: Kind, timestamp: Int64, duration: Int64?) -> Placement {
        state.withLock { state in
            guard let segment = state.rewritten[kind] else { return .inside }
            if let stop = segment.stop, timestamp >= stop { return .afterEnd }
            if let duration, duration > 0 { return timestamp + duration <= segment.start ? .beforeStart : .inside }
            return timestamp < segment.start ? .beforeStart : .inside
        }
    }

    enum Placement { case beforeStart, inside, afterEnd }
}

/// What a group probe reaches: the groups and which output it watches.
final class GroupProbeContext: @unchecked Sendable {
    let groups: StreamGroups
    let kind: StreamGroups.Kind

    init(groups: StreamGroups, kind: StreamGroups.Kind) {
        self.groups = groups
        self.kind = kind
    }
}

let releaseGroupProbeContext: GDestroyNotify = { pointer in
    guard let pointer else { return }
    Unmanaged<GroupProbeContext>.fromOpaque(pointer).release()
}

/// Watches STREAM_START and SEGMENT events on the way into an output, counts segments in item
/// time and rewrites those of gapless groups (`StreamGroups`), drops the buffers that fall wholly
/// outside them, and counts seeks on their way up in GStreamer's stream time.
let groupProbe: GstPadProbeCallback = { _, info, data in
    guard let info, let data, let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self) else {
        return GST_PAD_PROBE_OK
    }
    let context = handedOver(data, as: GroupProbeContext.self)
    if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
        let buffer = probedBuffer(UnsafeMutableRawPointer(event))
        let timestamp = buffer.pointee.pts
        guard timestamp != guint64.max, let start = Int64(exactly: timestamp) else { return GST_PAD_PROBE_OK }
        let duration = buffer.pointee.duration == guint64.max ? nil : Int64(exactly: buffer.pointee.duration)
        switch context.groups.placement(context.kind, timestamp: start, duration: duration) {
        case .inside:
            return GST_PAD_PROBE_OK
        case .beforeStart:
            return GST_PAD_PROBE_DROP
        case .afterEnd where context.kind == .audio:
            // Audio past the end is dropped, not refused: multiqueue (GStreamer 1.22) can keep an
            // audio queue that met EOS from downstream from passing the next group on.
            return GST_PAD_PROBE_DROP
        case .afterEnd:
            // The group's end: answered as a sink answers a buffer past its segment, with EOS, so
            // the decoder and demuxer stop there instead of reading on to the end of the file.
            // A long file cut short would otherwise be decoded to its end at full speed, and
            // decodebin3 (GStreamer 1.22) stalls within a few dozen such gapless changes.
            gst_mini_object_unref(UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: GstMiniObject.self))
            info.pointee.data = nil
            lockstep_pad_probe_info_set_flow_return(info, GST_FLOW_EOS)
            return GST_PAD_PROBE_HANDLED
        }
    }
    let type = event.pointee.type
    if type == GST_EVENT_SEEK {
        return countSeekInStreamTime(info, event, origin: context.groups.seekOrigin)
    }
    if type == GST_EVENT_STREAM_START {
        var id: guint = 0
        let hasID = gst_event_parse_group_id(event, &id) != 0
        context.groups.streamStarted(context.kind, groupID: hasID ? UInt32(id) : nil)
    } else if type == GST_EVENT_SEGMENT {
        var segment = GStreamer.segment(of: event)
        let usable = segment.format == GST_FORMAT_TIME && segment.start != guint64.max
        guard
            let rewritten = context.groups.rewrite(
                context.kind, usable ? SegmentValues(segment) : nil, forward: segment.rate > 0)
        else { return GST_PAD_PROBE_OK }
        rewritten.apply(to: &segment)
        guard let replacement = gst_event_new_segment(&segment) else { return GST_PAD_PROBE_OK }
        gst_event_set_seqnum(replacement, gst_event_get_seqnum(event))
        info.pointee.data = UnsafeMutableRawPointer(replacement)
        gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self))
    }
    return GST_PAD_PROBE_OK
}

/// Replaces a seek on its way upstream, in item time, with the same seek in GStreamer's stream
/// time: `origin` later (see `GroupTiming.origin`).
private func countSeekInStreamTime(
    _ info: UnsafeMutablePointer<GstPadProbeInfo>, _ event: UnsafeMutablePointer<GstEvent>, origin: MediaTime
) -> GstPadProbeReturn {
    guard let shift = origin.nanoseconds, shift != 0 else { return GST_PAD_PROBE_OK }
    var rate = 0.0
    var format = GST_FORMAT_UNDEFINED
    var flags = GstSeekFlags(rawValue: 0)
    var startType = GST_SEEK_TYPE_NONE
    var stopType = GST_SEEK_TYPE_NONE
    var start: gint64 = 0
    var stop: gint64 = 0
    gst_event_parse_seek(event, &rate, &format, &flags, &startType, &start, &stopType, &stop)
    guard format == GST_FORMAT_TIME else { return GST_PAD_PROBE_OK }
    func moved(_ position: gint64, _ type: GstSeekType) -> gint64 {
        type == GST_SEEK_TYPE_SET && position >= 0 ? max(0, position + gint64(shift)) : position
    }
    guard
        let replacement = gst_event_new_seek(
            rate, format, flags, startType, moved(start, startType), stopType, moved(stop, stopType))
    else { return GST_PAD_PROBE_OK }
    gst_event_set_seqnum(replacement, gst_event_get_seqnum(event))
    // The event may be shared with the other output's copy: replaced, never changed in place.
    info.pointee.data = UnsafeMutableRawPointer(replacement)
    gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self))
    return GST_PAD_PROBE_OK
}

extension SegmentValues {
    /// A forward TIME segment's values, nil when a field does not fit.
    init?(_ segment: GstSegment) {
        guard let start = Int64(exactly: segment.start), let time = Int64(exactly: segment.time),
            let base = Int64(exactly: segment.base), let offset = Int64(exactly: segment.offset)
        else { return nil }
        self.init(
            rate: segment.rate, start: start, stop: segment.stop == guint64.max ? nil : Int64(exactly: segment.stop),
            time: time, base: base, position: Int64(exactly: segment.position) ?? start, offset: offset)
    }

    func apply(to segment: inout GstSegment) {
        segment.rate = rate
        segment.start = guint64(max(0, start))
        segment.stop = stop.map { guint64(max(0, $0)) } ?? guint64.max
        segment.time = guint64(max(0, time))
        segment.base = guint64(max(0, base))
        segment.position = guint64(max(0, position))
        segment.offset = guint64(max(0, offset))
    }
}
