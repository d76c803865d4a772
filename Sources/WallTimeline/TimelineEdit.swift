import LockstepTime

/// A change to what the wall shows, taking effect at a master time: each makes a new version.
public enum TimelineEdit: Hashable, Sendable, Codable {
    /// Freeze on the frame shown at the edit's time.
    case pause
    /// Play on from where the wall is paused.
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
}

extension Timeline {
    /// This timeline with `edit` taking effect at `hostTime` (at the start, if that is later), as
    /// the next version. An edit scheduled at the same time is superseded; one before the last
    /// scheduled edit is refused, so every node applying the same edits gets the same timeline.
    public func applying(_ edit: TimelineEdit, at requested: MediaTime) throws(TimelineError) -> Timeline {
        guard requested.isNumeric else { throw .notNumeric(field: "hostTime") }
        let hostTime = MediaTime.maximum(requested, start)
        let latest = segments[segments.count - 1].from
        guard hostTime >= latest else { throw .editBeforeScheduled(hostTime: hostTime, scheduled: latest) }
        // What holds just before the edit: edits scheduled at its time are superseded by it.
        var before = self
        before.segments = segments.filter { $0.from < hostTime }
        if before.segments.isEmpty { before.segments = [segments[0]] }
        let now = before.position(at: hostTime)
        let current = before.segment(at: hostTime)
        let here = PlaylistPoint(entry: now.entryIndex, pass: now.pass, offset: now.itemTime - now.entry.inPoint)
        let entries = current.playlist.entries
        var next = TimelineSegment(
            from: hostTime, playlist: current.playlist, origin: here, rate: current.rate,
            isPlaying: current.isPlaying && now.state != .ended)
        switch edit {
        case .pause:
            next.isPlaying = false
        case .resume:
            next.isPlaying = now.state != .ended
        case .seek(let index, let itemTime):
            guard entries.indices.contains(index) else { throw .noSuchEntry(index: index, count: entries.count) }
            let entry = entries[index]
            guard itemTime.isNumeric else { throw .notNumeric(field: "itemTime") }
            guard itemTime >= entry.inPoint, itemTime < entry.outPoint else {
                throw .itemTimeOutsideEntry(index: index, itemTime: itemTime, entry: entry)
            }
            next.origin = PlaylistPoint(entry: index, offset: itemTime - entry.inPoint)
            next.isPlaying = current.isPlaying
        case .rate(let rate):
            try Self.check(rate)
            next.rate = rate
        case .next:
            guard now.entryIndex + 1 < entries.count || current.playlist.loops else { throw .playlistEnded }
            next.origin = PlaylistPoint(entry: (now.entryIndex + 1) % entries.count)
            next.isPlaying = current.isPlaying
        case .previous:
            let index = now.entryIndex - 1
            next.origin = PlaylistPoint(entry: index >= 0 ? index : current.playlist.loops ? entries.count - 1 : 0)
            next.isPlaying = current.isPlaying
        case .goTo(let index):
            guard entries.indices.contains(index) else { throw .noSuchEntry(index: index, count: entries.count) }
            next.origin = PlaylistPoint(entry: index)
            next.isPlaying = current.isPlaying
        case .replacePlaylist(let playlist):
            try playlist.validate()
            next.playlist = playlist
            next.origin = PlaylistPoint(entry: 0)
            next.isPlaying = current.isPlaying
        }
        var edited = self
        edited.version += 1
        edited.replaceSegments(with: next)
        return edited
    }
}
