import LockstepTime

/// What the timeline calls for at one master time: which entry, where in its media, at what rate.
public struct TimelinePosition: Hashable, Sendable {
    public enum State: String, Hashable, Sendable, Codable {
        /// Before the timeline's start: show the first frame, prerolled, and wait.
        case waiting
        case playing
        case paused
        /// A playlist that does not loop has ended: hold its last frame.
        case ended
        /// Something else is on the screens (`TimelineShow`): the playlist waits where it was.
        case stopped
        case black
        case still
        case testCard
    }

    public var state: State
    /// What the screens show.
    public var show: TimelineShow
    public var entryIndex: Int
    public var entry: TimelineEntry
    /// Which pass of the entry (0 for the first).
    public var pass: Int
    /// How many whole cycles of a looping playlist came before.
    public var cycle: Int128
    /// Where in the entry's media: its in-point plus the time into this pass.
    public var itemTime: MediaTime
    public var rate: PlaybackRate
    /// The host time at which this pass began, or would have at the current rate.
    public var passStart: MediaTime
    /// The host time at which the next pass or entry begins while playing forward, if it ends: the
    /// first whole nanosecond at which the wall is on it (at a rate other than 1 the exact time may
    /// fall between two).
    public var passEnd: MediaTime?
}

extension Timeline {
    /// Where the wall is at `hostTime` on the master clock (a time outside the timeline's bounds,
    /// `TimelineLimits.hostTimes`, counts as the nearest bound).
    public func position(at requested: MediaTime) -> TimelinePosition {
        let hostTime = TimelineLimits.clampedHostTime(requested)
        let segment = segment(at: hostTime)
        let playlist = segment.playlist
        let originTime = playlist.programTime(of: segment.origin)
        let waiting = hostTime < segment.from
        let moving = segment.isPlaying && !waiting
        let elapsed = moving ? (Rational(hostTime) - Rational(segment.from)) * segment.rate.rational : .zero
        let (point, cycle, ended) = playlist.locate(originTime + elapsed)
        let entry = playlist.entries[point.entry]
        let rate = segment.rate.rational
        // Host times of this pass's start and end at the segment's rate, from the segment's anchor.
        let passStartProgram =
            playlist.programTime(of: PlaylistPoint(entry: point.entry, pass: point.pass))
            + (playlist.cycleLength ?? .zero) * Rational(cycle)
        let hostAt = { (program: Rational) -> Rational in Rational(segment.from) + (program - originTime) / rate }
        let state: TimelinePosition.State
        switch segment.show {
        case .playlist: state = ended ? .ended : waiting ? .waiting : segment.isPlaying ? .playing : .paused
        case .stopped: state = .stopped
        case .black: state = .black
        case .still: state = .still
        case .testCard: state = .testCard
        }
        let forward = segment.rate.numerator > 0
        return TimelinePosition(
            state: state, show: segment.show, entryIndex: point.entry, entry: entry, pass: point.pass, cycle: cycle,
            itemTime: entry.inPoint + point.offset, rate: segment.rate,
            passStart: hostAt(passStartProgram).mediaTime,
            passEnd: segment.show == .playlist && segment.isPlaying && forward && !ended
                ? hostAt(passStartProgram + entry.passLength).mediaTimeRoundedUp : nil)
    }
}
