import LockstepTime

/// The entries a wall plays in order, and whether it starts again from the first after the last.
public struct Playlist: Hashable, Sendable, Codable {
    public var entries: [TimelineEntry]
    /// Whether the playlist starts again after its last entry; otherwise the wall holds the last
    /// frame.
    public var loops: Bool

    public init(entries: [TimelineEntry], loops: Bool = true) {
        self.entries = entries
        self.loops = loops
    }

    /// Checks what a playlist must be for every node to compute the same position from it.
    func validate() throws(TimelineError) {
        guard !entries.isEmpty else { throw .emptyPlaylist }
        guard entries.count <= TimelineLimits.mostEntries else {
            throw .tooMany(what: "playlist entries", count: entries.count, limit: TimelineLimits.mostEntries)
        }
        let longest = MediaTime(nanoseconds: TimelineLimits.longestMedia)
        for (index, entry) in entries.enumerated() {
            guard entry.inPoint.isNumeric, entry.outPoint.isNumeric else {
                throw .invalidEntry(index: index, reason: "its in- and out-points must be numbers of seconds")
            }
            guard entry.outPoint <= longest else {
                throw .invalidEntry(
                    index: index,
                    reason: "its out-point \(entry.outPoint.seconds) s is past the longest media a wall plays, "
                        + "\(longest.seconds) s")
            }
            guard !entry.media.isEmpty, entry.media.utf8.count <= TimelineLimits.longestName else {
                throw .invalidEntry(
                    index: index, reason: "it names no media, or a name over \(TimelineLimits.longestName) bytes")
            }
            if let count = entry.passCount, count > TimelineLimits.mostRepeats {
                throw .invalidEntry(
                    index: index,
                    reason: "it repeats \(count) times; at most \(TimelineLimits.mostRepeats), or forever")
            }
            guard entry.inPoint >= .zero else {
                throw .invalidEntry(index: index, reason: "its in-point \(entry.inPoint.seconds) s is negative")
            }
            guard entry.outPoint > entry.inPoint else {
                throw .invalidEntry(
                    index: index,
                    reason:
                        "its out-point \(entry.outPoint.seconds) s is not after its in-point \(entry.inPoint.seconds) s"
                )
            }
            if let tiles = entry.tileContent {
                guard tiles.count <= 1024, tiles.keys.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
                    throw .invalidEntry(index: index, reason: "its tiles' content names at most 1024 nodes by id")
                }
            }
            if let count = entry.passCount, count < 1 {
                throw .invalidEntry(index: index, reason: "it repeats \(count) times; at least once, or forever")
            }
        }
        if let cycle = cycleLength, !(cycle < Rational(MediaTime(nanoseconds: TimelineLimits.longestCycle))) {
            throw .invalidEntry(
                index: entries.count - 1,
                reason: "the playlist's cycle is longer than a wall plays, \(TimelineLimits.longestCycle) ns")
        }
    }

    /// This playlist with every time in nanoseconds.
    func normalized() -> Playlist {
        var playlist = self
        playlist.entries = entries.map { entry in
            var entry = entry
            entry.inPoint = TimelineLimits.nanoseconds(entry.inPoint)
            entry.outPoint = TimelineLimits.nanoseconds(entry.outPoint)
            return entry
        }
        return playlist
    }

    /// Program time (media time from the start of the first entry's first pass) where `point` is.
    func programTime(of point: PlaylistPoint) -> Rational {
        var time = Rational.zero
        for entry in entries[..<point.entry] {
            time = time + entry.passLength * Rational(Int128(entry.passCount ?? 0))
        }
        return time + entries[point.entry].passLength * Rational(Int128(point.pass)) + Rational(point.offset)
    }

    /// The pass that follows `point`'s: the entry's next pass, else the next entry's first, else
    /// (when the playlist loops) the first entry's; nil at the end of a playlist that does not loop.
    public func pass(after point: PlaylistPoint) -> PlaylistPoint? {
        if entries[point.entry].passCount.map({ point.pass + 1 < $0 }) ?? true {
            return PlaylistPoint(entry: point.entry, pass: point.pass + 1)
        }
        if point.entry + 1 < entries.count { return PlaylistPoint(entry: point.entry + 1) }
        return loops ? PlaylistPoint(entry: 0) : nil
    }

    /// One whole cycle of the playlist, or nil when it never ends (an entry repeats forever).
    var cycleLength: Rational? {
        var total = Rational.zero
        for entry in entries {
            guard let count = entry.passCount else { return nil }
            total = total + entry.passLength * Rational(Int128(count))
        }
        return total
    }

    /// Where program time `time` falls: the point, how many whole cycles lie before it, and
    /// whether the playlist has ended (it does not loop and `time` is past its end).
    func locate(_ time: Rational) -> (point: PlaylistPoint, cycle: Int128, ended: Bool) {
        var time = time < .zero ? .zero : time
        var cycle: Int128 = 0
        if let cycleLength = cycleLength, !(time < cycleLength) {
            guard loops else {
                let last = entries.count - 1
                return (
                    PlaylistPoint(
                        entry: last, pass: (entries[last].passCount ?? 1) - 1, offset: entries[last].duration),
                    0, true
                )
            }
            cycle = (time / cycleLength).floor
            time = time - cycleLength * Rational(cycle)
        }
        var start = Rational.zero
        for (index, entry) in entries.enumerated() {
            let length = entry.passLength
            let span = entry.passCount.map { length * Rational(Int128($0)) }
            if span == nil || time < start + span! {
                let pass = ((time - start) / length).floor
                let offset = time - start - length * Rational(pass)
                return (PlaylistPoint(entry: index, pass: Int(clamping: pass), offset: offset.mediaTime), cycle, false)
            }
            start = start + span!
        }
        preconditionFailure("a time within the cycle lies in one of its entries")
    }
}

/// A place in a playlist: which entry, which of its passes, and how far into that pass.
public struct PlaylistPoint: Hashable, Sendable, Codable {
    public var entry: Int
    public var pass: Int
    /// Media time into the pass, from the entry's in-point.
    public var offset: MediaTime

    public init(entry: Int, pass: Int = 0, offset: MediaTime = .zero) {
        self.entry = entry
        self.pass = pass
        self.offset = offset
    }
}
