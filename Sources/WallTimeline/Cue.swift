import LockstepTime

/// A show-control cue, as the timeline carries it out: what every screen cuts to, and what follows
/// (`TimelineEdit.cue`). The config names cues (`cues:`); the controller resolves one into this,
/// with its clips' out-points known, and applies it at a master time like any other verb.
public struct Cue: Hashable, Sendable, Codable {
    public enum Target: Hashable, Sendable, Codable {
        /// A point of the playlist the wall plays (the one a cue interrupted): entry `index` from
        /// `itemTime` (its in-point when nil).
        case entry(index: Int, itemTime: MediaTime?)
        /// A clip: the playlist, once, from its first entry.
        case playlist(Playlist)
        /// An image from the media roots, each screen its tile of it.
        case still(image: String)
        case black
        /// Freeze on the frame shown at the cue's time.
        case pause
        /// Play on from where the wall is paused.
        case resume
    }

    /// What follows a clip (or a still or black shown `for` a while).
    public enum After: String, Hashable, Sendable, Codable, CaseIterable {
        /// The playlist the cue interrupted, from where it was (the loop a button interrupts).
        case `return`
        /// The clip's last frame (or the still, or black) stays until the next command.
        case hold
        /// The interrupted playlist's entry after the one it was on; for an entry cue, the playlist
        /// plays on from the cued point.
        case next
    }

    public var target: Target
    public var after: After
    /// For a still or black: how long it shows before `after` takes over (nil: it holds).
    public var duration: MediaTime?

    public init(target: Target, after: After = .return, duration: MediaTime? = nil) {
        self.target = target
        self.after = after
        self.duration = duration
    }
}

extension Timeline {
    /// The segments for `cue` named `name` from `hostTime`: the cut, and what follows when it ends.
    ///
    /// A cue over a cue returns to what the first one interrupted: a visitor who presses a second
    /// button during a clip gets the second clip, then the loop.
    func cueSegments(
        _ cue: Cue, named name: String, at hostTime: MediaTime, before: Timeline, current: TimelineSegment,
        here: PlaylistPoint
    ) throws(TimelineError) -> (cut: TimelineSegment, after: TimelineSegment?) {
        guard !name.isEmpty, name.utf8.count <= TimelineLimits.longestName else {
            throw .invalidName(field: "cue", reason: "1 to \(TimelineLimits.longestName) bytes")
        }
        let (interrupted, interruptedAt) = interruption(before: before, current: current, here: here, at: hostTime)
        var cut = TimelineSegment(
            from: hostTime, show: .playlist, playlist: interrupted.playlist, origin: interruptedAt,
            rate: .normal, isPlaying: true)
        cut.cue = name
        cut.cueThen = cue.after
        // How long the cut lasts before `after` takes over: nil when it holds (or plays on).
        var length: MediaTime?
        switch cue.target {
        case .pause, .resume:
            preconditionFailure("pause and resume cues are the plain edits")
        case .entry(let index, let itemTime):
            let entries = interrupted.playlist.entries
            guard entries.indices.contains(index) else { throw .noSuchEntry(index: index, count: entries.count) }
            let entry = entries[index]
            let start = itemTime.map(TimelineLimits.nanoseconds) ?? entry.inPoint
            guard start.isNumeric, start >= entry.inPoint, start < entry.outPoint else {
                throw .itemTimeOutsideEntry(index: index, itemTime: start, entry: entry)
            }
            if cue.after == .next {
                // The playlist itself, playing on from the cued point: no clip, nothing to return to.
                cut.origin = PlaylistPoint(entry: index, offset: start - entry.inPoint)
                cut.rate = interrupted.rate
                cut.cue = nil
                cut.cueThen = nil
                return (cut, nil)
            }
            var clip = entry
            clip.inPoint = start
            clip.repeats = .times(1)
            cut.playlist = Playlist(entries: [clip], loops: false)
            cut.origin = PlaylistPoint(entry: 0)
            length = clip.duration
        case .playlist(let playlist):
            try playlist.validate()
            var clip = playlist.normalized()
            clip.loops = false
            cut.playlist = clip
            cut.origin = PlaylistPoint(entry: 0)
            length = clip.cycleLength?.mediaTime
            guard length != nil || cue.after == .hold else {
                throw .invalidShow("a cue's clip that returns or moves on must end: no entry may repeat forever")
            }
        case .still(let image):
            guard !image.isEmpty else { throw .invalidShow("a still names an image") }
            cut.show = .still(image: image)
            cut.isPlaying = false
            length = cue.duration
        case .black:
            cut.show = .black
            cut.isPlaying = false
            length = cue.duration
        }
        if let duration = cue.duration {
            guard duration.isNumeric, TimelineLimits.testCardDurations.contains(duration) else {
                throw .invalidShow(
                    "a cue shows for \(TimelineLimits.testCardDurations.lowerBound.seconds) to "
                        + "\(TimelineLimits.testCardDurations.upperBound.seconds) s, not \(duration.seconds) s")
            }
        }
        guard let length else { return (cut, nil) }
        return (
            cut,
            Self.segment(
                after: cue.after, interrupted: interrupted, at: interruptedAt,
                from: hostTime + TimelineLimits.nanoseconds(length))
        )
    }

    /// What a cue at `hostTime` interrupts, and where it stood then: the segment before the first
    /// of the cues running back to back up to now (a cue's clip paused or at another rate is still
    /// the cue's).
    func interruption(before: Timeline, current: TimelineSegment, here: PlaylistPoint, at hostTime: MediaTime)
        -> (segment: TimelineSegment, point: PlaylistPoint)
    {
        guard current.cue != nil, let firstCue = before.segments.lastIndex(where: { $0.cue == nil }) else {
            return (current, here)
        }
        var interrupted = before.segments[firstCue]
        var prior = before
        prior.segments = Array(before.segments[...firstCue])
        let cueStart = before.segments.indices.contains(firstCue + 1) ? before.segments[firstCue + 1].from : hostTime
        let then = prior.position(at: cueStart)
        if then.state == .ended { interrupted.isPlaying = false }
        return (
            interrupted,
            PlaylistPoint(entry: then.entryIndex, pass: then.pass, offset: then.itemTime - then.entry.inPoint)
        )
    }

    /// What follows a cue's cut that ends at `end`, by `kind`: nil when the cut holds.
    static func segment(
        after kind: Cue.After, interrupted: TimelineSegment, at interruptedAt: PlaylistPoint, from end: MediaTime
    ) -> TimelineSegment? {
        guard kind != .hold else { return nil }
        var after = TimelineSegment(
            from: end, show: interrupted.show, playlist: interrupted.playlist, origin: interruptedAt,
            rate: interrupted.rate, isPlaying: interrupted.isPlaying)
        if kind == .next {
            let entries = interrupted.playlist.entries
            after.show = .playlist
            after.isPlaying = true
            if interruptedAt.entry + 1 < entries.count || interrupted.playlist.loops {
                after.origin = PlaylistPoint(entry: (interruptedAt.entry + 1) % entries.count)
            } else {
                // After the last entry of a playlist that ends: its last frame.
                let last = entries.count - 1
                after.origin = PlaylistPoint(
                    entry: last, pass: (entries[last].passCount ?? 1) - 1, offset: entries[last].duration)
                after.isPlaying = false
            }
        }
        return after
    }
}
