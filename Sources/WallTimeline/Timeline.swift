import LockstepTime

/// What every screen of a wall shows at every master time: a versioned playlist anchored on the
/// master clock, and the edits (pause, seek, rate, next...) that take effect at host times.
///
/// A node holds the newest version and drives its player toward `position(at:)` continuously, so a
/// node that restarts, falls behind or joins late computes where the wall is instead of waiting to
/// be told. The arithmetic is exact: a position is computed from its segment's anchor in one step,
/// so a million loops of a 10 s entry land on the same frame as the first.
public struct Timeline: Hashable, Sendable, Codable {
    /// The wall it belongs to (a node refuses another wall's timeline).
    public var wall: String
    /// Each edit makes a new version; a node keeps the newest.
    public var version: UInt64
    /// The master timeline (SyncClock epoch) its host times are on.
    public var epoch: UInt64
    /// In order of `from`, the first starting the timeline; each holds until the next.
    public internal(set) var segments: [TimelineSegment]

    /// A timeline that starts `playlist` at host time `start`, playing at `rate`.
    public init(
        wall: String, version: UInt64 = 1, epoch: UInt64, playlist: Playlist, start: MediaTime,
        rate: PlaybackRate = .normal
    ) throws(TimelineError) {
        try playlist.validate()
        try Self.check(rate)
        guard start.isNumeric else { throw .notNumeric(field: "start") }
        self.wall = wall
        self.version = version
        self.epoch = epoch
        segments = [
            TimelineSegment(from: start, playlist: playlist, origin: PlaylistPoint(entry: 0), rate: rate, isPlaying: true)
        ]
    }

    /// When the timeline starts.
    public var start: MediaTime { segments[0].from }

    /// The segment in force at `hostTime` (the first one before the start).
    public func segment(at hostTime: MediaTime) -> TimelineSegment {
        segments.last { $0.from <= hostTime } ?? segments[0]
    }

    /// Whether `other` may replace this timeline on a node: same wall, newer version.
    public func check(replacement other: Timeline) throws(TimelineError) {
        guard other.wall == wall else { throw .otherWall(expected: wall, got: other.wall) }
        guard other.version > version else { throw .notNewer(version: other.version, current: version) }
    }

    /// Drops the segments no time from `hostTime` on needs.
    public mutating func forget(before hostTime: MediaTime) {
        guard let keep = segments.lastIndex(where: { $0.from <= hostTime }), keep > 0 else { return }
        segments.removeFirst(keep)
    }

    static func check(_ rate: PlaybackRate) throws(TimelineError) {
        let magnitude = abs(Double(rate.numerator) / Double(rate.denominator))
        guard rate.numerator != 0, magnitude >= 1.0 / 16, magnitude <= 16 else { throw .invalidRate(rate) }
    }

    /// Supersedes every segment from `segment.from` on with `segment`.
    mutating func replaceSegments(with segment: TimelineSegment) {
        segments = segments.filter { $0.from < segment.from } + [segment]
    }
}

/// A stretch of the timeline from one host time to the next segment's: where in which playlist it
/// starts, at what rate, playing or paused.
public struct TimelineSegment: Hashable, Sendable, Codable {
    /// Master-clock host time from which this segment holds.
    public var from: MediaTime
    public var playlist: Playlist
    /// The playlist point shown at `from`.
    public var origin: PlaylistPoint
    public var rate: PlaybackRate
    public var isPlaying: Bool
}
