import LockstepTime

/// Where one stream group (one item's pass through the pipeline) plays: from item time `start` to
/// `end`, with `start` presented at running time `runningStart`.
///
/// GStreamer times a gapless successor from where the previous stream really ended: the last
/// buffer of a file a few milliseconds longer or shorter than planned, or of an audio track that
/// runs on past its video. A wall cannot take that: every screen must change item at the same
/// master time whatever its own file holds. So the player decides each group's timing itself, from
/// the items' start and end times alone, and rewrites the segments of a gapless group to it: the
/// running time follows from the plan, nothing of the media's length accumulates, and frames
/// outside `start..<end` are clipped by the sinks.
struct GroupTiming: Hashable, Sendable {
    /// Item (stream) time of the first thing presented.
    var start: MediaTime
    /// Item time at which the group ends; indefinite when it plays to the media's end.
    var end: MediaTime
    /// Running time at which `start` is presented.
    var runningStart: MediaTime
    /// The segment rate (1 for gapless groups).
    var rate: Double
    /// GStreamer's stream time at the item's time zero (`MediaInspection.streamTimeOrigin`): not
    /// zero for MPEG streams, whose demuxers count from the first clock reference.
    var origin: MediaTime = .zero

    /// Running time at which the group ends and the next begins, if the end is known.
    var runningEnd: MediaTime? {
        guard end.isNumeric, start.isNumeric, runningStart.isNumeric else { return nil }
        let length = end - start
        return runningStart + (rate == 1 ? length : length.multiplied(by: 1 / abs(rate)))
    }

    /// The next group, from `start` to `end`, presented from where this one ends. Only at rate 1:
    /// a decoder fed gaplessly delivers at rate 1, and only a seek changes that.
    func followed(start: MediaTime, end: MediaTime, origin: MediaTime = .zero) -> GroupTiming? {
        guard rate == 1, let runningEnd else { return nil }
        return GroupTiming(start: start, end: end, runningStart: runningEnd, rate: rate, origin: origin)
    }

    /// `segment` (one of the group's, in nanoseconds) mapped so that item time `start` runs at
    /// `runningStart`, with anything before `start` or from `end` on outside it.
    ///
    /// Works for every segment of the group, including those a non-flushing seek sends within it:
    /// each maps item time to running time by the same rule, so they agree with one another.
    func rewrite(_ segment: SegmentValues) -> SegmentValues {
        guard let start = start.nanoseconds, let runningStart = runningStart.nanoseconds else { return segment }
        var result = segment
        // Buffer timestamp of item time `start` in this segment (stream time = ts - start + time).
        let firstTimestamp = segment.start + (start - segment.time)
        result.start = max(segment.start, firstTimestamp)
        result.time = segment.time + (result.start - segment.start)
        if let end = end.nanoseconds {
            let endTimestamp = segment.start + (end - segment.time)
            result.stop = segment.stop.map { min($0, endTimestamp) } ?? endTimestamp
        }
        result.rate = rate
        let advance = result.start - firstTimestamp
        result.base = runningStart + (rate == 1 ? advance : Int64((Double(advance) / abs(rate)).rounded()))
        result.position = result.start
        result.offset = 0
        return result
    }
}

/// The fields of a forward TIME segment a group rewrite touches, in nanoseconds (nil stop: none).
struct SegmentValues: Hashable, Sendable {
    var rate: Double
    var start: Int64
    var stop: Int64?
    var time: Int64
    var base: Int64
    var position: Int64
    var offset: Int64

    /// The segment with its stream time counted from `origin` (nanoseconds of stream time): item
    /// time. Buffers before the origin fall outside it.
    func counted(from origin: Int64) -> SegmentValues {
        guard origin != 0 else { return self }
        var result = self
        if time >= origin {
            result.time = time - origin
        } else {
            result.start = start + (origin - time)
            result.position = max(position, result.start)
            result.time = 0
        }
        return result
    }

    /// Running time of buffer timestamp `timestamp` (`gst_segment_to_running_time`, forward).
    func runningTime(of timestamp: Int64) -> Int64? {
        guard timestamp >= start, stop.map({ timestamp <= $0 }) ?? true else { return nil }
        let elapsed = timestamp - start - offset
        return base + (rate == 1 ? elapsed : Int64((Double(elapsed) / abs(rate)).rounded()))
    }
}
