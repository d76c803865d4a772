import LockstepTime

extension Timeline {
    /// Checks a timeline that arrived as data (JSON from a controller, a peer or the state file),
    /// which no initializer checked: every node must be able to compute the same position from it,
    /// and nothing it computes may overflow (`TimelineLimits`).
    public func validate() throws(TimelineError) {
        guard !wall.isEmpty, wall.utf8.count <= TimelineLimits.longestName else {
            throw .invalidName(field: "wall", reason: "1 to \(TimelineLimits.longestName) bytes")
        }
        guard (1...TimelineLimits.largestVersion).contains(version) else {
            throw .versionOutOfBounds(version)
        }
        guard !segments.isEmpty else { throw .noSegments }
        try schedule?.validate()
        guard segments.count <= TimelineLimits.mostSegments else {
            throw .tooMany(what: "segments", count: segments.count, limit: TimelineLimits.mostSegments)
        }
        var previous: MediaTime?
        for segment in segments {
            guard segment.from.isNumeric else { throw .notNumeric(field: "segments.from") }
            guard TimelineLimits.hostTimes.contains(segment.from) else {
                throw .outOfBounds(field: "segments.from", segment.from)
            }
            if let previous, !(segment.from > previous) { throw .segmentsOutOfOrder(at: segment.from) }
            previous = segment.from
            try segment.playlist.validate()
            try Self.check(segment.rate)
            if case .still(let image) = segment.show {
                guard !image.isEmpty, image.utf8.count <= TimelineLimits.longestName else {
                    throw .invalidShow("a still names an image of 1 to \(TimelineLimits.longestName) bytes")
                }
            }
            if let cue = segment.cue, cue.isEmpty || cue.utf8.count > TimelineLimits.longestName {
                throw .invalidName(field: "cue", reason: "1 to \(TimelineLimits.longestName) bytes")
            }
            let entries = segment.playlist.entries
            guard entries.indices.contains(segment.origin.entry) else {
                throw .noSuchEntry(index: segment.origin.entry, count: entries.count)
            }
            let entry = entries[segment.origin.entry]
            // A pass of an entry that repeats forever lies within the longest cycle.
            let longest = Rational(MediaTime(nanoseconds: TimelineLimits.longestCycle))
            guard segment.origin.offset.isNumeric, segment.origin.offset >= .zero,
                segment.origin.offset <= entry.duration, segment.origin.pass >= 0,
                entry.passCount.map({ segment.origin.pass < $0 })
                    ?? (entry.passLength * Rational(Int128(segment.origin.pass)) < longest)
            else {
                throw .invalidEntry(index: segment.origin.entry, reason: "a segment starts outside it")
            }
        }
    }

    /// This timeline with every time in nanoseconds: the one form every node computes with.
    func normalized() -> Timeline {
        var timeline = self
        timeline.segments = segments.map { segment in
            var segment = segment
            segment.from = TimelineLimits.nanoseconds(segment.from)
            segment.playlist = segment.playlist.normalized()
            segment.origin.offset = TimelineLimits.nanoseconds(segment.origin.offset)
            return segment
        }
        timeline.schedule = schedule?.normalized()
        return timeline
    }

    /// This timeline moved onto the master timeline `epoch`, for when the master's time started
    /// over (its machine restarted on a monotonic clock): the host times it was anchored to mean
    /// nothing any more.
    ///
    /// The rule, the same on every node so that no vote is needed: what was last scheduled (its
    /// playlist, the point it started from, its rate, playing or paused) holds from master time
    /// zero of the new timeline. Every node that meets the new epoch computes the same timeline
    /// from the same one, with the next version number; a node that comes up later joins it where
    /// it has got to.
    public func reanchored(onto epoch: UInt64) throws(TimelineError) -> Timeline {
        guard schedule == nil else { throw .scheduleNeedsRealTime }
        var moved = self
        var last = segments[segments.count - 1]
        last.from = .zero
        moved.segments = [last]
        moved.epoch = epoch
        moved.version = try nextVersion
        return moved
    }
}
