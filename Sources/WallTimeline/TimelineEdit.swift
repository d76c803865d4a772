import LockstepTime

/// A change to what the wall shows, taking effect at a master time: each makes a new version.
///
/// Every verb of the wall is one: `wallctl play` makes a new timeline, every other command an edit
/// of the one the nodes hold, so that a node that restarts after any of them computes the same
/// picture as the others.
public enum TimelineEdit: Hashable, Sendable, Codable {
    /// Freeze on the frame shown at the edit's time.
    case pause
    /// Play on from where the wall is paused (or stopped).
    case resume
    /// Go to `itemTime` of entry `entry` (its first pass), keeping playing or paused.
    case seek(entry: Int, itemTime: MediaTime)
    case rate(PlaybackRate)
    /// The next entry's start (after the last, the first when the playlist loops).
    case next
    /// The previous entry's start (before the first, the last when the playlist loops).
    case previous
    case goTo(entry: Int)
    /// A new playlist from its first entry.
    case replacePlaylist(Playlist)
    /// Between shows: each screen shows its configured still, or black. The playlist waits where it
    /// was, for a resume.
    case stop
    case black
    /// An image from the media roots, each screen its tile of it.
    case still(image: String)
    /// Each screen's test card for `duration`, then what was on before, from where it was.
    case identify(duration: MediaTime)
    /// The show-control cue `name`: a cut to its target, then what it says follows (`Cue`).
    case cue(name: String, Cue)
}

extension Timeline {
    /// This timeline with `edit` taking effect at `hostTime` (at the start, if that is later), as
    /// the next version. It supersedes whatever was scheduled from its time on: the latest command
    /// wins, as an operator expects.
    public func applying(_ edit: TimelineEdit, at requested: MediaTime) throws(TimelineError) -> Timeline {
        guard requested.isNumeric else { throw .notNumeric(field: "hostTime") }
        let hostTime = MediaTime.maximum(TimelineLimits.nanoseconds(requested), start)
        guard TimelineLimits.hostTimes.contains(hostTime) else { throw .outOfBounds(field: "hostTime", hostTime) }
        // What holds just before the edit: edits scheduled at its time or later are superseded by it.
        var before = self
        before.segments = segments.filter { $0.from < hostTime }
        if before.segments.isEmpty { before.segments = [segments[0]] }
        let now = before.position(at: hostTime)
        let current = before.segment(at: hostTime)
        let here = PlaylistPoint(entry: now.entryIndex, pass: now.pass, offset: now.itemTime - now.entry.inPoint)
        let entries = current.playlist.entries
        let ended = now.state == .ended
        var next = TimelineSegment(
            from: hostTime, show: current.show, playlist: current.playlist, origin: here, rate: current.rate,
            isPlaying: current.isPlaying && !ended)
        var after: TimelineSegment?
        var edit = edit
        if case .cue(_, let cue) = edit, cue.target == .pause || cue.target == .resume {
            edit = cue.target == .pause ? .pause : .resume
        }
        // A pause, a resume, a rate, a seek in it or a test card over a cue's clip leave it the
        // cue's (a cue over it still returns to what the clip interrupted); a verb that moves
        // elsewhere ends it.
        let keepsCue: Bool
        switch edit {
        case .pause, .resume, .rate, .identify: keepsCue = true
        case .seek: keepsCue = current.show == .playlist
        default: keepsCue = false
        }
        if keepsCue {
            next.cue = current.cue
            next.cueThen = current.cueThen
        }
        switch edit {
        case .pause:
            next.isPlaying = false
        case .resume:
            next.show = .playlist
            next.isPlaying = !ended
        case .seek(let index, let itemTime):
            guard entries.indices.contains(index) else { throw .noSuchEntry(index: index, count: entries.count) }
            let entry = entries[index]
            guard itemTime.isNumeric else { throw .notNumeric(field: "itemTime") }
            let itemTime = TimelineLimits.nanoseconds(itemTime)
            guard itemTime >= entry.inPoint, itemTime < entry.outPoint else {
                throw .itemTimeOutsideEntry(index: index, itemTime: itemTime, entry: entry)
            }
            next.show = .playlist
            next.origin = PlaylistPoint(entry: index, offset: itemTime - entry.inPoint)
            next.isPlaying = current.isPlaying
        case .rate(let rate):
            try Self.check(rate)
            next.rate = rate
        case .next:
            guard now.entryIndex + 1 < entries.count || current.playlist.loops else { throw .playlistEnded }
            next.show = .playlist
            next.origin = PlaylistPoint(entry: (now.entryIndex + 1) % entries.count)
            next.isPlaying = current.isPlaying
        case .previous:
            let index = now.entryIndex - 1
            next.show = .playlist
            next.origin = PlaylistPoint(entry: index >= 0 ? index : current.playlist.loops ? entries.count - 1 : 0)
            next.isPlaying = current.isPlaying
        case .goTo(let index):
            guard entries.indices.contains(index) else { throw .noSuchEntry(index: index, count: entries.count) }
            next.show = .playlist
            next.origin = PlaylistPoint(entry: index)
            next.isPlaying = current.isPlaying
        case .replacePlaylist(let playlist):
            try playlist.validate()
            next.show = .playlist
            next.playlist = playlist.normalized()
            next.origin = PlaylistPoint(entry: 0)
            next.isPlaying = current.show == .playlist ? current.isPlaying : true
        case .stop:
            next.show = .stopped
            next.isPlaying = false
        case .black:
            next.show = .black
            next.isPlaying = false
        case .still(let image):
            guard !image.isEmpty else { throw .invalidShow("a still names an image") }
            next.show = .still(image: image)
            next.isPlaying = false
        case .cue(let name, let cue):
            (next, after) = try cueSegments(
                cue, named: name, at: hostTime, before: before, current: current, here: here)
        case .identify(let duration):
            guard duration.isNumeric, TimelineLimits.testCardDurations.contains(duration) else {
                throw .invalidShow(
                    "a test card shows for \(TimelineLimits.testCardDurations.lowerBound.seconds) to "
                        + "\(TimelineLimits.testCardDurations.upperBound.seconds) s, not \(duration.seconds) s")
            }
            next.show = .testCard
            next.isPlaying = false
            // Afterwards, what was on before the card (a card shown over a card restores what was
            // on before the first), from where it was.
            let restored =
                current.show != .testCard ? current : before.segments.last { $0.show != .testCard } ?? current
            after = TimelineSegment(
                from: hostTime + TimelineLimits.nanoseconds(duration), show: restored.show,
                playlist: current.playlist, origin: here, rate: current.rate,
                isPlaying: restored.isPlaying && !ended)
            after?.cue = restored.cue
        }
        if keepsCue, after == nil, var cueAfter = cueAfter(next, before: before, current: current, here: here) {
            // A resume while a cue's clip plays over a paused playlist is meant for the wall: the
            // clip plays on, and the playlist it returns to plays too, from where it was paused.
            if case .resume = edit, cueAfter.show == .playlist { cueAfter.isPlaying = true }
            after = cueAfter
        }
        var edited = self
        edited.version = try nextVersion
        edited.replaceSegments(with: next)
        if let after { edited.segments.append(after) }
        edited = edited.normalized()
        try edited.validate()
        return edited
    }

    /// What follows a cue's clip that `next` plays on (after a pause, a resume, a rate or a seek
    /// in it): the cue's `then` from the clip's end at `next`'s rate; nil when it holds, is paused,
    /// or is no cue's clip.
    private func cueAfter(_ next: TimelineSegment, before: Timeline, current: TimelineSegment, here: PlaylistPoint)
        -> TimelineSegment?
    {
        guard next.cue != nil, let then = next.cueThen, next.show == .playlist, next.isPlaying, !next.playlist.loops,
            let cycle = next.playlist.cycleLength, next.rate.numerator > 0
        else { return nil }
        let remaining = cycle - next.playlist.programTime(of: next.origin)
        let end = next.from + TimelineLimits.nanoseconds((remaining / next.rate.rational).mediaTime)
        let (interrupted, point) = interruption(before: before, current: current, here: here, at: next.from)
        return Self.segment(after: then, interrupted: interrupted, at: point, from: end)
    }
}
