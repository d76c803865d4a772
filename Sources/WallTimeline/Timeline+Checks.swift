import LockstepTime

extension Timeline {
    /// Checks a timeline that arrived as data (JSON from a controller, a peer or the state file),
    /// which no initializer checked: every node must be able to compute the same position from it.
    public func validate() throws(TimelineError) {
        guard !segments.isEmpty else { throw .noSegments }
        var previous: MediaTime?
        for segment in segments {
            guard segment.from.isNumeric else { throw .notNumeric(field: "segments.from") }
            if let previous, !(segment.from > previous) { throw .segmentsOutOfOrder(at: segment.from) }
            previous = segment.from
            try segment.playlist.validate()
            try Self.check(segment.rate)
            let entries = segment.playlist.entries
            guard entries.indices.contains(segment.origin.entry) else {
                throw .noSuchEntry(index: segment.origin.entry, count: entries.count)
            }
            let entry = entries[segment.origin.entry]
            guard segment.origin.offset.isNumeric, segment.origin.offset >= .zero,
                segment.origin.offset <= entry.duration, segment.origin.pass >= 0,
                entry.passCount.map({ segment.origin.pass < $0 }) ?? true
            else {
                throw .invalidEntry(index: segment.origin.entry, reason: "a segment starts outside it")
            }
        }
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
    public func reanchored(onto epoch: UInt64) -> Timeline {
        var moved = self
        var last = segments[segments.count - 1]
        last.from = .zero
        moved.segments = [last]
        moved.epoch = epoch
        moved.version = version + 1
        return moved
    }
}
