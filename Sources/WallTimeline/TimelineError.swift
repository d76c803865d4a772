import LockstepTime

/// Why a timeline or an edit cannot be what it asks; each case reads as a sentence.
public enum TimelineError: Error, Hashable, CustomStringConvertible {
    case emptyPlaylist
    case invalidEntry(index: Int, reason: String)
    case invalidRate(PlaybackRate)
    case notNumeric(field: String)
    case noSuchEntry(index: Int, count: Int)
    case itemTimeOutsideEntry(index: Int, itemTime: MediaTime, entry: TimelineEntry)
    case editBeforeScheduled(hostTime: MediaTime, scheduled: MediaTime)
    case otherWall(expected: String, got: String)
    case notNewer(version: UInt64, current: UInt64)
    case playlistEnded
    case noSegments
    case segmentsOutOfOrder(at: MediaTime)

    public var description: String {
        switch self {
        case .emptyPlaylist:
            return "the playlist has no entries"
        case .invalidEntry(let index, let reason):
            return "playlist entry \(index): \(reason)"
        case .invalidRate(let rate):
            return "rate \(rate) is not one a wall plays at (1/16 to 16 in magnitude, not 0: to stop, pause)"
        case .notNumeric(let field):
            return "\(field) must be a number of seconds"
        case .noSuchEntry(let index, let count):
            return "there is no entry \(index): the playlist has \(count) (0 to \(count - 1))"
        case .itemTimeOutsideEntry(let index, let itemTime, let entry):
            return
                "item time \(itemTime.seconds) s is not within entry \(index), which plays \(entry.inPoint.seconds) s "
                + "to \(entry.outPoint.seconds) s of its media"
        case .editBeforeScheduled(let hostTime, let scheduled):
            return
                "an edit at \(hostTime.seconds) s comes before one already scheduled at \(scheduled.seconds) s: "
                + "edits take effect in order"
        case .otherWall(let expected, let got):
            return "the timeline is for wall \"\(got)\", this is wall \"\(expected)\""
        case .notNewer(let version, let current):
            return "timeline version \(version) is not newer than the version \(current) in force"
        case .playlistEnded:
            return "the playlist has ended and does not loop: there is no next entry"
        case .noSegments:
            return "the timeline has no segments"
        case .segmentsOutOfOrder(let from):
            return "the timeline's segment from \(from.seconds) s is not after the one before it"
        }
    }
}
